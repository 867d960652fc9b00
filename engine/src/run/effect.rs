//! The effects a runner asks its host to carry out, described so that any host journals
//! them alike: an action of a state's onEnter or onExit list (between `action-started` and
//! `action-finished`), and a guard's evaluation (`guard-evaluated`).

use super::actions::ActionResult;
use super::journal::{Event, Phase};
use super::vars::Vars;
use spur_guards::GuardResult;

/// One action of a state visit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActionStep<'a> {
    pub(crate) state: &'a str,
    pub(crate) phase: Phase,
    /// Its place in the state's `onEnter` / `onExit` list.
    pub(crate) index: usize,
    pub(crate) kind: &'a str,
    /// How long it may run, in milliseconds (`None`: no limit, or not a process).
    pub(crate) timeout_ms: Option<u64>,
}

impl ActionStep<'_> {
    /// Its log file, relative to the run directory, numbered by the seq its
    /// `action-started` record gets.
    pub(crate) fn log(&self, seq: u64) -> String {
        format!("actions/{seq:04}-{}.log", sanitize(self.kind))
    }

    pub(crate) fn started(&self, log: &str) -> Event {
        Event::ActionStarted {
            state: self.state.to_owned(),
            phase: self.phase,
            index: self.index,
            kind: self.kind.to_owned(),
            log: Some(log.to_owned()),
            timeout_ms: self.timeout_ms,
        }
    }

    /// Vars are recorded only for an action that succeeded: a failed one sets none.
    pub(crate) fn finished(&self, result: &ActionResult, duration_ms: u64) -> Event {
        Event::ActionFinished {
            state: self.state.to_owned(),
            phase: self.phase,
            index: self.index,
            kind: self.kind.to_owned(),
            ok: result.ok,
            error: result.error.clone(),
            timed_out: result.timed_out,
            exit_code: result.exit_code,
            duration_ms,
            set_vars: if result.ok {
                result.set_vars.clone()
            } else {
                Vars::new()
            },
            message: result.message.clone(),
            usage: result.usage.clone(),
            commit: None,
        }
    }
}

/// One guard evaluated while choosing the transition out of a state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardStep<'a> {
    pub(crate) state: &'a str,
    /// Index of the transition in the pipeline's `transitions` list.
    pub(crate) transition: usize,
    pub(crate) to: &'a str,
    /// The guard's kind, `none` for a transition without a guard.
    pub(crate) kind: &'a str,
}

impl GuardStep<'_> {
    pub(crate) fn evaluated(&self, result: &GuardResult, duration_us: u64) -> Event {
        Event::GuardEvaluated {
            state: self.state.to_owned(),
            transition: self.transition,
            to: self.to.to_owned(),
            kind: self.kind.to_owned(),
            passed: result.passed,
            detail: result.detail_if_any().map(str::to_owned),
            duration_us,
        }
    }
}

/// A file-name-safe version of an action kind.
fn sanitize(kind: &str) -> String {
    kind.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_named_by_seq_and_a_file_safe_kind() {
        let step = ActionStep {
            state: "a",
            phase: Phase::Enter,
            index: 0,
            kind: "my plugin/x",
            timeout_ms: None,
        };
        assert_eq!(step.log(7), "actions/0007-my_plugin_x.log");
    }
}
