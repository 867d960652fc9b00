//! Which status changes the task lifecycle allows: the graph of the reference's
//! `task-lifecycle.yaml` (backlog → todo → wip → testing → done; blocked to and from the
//! active statuses; done reopened to wip; cancelled from anywhere but done, and final).
//!
//! One function, [`lifecycle_allows`], so that the lifecycle pipeline instance (an external
//! transition of a long-lived run per task) can take its place without touching callers.
//! It rules on the graph only; the structural check for testing and done and the done gate
//! for done are the caller's next steps, whatever this says.

use crate::diagnostic::{coded_diagnostic, Code};

use super::status_name::canonical_status;

/// Every edge of the lifecycle graph, `from → to`.
const EDGES: &[(&str, &str)] = &[
    ("backlog", "todo"),
    ("todo", "wip"),
    ("wip", "testing"),
    ("testing", "done"),
    ("done", "wip"),
    ("todo", "blocked"),
    ("blocked", "todo"),
    ("wip", "blocked"),
    ("blocked", "wip"),
    ("testing", "blocked"),
    ("blocked", "testing"),
    ("backlog", "cancelled"),
    ("todo", "cancelled"),
    ("wip", "cancelled"),
    ("testing", "cancelled"),
    ("blocked", "cancelled"),
];

/// A status change the lifecycle graph has no edge for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the task lifecycle has no transition {from} → {to} ({})",
    reachable(from)
)]
pub struct TransitionDenied {
    /// The status the task is in.
    pub from: String,
    /// The status asked for.
    pub to: String,
}

coded_diagnostic! {
    TransitionDenied {
        Self { .. } => Code::TaskTransitionDenied,
            help("move through the lifecycle one edge at a time (backlog → todo → wip → testing → done); `--no-lifecycle` skips this graph, never the structural check or the done gate");
    }
}

fn reachable(from: &str) -> String {
    let next: Vec<&str> = EDGES
        .iter()
        .filter(|(f, _)| Some(*f) == canonical_status(from))
        .map(|(_, t)| *t)
        .collect();
    if next.is_empty() {
        format!("{from} is final")
    } else {
        format!("from {from}: {}", next.join(", "))
    }
}

/// Whether the lifecycle allows `from → to` (both canonical, or aliases of them). Staying
/// in a status is allowed (nothing happens). A `from` outside the lifecycle (a status
/// written before the task had a task file, such as `review`) has no edges of its own: it
/// may go to any status but `done`, which is reached from `testing` only.
pub fn lifecycle_allows(from: &str, to: &str) -> Result<(), TransitionDenied> {
    let denied = || TransitionDenied {
        from: from.to_owned(),
        to: to.to_owned(),
    };
    let to_status = canonical_status(to).ok_or_else(denied)?;
    let Some(from_status) = canonical_status(from) else {
        return if to_status == "done" {
            Err(denied())
        } else {
            Ok(())
        };
    };
    if from_status == to_status || EDGES.contains(&(from_status, to_status)) {
        Ok(())
    } else {
        Err(denied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forward_path_and_its_side_edges_are_allowed() {
        for (from, to) in [
            ("backlog", "todo"),
            ("todo", "wip"),
            ("In-Progress", "testing"),
            ("testing", "done"),
            ("done", "wip"),
            ("testing", "blocked"),
            ("blocked", "wip"),
            ("wip", "cancelled"),
            ("wip", "wip"),
            ("review", "wip"),
        ] {
            assert_eq!(lifecycle_allows(from, to), Ok(()), "{from} → {to}");
        }
    }

    #[test]
    fn skipping_a_step_reopening_cancelled_and_done_from_elsewhere_are_denied() {
        for (from, to) in [
            ("todo", "done"),
            ("wip", "done"),
            ("backlog", "wip"),
            ("cancelled", "todo"),
            ("done", "cancelled"),
            ("review", "done"),
            ("wip", "review"),
        ] {
            assert!(lifecycle_allows(from, to).is_err(), "{from} → {to}");
        }
        let denied = lifecycle_allows("wip", "done").unwrap_err();
        assert_eq!(
            denied.to_string(),
            "the task lifecycle has no transition wip → done (from wip: testing, blocked, cancelled)"
        );
        assert_eq!(
            lifecycle_allows("cancelled", "wip")
                .unwrap_err()
                .to_string(),
            "the task lifecycle has no transition cancelled → wip (cancelled is final)"
        );
    }
}
