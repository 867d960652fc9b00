//! `/runs/RUN`: one run. Its facts, the question it waits on (choices as buttons that post
//! the answer), its pipeline's graph with the path it took and the state it is in, the
//! done-gate decisions with their verdicts, the guards that did not pass and why, each
//! action with the end of its log, and the journal as a timeline that the page's script
//! extends as records are written.

use std::fmt::Write;
use std::path::Path;

use spur_engine::run::journal::{Event, Record};
use spur_engine::run::question::Pending;
use spur_engine::run::runs_list::RunSummary;

use crate::html::{escape, escape_into, outcome_badge, page, url_segment, Section};
use crate::log_tail;

/// What the run page shows, read by the server.
pub(crate) struct RunView<'a> {
    pub(crate) summary: &'a RunSummary,
    pub(crate) records: &'a [Record],
    /// The drawing of its pipeline with its path, or why there is none.
    pub(crate) graph: Result<String, String>,
    pub(crate) pending: Option<Pending>,
    /// A note on the journal's seals (cannot be verified, unkeyed).
    pub(crate) journal_note: Option<String>,
    pub(crate) run_dir: &'a Path,
    pub(crate) csrf: &'a str,
    /// What went wrong with an answer just given.
    pub(crate) answer_error: Option<String>,
}

pub(crate) fn render(view: &RunView<'_>) -> String {
    let s = view.summary;
    let mut body = String::with_capacity(16 * 1024);
    let _ = write!(body, "<h1>Run <code>{}</code></h1>", escape(&s.run_id));
    body.push_str("<table class=\"facts\" id=\"facts\">");
    let row = |body: &mut String, k: &str, v: &str| {
        let _ = write!(body, "<tr><th>{k}</th><td>{v}</td></tr>");
    };
    row(&mut body, "Pipeline", &escape(&s.pipeline));
    row(&mut body, "Task", &escape(s.wbs.as_deref().unwrap_or("–")));
    row(&mut body, "Outcome", &outcome_badge(&s.outcome));
    row(
        &mut body,
        "State",
        &format!(
            "<span id=\"current-state\">{}</span>",
            escape(s.state.as_deref().unwrap_or("–"))
        ),
    );
    row(
        &mut body,
        "Reason",
        &escape(s.reason.as_deref().unwrap_or("–")),
    );
    row(&mut body, "Started", &escape(&s.started_at));
    if let Some(note) = &view.journal_note {
        row(
            &mut body,
            "Journal",
            &format!("<span class=\"bad\">{}</span>", escape(note)),
        );
    }
    body.push_str("</table>");

    if let Some(e) = &view.answer_error {
        let _ = write!(
            body,
            "<p class=\"bad\" id=\"answer-error\">{}</p>",
            escape(e)
        );
    }
    if let Some(p) = &view.pending {
        question(&mut body, &s.run_id, p, view.csrf);
    }

    body.push_str("<h2>Graph</h2>");
    match &view.graph {
        Ok(svg) => {
            let _ = write!(body, "<div class=\"graph\" id=\"graph\">{svg}</div>");
        }
        Err(why) => {
            let _ = write!(
                body,
                "<p class=\"muted\" id=\"graph\">The pipeline cannot be drawn: {}</p>",
                escape(why)
            );
        }
    }
    gates(&mut body, view.records);
    guards(&mut body, view.records);
    actions(&mut body, view.records, view.run_dir);
    timeline(&mut body, &s.run_id, view.records);
    // From the last record shown: the stream sends only what the page does not have.
    let last = view.records.last().map_or(0, |r| r.seq);
    let live = format!("?run={}&after={last}", url_segment(&s.run_id));
    page(
        Section::Runs,
        &format!("Run {}", s.run_id),
        &body,
        Some(&live),
    )
}

fn question(body: &mut String, run_id: &str, pending: &Pending, csrf: &str) {
    body.push_str("<section class=\"question\" id=\"question\">");
    let _ = write!(
        body,
        "<form method=\"post\" action=\"/runs/{}/answer\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        url_segment(run_id),
        escape(csrf)
    );
    match &pending.question {
        Some(q) => {
            let _ = write!(
                body,
                "<p><strong>Waiting for an answer</strong> in <code>{}</code>: <span id=\"prompt\">{}</span></p>",
                escape(&pending.state),
                escape(&q.prompt)
            );
            if q.choices.is_empty() {
                body.push_str("<input name=\"answer\" id=\"answer-text\" required size=\"40\"> <button type=\"submit\">Answer</button>");
            } else {
                for c in &q.choices {
                    let _ = write!(
                        body,
                        "<button type=\"submit\" name=\"answer\" value=\"{}\" data-choice=\"{}\">{}</button>",
                        escape(c),
                        escape(c),
                        escape(c)
                    );
                }
            }
        }
        None => {
            let _ = write!(
                body,
                "<p><strong>Paused</strong> in <code>{}</code> for the operator.</p><button type=\"submit\" name=\"answer\" value=\"\" data-choice=\"\">Continue</button>",
                escape(&pending.state)
            );
        }
    }
    body.push_str("</form><p class=\"muted\">Answering runs <code>spur continue RUN --answer A</code>.</p></section>");
}

