//! `/tasks`: the task files as a board by status, as `spur task list --json` gives them.
//! Each card says the task's verdict (the artifact's stored one, and the one spur
//! recomputes when they differ), how its done was reached according to the ledger (the
//! gate, an external verdict, a forced override), and its certification, with a
//! tampered ledger or view flagged.

use std::collections::HashMap;
use std::fmt::Write;

use spur_engine::store::certification::{Certification, TaskCheck};
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_view::ChangeVia;
use spur_engine::task::status_name::TASK_STATUSES;
use spur_engine::verdict::{aggregate, read_artifact, ArtifactOutcome};
use spur_engine::wbs::Wbs;

use crate::html::{escape, page, Section};

/// The board over `tasks` (the CLI's JSON array) with each task's ledger check.
pub(crate) fn render(
    tasks: &serde_json::Value,
    checks: &[TaskCheck],
    state_dir: &StateDir,
) -> String {
    let by_wbs: HashMap<String, &TaskCheck> =
        checks.iter().map(|c| (c.wbs.to_string(), c)).collect();
    let empty = Vec::new();
    let tasks = tasks.as_array().unwrap_or(&empty);
    let text = |t: &serde_json::Value, k: &str| {
        t.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut columns: Vec<String> = TASK_STATUSES.iter().map(|s| (*s).to_owned()).collect();
    for t in tasks {
        let status = text(t, "status");
        if !columns.contains(&status) {
            columns.push(status);
        }
    }
    let mut body = String::from("<h1>Tasks</h1>");
    if tasks.is_empty() {
        body.push_str("<p class=\"muted\">No task files under docs/tasks*/.</p>");
    }
    body.push_str("<div class=\"board\" id=\"board\">");
    for column in &columns {
        let cards: Vec<&serde_json::Value> = tasks
            .iter()
            .filter(|t| &text(t, "status") == column)
            .collect();
        let _ = write!(
            body,
            "<section class=\"column\" data-status=\"{}\"><h2>{} <span class=\"muted\">{}</span></h2>",
            escape(column),
            escape(column),
            cards.len()
        );
        for t in cards {
            let wbs = text(t, "wbs");
            let check = by_wbs.get(&wbs).copied();
            card(&mut body, t, &wbs, check, state_dir);
        }
        body.push_str("</section>");
    }
    body.push_str("</div>");
    page(Section::Tasks, "Tasks", &body, None)
}

fn card(
    body: &mut String,
    task: &serde_json::Value,
    wbs: &str,
    check: Option<&TaskCheck>,
    state_dir: &StateDir,
) {
    let name = task.get("name").and_then(|v| v.as_str()).unwrap_or("");
    let listed = task
        .get("certification")
        .and_then(|v| v.as_str())
        .unwrap_or("none");
    let certification = check.map_or(listed, |c| c.certification.as_str());
    let tampered = check.is_some_and(|c| c.certification == Certification::Tampered);
    let _ = write!(
        body,
        "<div class=\"card\" data-wbs=\"{}\" data-certification=\"{}\"><strong>{}</strong> {}",
        escape(wbs),
        escape(certification),
        escape(wbs),
        escape(name)
    );
    let _ = write!(body, "<br>verdict: {}", escape(&verdict(state_dir, wbs)));
    let via = check
        .and_then(|c| c.record.history.last())
        .filter(|h| h.to.as_str() == "done")
        .map(|h| match &h.via {
            ChangeVia::DoneGatePass => "done gate: PASS".to_owned(),
            ChangeVia::DoneGateExternal => "done gate: external verdict".to_owned(),
            ChangeVia::ForcedOverride { reason, .. } => format!("forced: {reason}"),
            other => format!("{other:?}"),
        });
    if let Some(via) = via {
        let _ = write!(body, "<br>gate: {}", escape(&via));
    }
    let _ = write!(body, "<br>certification: {}", escape(certification));
    if tampered {
        let detail = check.and_then(|c| c.detail.as_deref()).unwrap_or("");
        let _ = write!(
            body,
            "<br><span class=\"tampered\" title=\"{}\">⚠ tampered</span>",
            escape(detail)
        );
    }
    body.push_str("</div>");
}

/// The task's verdict: the stored one, with the recomputed one when it is harsher.
fn verdict(state_dir: &StateDir, wbs: &str) -> String {
    let Ok(wbs) = Wbs::parse(wbs) else {
        return "–".into();
    };
    match read_artifact(&state_dir.verdict_path(&wbs)) {
        ArtifactOutcome::Valid(artifact) => {
            let stored = artifact.verdict.as_str();
            let computed = aggregate(&artifact).verdict.as_str();
            if stored == computed {
                stored.to_owned()
            } else {
                format!("{stored} stored, {computed} recomputed")
            }
        }
        ArtifactOutcome::Missing { .. } => "none".into(),
        ArtifactOutcome::Malformed { .. } | ArtifactOutcome::Invalid(_) => {
            "invalid artifact".into()
        }
    }
}
