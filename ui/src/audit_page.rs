//! `/audit`: the audit log of forced overrides and the state of its chain, as
//! `spur audit verify --json` and `spur audit list --json` say them.

use std::fmt::Write;

use crate::html::{escape, page, Section};

/// The page over the two documents (either may be an error to show).
pub(crate) fn render(
    verify: &Result<serde_json::Value, String>,
    list: &Result<serde_json::Value, String>,
) -> String {
    let mut body = String::from("<h1>Audit</h1>");
    match verify {
        Ok(v) => {
            let flag = |k: &str| {
                v.get(k)
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false)
            };
            let count = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
            let (class, status) = match (flag("intact"), flag("verified")) {
                (true, true) => ("ok", "intact and verified"),
                (true, false) => ("bad", "intact, but some records cannot be verified"),
                _ => ("bad", "broken or tampered"),
            };
            let _ = write!(
                body,
                "<p id=\"chain\" data-intact=\"{}\">Chain: <span class=\"{class}\">{status}</span> — {} records ({} unkeyed)</p>",
                flag("intact"),
                count("records"),
                count("unkeyed")
            );
            if let Some(broken) = v.get("broken").filter(|b| !b.is_null()) {
                let _ = write!(
                    body,
                    "<p class=\"bad\">First broken line: <code>{}</code></p>",
                    escape(&broken.to_string())
                );
            }
            let tampered: Vec<&serde_json::Value> = v
                .get("tasks")
                .and_then(serde_json::Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .filter(|t| {
                            t.get("certification").and_then(|c| c.as_str()) == Some("tampered")
                        })
                        .collect()
                })
                .unwrap_or_default();
            for t in tampered {
                let _ = write!(
                    body,
                    "<p class=\"tampered\">Task {} is tampered: {}</p>",
                    escape(t.get("wbs").and_then(|w| w.as_str()).unwrap_or("?")),
                    escape(t.get("detail").and_then(|w| w.as_str()).unwrap_or(""))
                );
            }
        }
        Err(e) => {
            let _ = write!(
                body,
                "<p class=\"bad\">Cannot check the audit log: {}</p>",
                escape(e)
            );
        }
    }
    body.push_str("<h2>Forced overrides</h2>");
    match list {
        Ok(serde_json::Value::Array(records)) if records.is_empty() => {
            body.push_str("<p class=\"muted\">None recorded.</p>");
        }
        Ok(serde_json::Value::Array(records)) => {
            body.push_str("<table id=\"audit\"><tr><th>Time</th><th>Task</th><th>By</th><th>Run</th><th>Reason</th><th>Verdict</th></tr>");
            for r in records {
                let f = |k: &str| escape(r.get(k).and_then(|v| v.as_str()).unwrap_or("–"));
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    f("time"),
                    f("wbs"),
                    f("user"),
                    f("runId"),
                    f("reason"),
                    f("effectiveVerdict")
                );
            }
            body.push_str("</table>");
        }
        Ok(other) => {
            let _ = write!(body, "<pre>{}</pre>", escape(&other.to_string()));
        }
        Err(e) => {
            let _ = write!(body, "<p class=\"bad\">{}</p>", escape(e));
        }
    }
    page(Section::Audit, "Audit", &body, None)
}
