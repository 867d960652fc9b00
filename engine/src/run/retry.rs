//! `spur retry`: where a failed run goes on. The state whose action failed (or whose
//! guards all failed, or where the gate denied or the iteration bound was reached), or,
//! when the run ended in a failure terminal, the state it left to get there. The runner
//! journals `retried` with it, and the resume check accepts a `retried` only at that state.

use super::outcome::{Outcome, StopReason};
use super::replay::Position;
use crate::pipeline::Pipeline;

/// The state a retry of the run at `p` re-enters, or why it cannot be retried. With the
/// pipeline, an end in any terminal state goes back to the state the run left for it;
/// without (the pipeline changed), an end in a failure state does.
pub(crate) fn retry_state(p: &Position, pipeline: Option<&Pipeline>) -> Result<String, String> {
    let Some(finished) = &p.finished else {
        let what = if p.paused.is_some() {
            "it is paused: `spur continue` resumes it"
        } else if p.interrupted {
            "it was interrupted: `spur continue` resumes it"
        } else {
            "it has not finished: `spur continue` resumes a run that stopped"
        };
        return Err(what.to_owned());
    };
    if finished.outcome != Outcome::Failed {
        return Err(format!(
            "it ended {} at {:?}: only a failed run is retried",
            finished.outcome, finished.state
        ));
    }
    let in_terminal = match pipeline {
        Some(pipeline) => pipeline.is_terminal(&finished.state),
        None => finished.reason == StopReason::FailureState,
    };
    if !in_terminal {
        return Ok(finished.state.clone());
    }
    match p.transitions.last() {
        Some(t) if t.to == finished.state => Ok(t.from.clone()),
        _ => Err(format!(
            "it ended in {:?}, a terminal state it started in: there is no state before it to go on from",
            finished.state
        )),
    }
}
