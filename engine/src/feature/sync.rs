//! `spur feature sync`: the status a feature's tasks say it should have — the reference's
//! derivation (all linked tasks done → done; work started → active; reopened work →
//! active again, only with `--force`). The CLI applies the proposal as lifecycle requests,
//! so every hop passes its guards and the done check.

use serde::Serialize;

use super::linked_tasks::LinkedTask;

/// What the tasks say the feature's status should be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// The feature.
    pub feature_id: String,
    /// Its status now.
    pub from: String,
    /// The status proposed (the same when nothing should change).
    pub to: String,
    /// Why, for people.
    pub reason: String,
    /// Moving back from verifying or done: applied only with `--force`.
    pub reopen: bool,
}

/// Derive the proposal for feature `id` in status `from` from its `tasks`.
pub fn propose(id: &str, from: &str, tasks: &[LinkedTask]) -> Proposal {
    let live: Vec<&LinkedTask> = tasks.iter().filter(|t| !t.is_cancelled()).collect();
    let done = live.iter().filter(|t| t.certified_done).count();
    let started = live
        .iter()
        .filter(|t| matches!(t.status.as_str(), "wip" | "testing" | "blocked" | "done"))
        .count();
    let (to, reason) = if live.is_empty() {
        (
            from.to_owned(),
            if tasks.is_empty() {
                "no linked tasks".to_owned()
            } else {
                "every linked task is cancelled".to_owned()
            },
        )
    } else if done == live.len() {
        (
            "done".to_owned(),
            format!(
                "all {} linked task(s) are done through the done gate",
                live.len()
            ),
        )
    } else if started > 0 || matches!(from, "verifying" | "done") {
        (
            "active".to_owned(),
            format!("{done} of {} linked task(s) done; work open", live.len()),
        )
    } else {
        (
            from.to_owned(),
            format!("none of {} linked task(s) started", live.len()),
        )
    };
    // Only forward from backlog; back from verifying/done is a reopen.
    let to = if from == "cancelled" {
        from.to_owned()
    } else {
        to
    };
    let reopen = matches!(from, "verifying" | "done") && to == "active";
    Proposal {
        feature_id: id.to_owned(),
        from: from.to_owned(),
        to,
        reason,
        reopen,
    }
}
