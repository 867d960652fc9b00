//! `/`: the runs of the state directory, newest first, with filters (task, outcome,
//! pipeline) as a plain GET form.

use std::fmt::Write;

use jiff::Timestamp;
use spur_engine::run::runs_list::RunSummary;

use crate::age::age;
use crate::form;
use crate::html::{escape, escape_into, outcome_badge, page, url_segment, Section};

/// The outcomes a filter can ask for, as `spur runs --status` takes them.
const OUTCOMES: [&str; 6] = [
    "done",
    "completed",
    "failed",
    "paused",
    "interrupted",
    "running",
];

/// Which runs the page shows: the query string's `task`, `status` and `pipeline`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only the runs of this task.
    pub task: Option<String>,
    /// Only the runs with this outcome.
    pub status: Option<String>,
    /// Only the runs of this pipeline (its name).
    pub pipeline: Option<String>,
}

impl RunFilter {
    /// The filter a query string (without its `?`) asks for; empty values ask for nothing.
    pub fn from_query(query: &str) -> RunFilter {
        let pairs = form::pairs(query);
        let get = |k: &str| {
            form::value(&pairs, k)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        RunFilter {
            task: get("task"),
            status: get("status"),
            pipeline: get("pipeline"),
        }
    }

    /// Whether `run` passes.
    pub fn admits(&self, run: &RunSummary) -> bool {
        self.task
            .as_deref()
            .is_none_or(|t| run.wbs.as_deref() == Some(t))
            && self.status.as_deref().is_none_or(|s| run.outcome == s)
            && self.pipeline.as_deref().is_none_or(|p| run.pipeline == p)
    }
}

/// The runs page over `runs` (newest first, as `list_runs` gives them), ages at `now`.
pub fn render_runs_page(runs: &[RunSummary], filter: &RunFilter, now: Timestamp) -> String {
    let shown: Vec<&RunSummary> = runs.iter().filter(|r| filter.admits(r)).collect();
    let mut body = String::with_capacity(256 + shown.len() * 420);
    body.push_str("<h1>Runs</h1>");
    body.push_str("<form class=\"filters\" method=\"get\" action=\"/\">");
    let _ = write!(
        body,
        "<label>Task<br><input name=\"task\" value=\"{}\" size=\"10\"></label>",
        escape(filter.task.as_deref().unwrap_or(""))
    );
    let _ = write!(
        body,
        "<label>Pipeline<br><input name=\"pipeline\" value=\"{}\" size=\"16\"></label>",
        escape(filter.pipeline.as_deref().unwrap_or(""))
    );
    body.push_str("<label>Outcome<br><select name=\"status\"><option value=\"\">any</option>");
    for o in OUTCOMES {
        let selected = if filter.status.as_deref() == Some(o) {
            " selected"
        } else {
            ""
        };
        let _ = write!(body, "<option{selected}>{o}</option>");
    }
    body.push_str("</select></label><button type=\"submit\">Filter</button></form>");
    let _ = write!(
        body,
        "<p class=\"muted\">{} of {} runs</p>",
        shown.len(),
        runs.len()
    );
    body.push_str("<table id=\"runs\"><thead><tr><th>Run</th><th>Pipeline</th><th>Task</th><th>State</th><th>Outcome</th><th>Reason</th><th>Age</th></tr></thead><tbody>");
    for r in shown {
        body.push_str("<tr data-run=\"");
        escape_into(&mut body, &r.run_id);
        body.push_str("\"><td><a href=\"/runs/");
        body.push_str(&url_segment(&r.run_id));
        body.push_str("\"><code>");
        escape_into(&mut body, &r.run_id);
        body.push_str("</code></a></td><td>");
        escape_into(&mut body, &r.pipeline);
        body.push_str("</td><td>");
        escape_into(&mut body, r.wbs.as_deref().unwrap_or("–"));
        body.push_str("</td><td>");
        escape_into(&mut body, r.state.as_deref().unwrap_or("–"));
        body.push_str("</td><td>");
        body.push_str(&outcome_badge(&r.outcome));
        if r.outcome == "paused" {
            body.push_str(" <a href=\"/runs/");
            body.push_str(&url_segment(&r.run_id));
            body.push_str("#question\">answer</a>");
        }
        body.push_str("</td><td>");
        escape_into(&mut body, r.reason.as_deref().unwrap_or("–"));
        body.push_str("</td><td title=\"");
        escape_into(&mut body, &r.started_at);
        body.push_str("\">");
        escape_into(&mut body, &age(&r.started_at, now));
        body.push_str("</td></tr>");
    }
    body.push_str("</tbody></table>");
    page(Section::Runs, "Runs", &body, Some(""))
}