fn gates(body: &mut String, records: &[Record]) {
    let decisions: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::DoneGate {
                state,
                decision,
                verdict,
                message,
                forced,
                ..
            } => Some((r, state, decision, verdict, message, forced)),
            _ => None,
        })
        .collect();
    if decisions.is_empty() {
        return;
    }
    body.push_str("<h2>Done gate</h2><table id=\"gate\"><tr><th>#</th><th>State</th><th>Decision</th><th>Verdict</th><th>Message</th></tr>");
    for (r, state, decision, verdict, message, forced) in decisions {
        let decision = serde_json::to_value(decision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let class = if decision == "deny" { "bad" } else { "ok" };
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td class=\"{class}\">{}{}</td><td>{}</td><td>{}</td></tr>",
            r.seq,
            escape(state),
            escape(&decision),
            if *forced { " (forced)" } else { "" },
            escape(verdict.as_deref().unwrap_or("–")),
            escape(message.as_deref().unwrap_or(""))
        );
    }
    body.push_str("</table>");
}

fn guards(body: &mut String, records: &[Record]) {
    let failed: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::GuardEvaluated {
                state,
                to,
                kind,
                passed: false,
                detail,
                ..
            } => Some((r.seq, state, to, kind, detail)),
            _ => None,
        })
        .collect();
    if failed.is_empty() {
        return;
    }
    body.push_str("<h2>Guards that did not pass</h2><table id=\"guards\"><tr><th>#</th><th>From</th><th>To</th><th>Guard</th><th>Why</th></tr>");
    for (seq, state, to, kind, detail) in failed {
        let _ = write!(
            body,
            "<tr><td>{seq}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(state),
            escape(to),
            escape(kind),
            escape(detail.as_deref().unwrap_or("it did not pass"))
        );
    }
    body.push_str("</table>");
}

fn actions(body: &mut String, records: &[Record], run_dir: &Path) {
    let started: Vec<_> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ActionStarted {
                state,
                index,
                kind,
                log,
                phase,
                ..
            } => Some((r.seq, state, *index, *phase, kind, log)),
            _ => None,
        })
        .collect();
    if started.is_empty() {
        return;
    }
    body.push_str("<h2>Actions</h2><div id=\"actions\">");
    for (seq, state, index, phase, kind, log) in started {
        let finished = records.iter().find_map(|r| match &r.event {
            Event::ActionFinished {
                state: s,
                index: i,
                phase: p,
                ok,
                error,
                message,
                duration_ms,
                ..
            } if r.seq > seq && s == state && *i == index && *p == phase => {
                Some((*ok, error, message, *duration_ms))
            }
            _ => None,
        });
        let status = match &finished {
            Some((true, _, _, ms)) => format!("<span class=\"ok\">ok</span> in {ms} ms"),
            Some((false, _, _, ms)) => format!("<span class=\"bad\">failed</span> after {ms} ms"),
            None => "<span class=\"muted\">not finished</span>".to_owned(),
        };
        let _ = write!(
            body,
            "<h3><code>{}[{index}]</code> {} — {status}</h3>",
            escape(state),
            escape(kind)
        );
        if let Some((_, error, message, _)) = &finished {
            for line in [error.as_deref(), message.as_deref()].into_iter().flatten() {
                let _ = write!(body, "<p>{}</p>", escape(line));
            }
        }
        if let Some(log) = log {
            match log_tail::tail(run_dir, log) {
                Ok(text) if text.is_empty() => body.push_str("<p class=\"muted\">(empty log)</p>"),
                Ok(text) => {
                    body.push_str("<pre class=\"log\">");
                    escape_into(body, &text);
                    body.push_str("</pre>");
                }
                Err(why) => {
                    let _ = write!(
                        body,
                        "<p class=\"muted\">log {}: {}</p>",
                        escape(log),
                        escape(&why)
                    );
                }
            }
        }
    }
    body.push_str("</div>");
}

fn timeline(body: &mut String, run_id: &str, records: &[Record]) {
    let _ = write!(
        body,
        "<h2>Journal</h2><ol class=\"timeline\" id=\"timeline\" data-run=\"{}\">",
        escape(run_id)
    );
    for r in records {
        let mut fields = serde_json::to_value(&r.event).unwrap_or_default();
        if let Some(map) = fields.as_object_mut() {
            map.remove("event");
        }
        let _ = write!(
            body,
            "<li value=\"{}\"><span class=\"muted\">{}</span> <strong>{}</strong> <code>{}</code></li>",
            r.seq,
            escape(&r.at),
            escape(r.event.name()),
            escape(&fields.to_string())
        );
    }
    body.push_str("</ol>");
}
