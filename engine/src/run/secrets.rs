//! A run's secrets (book: *Secrets*): the names marked secret by the pipeline's `secrets:`
//! and by `.spur/config.yaml`'s, and the values they have in this run — a var's value, or
//! for any other name the environment variable spur and its steps see. Steps get the
//! values as before; every journal record passes through [`RunSecrets::event`] before it
//! is written, so the journal, `spur trace`, `spur runs` and the progress lines never hold
//! one, and the run's outcome and action logs are redacted with the same values.

use std::collections::{BTreeMap, BTreeSet};

use super::journal::Event;
use super::vars::Vars;
use crate::pipeline::Pipeline;
use crate::redact::{Redactor, MARKER};

/// The secret names of a run and the values they have had in it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunSecrets {
    names: BTreeSet<String>,
    values: BTreeSet<String>,
    redactor: Redactor,
}

impl RunSecrets {
    /// The secrets of a run of `pipeline` with `config` (the names of `.spur/config.yaml`)
    /// and `vars`: each name's var value, or its environment value when no var has it.
    pub(crate) fn new(pipeline: &Pipeline, config: &[String], vars: &Vars) -> Self {
        let names: BTreeSet<String> = pipeline
            .secrets
            .iter()
            .map(|s| s.value.clone())
            .chain(config.iter().cloned())
            .collect();
        let mut secrets = Self {
            names,
            ..Self::default()
        };
        let values: Vec<String> = secrets
            .names
            .iter()
            .filter_map(|name| match vars.get(name) {
                Some(value) => Some(value.clone()),
                None => std::env::var(name).ok(),
            })
            .collect();
        secrets.learn(values);
        secrets
    }

    /// Whether `name` is secret.
    pub(crate) fn is_secret(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The secret names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Keep these values secret too (a secret var set by an action).
    pub(crate) fn learn(&mut self, values: impl IntoIterator<Item = String>) {
        let before = self.values.len();
        self.values
            .extend(values.into_iter().filter(|v| !v.is_empty()));
        if self.values.len() != before {
            self.redactor = Redactor::new(&self.values);
        }
    }

    /// `text` with every secret value replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        self.redactor.text(text).into_owned()
    }

    /// The redactor of the values known so far.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// A vars map as recorded: a secret var's value is the marker, whatever its length;
    /// any other value is redacted by value. Names are the pipeline's, not values, and are
    /// kept: a resumed run replays the vars by them.
    fn vars(&self, vars: BTreeMap<String, String>) -> BTreeMap<String, String> {
        vars.into_iter()
            .map(|(name, value)| {
                let value = if self.is_secret(&name) {
                    MARKER.to_owned()
                } else {
                    self.text(&value)
                };
                (name, value)
            })
            .collect()
    }

    fn opt(&self, text: Option<String>) -> Option<String> {
        text.map(|t| self.text(&t))
    }

    /// `event` as it may be recorded: every free-text field and every var value redacted.
    /// The names of states and kinds come from the pipeline, not from a value, and are kept.
    pub(crate) fn event(&mut self, event: Event) -> Event {
        if self.names.is_empty() {
            return event;
        }
        if let Event::ActionFinished { set_vars, .. } = &event {
            let set: Vec<String> = set_vars
                .iter()
                .filter(|(name, _)| self.is_secret(name))
                .map(|(_, value)| value.clone())
                .collect();
            self.learn(set);
        }
        match event {
            Event::RunStarted {
                pipeline,
                pipeline_name,
                pipeline_sha256,
                vars,
                wbs,
                force_done_reason,
                policy_sha256,
                worktree,
            } => Event::RunStarted {
                // The file given on the command line, not a value; `spur continue` finds
                // the pipeline by it.
                pipeline,
                pipeline_name,
                pipeline_sha256,
                vars: self.vars(vars),
                wbs,
                force_done_reason: self.opt(force_done_reason),
                policy_sha256,
                worktree,
            },
            Event::ActionFinished {
                state,
                phase,
                index,
                kind,
                ok,
                error,
                timed_out,
                exit_code,
                duration_ms,
                set_vars,
                message,
                usage,
                commit,
            } => Event::ActionFinished {
                state,
                phase,
                index,
                kind,
                ok,
                error: self.opt(error),
                timed_out,
                exit_code,
                duration_ms,
                set_vars: self.vars(set_vars),
                message: self.opt(message),
                usage: usage.map(|mut usage| {
                    usage.model = self.opt(usage.model);
                    usage
                }),
                commit,
            },
            Event::GuardEvaluated {
                state,
                transition,
                to,
                kind,
                passed,
                detail,
                duration_us,
            } => Event::GuardEvaluated {
                state,
                transition,
                to,
                kind,
                passed,
                detail: self.opt(detail),
                duration_us,
            },
            Event::Paused {
                state,
                kind,
                action,
                prompt,
            } => Event::Paused {
                state,
                kind,
                action,
                prompt: self.opt(prompt),
            },
            Event::Resumed {
                answer,
                rerun_ambiguous,
                force_done_reason,
                answered_by,
            } => Event::Resumed {
                answer: self.opt(answer),
                rerun_ambiguous,
                force_done_reason: self.opt(force_done_reason),
                answered_by: self.opt(answered_by),
            },
            Event::Retried {
                state,
                iteration,
                force_done_reason,
            } => Event::Retried {
                state,
                iteration,
                force_done_reason: self.opt(force_done_reason),
            },
            Event::DoneGate {
                state,
                transition,
                decision,
                verdict,
                message,
                forced,
            } => Event::DoneGate {
                state,
                transition,
                decision,
                verdict,
                message: self.opt(message),
                forced,
            },
            Event::TransitionRequested {
                state,
                to,
                vars,
                force_done_reason,
            } => Event::TransitionRequested {
                state,
                to,
                vars: self.vars(vars),
                force_done_reason: self.opt(force_done_reason),
            },
            Event::TransitionDenied {
                state,
                to,
                reason,
                detail,
            } => Event::TransitionDenied {
                state,
                to,
                reason,
                detail: self.text(&detail),
            },
            other @ (Event::StateEntered { .. }
            | Event::ActionStarted { .. }
            | Event::ActionProcess { .. }
            | Event::Transition { .. }
            | Event::Interrupted { .. }
            | Event::LifecycleBound { .. }
            | Event::Reseeded { .. }
            | Event::RunFinished { .. }) => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(names: &[&str], values: &[&str]) -> RunSecrets {
        let mut s = RunSecrets {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            ..RunSecrets::default()
        };
        s.learn(values.iter().map(|v| (*v).to_owned()));
        s
    }

    #[test]
    fn run_started_records_secret_vars_as_the_marker_even_when_short() {
        let mut s = secrets(&["token", "pin"], &["s3cr3t-value", "123"]);
        let vars: BTreeMap<String, String> = [
            ("token", "s3cr3t-value"),
            ("pin", "123"),
            ("note", "see s3cr3t-value"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let event = s.event(Event::RunStarted {
            pipeline: "p.yaml".into(),
            pipeline_name: "p".into(),
            pipeline_sha256: String::new(),
            vars,
            wbs: None,
            force_done_reason: None,
            policy_sha256: None,
            worktree: None,
        });
        let text = serde_json::to_string(&event).unwrap();
        assert!(
            !text.contains("s3cr3t-value") && !text.contains("123"),
            "{text}"
        );
        assert!(text.contains(r#""note":"see [redacted]""#), "{text}");
    }

    #[test]
    fn a_secret_set_by_an_action_is_learnt_and_redacted_from_then_on() {
        let mut s = secrets(&["token"], &[]);
        let finished = s.event(Event::ActionFinished {
            state: "a".into(),
            phase: super::super::journal::Phase::Enter,
            index: 0,
            kind: "file.read.into-var".into(),
            ok: true,
            error: None,
            timed_out: false,
            exit_code: None,
            duration_ms: 1,
            set_vars: [("token".to_owned(), "fresh-secret".to_owned())].into(),
            message: Some("read fresh-secret".into()),
            usage: None,
            commit: None,
        });
        let text = serde_json::to_string(&finished).unwrap();
        assert!(!text.contains("fresh-secret"), "{text}");
        assert_eq!(s.text("later fresh-secret"), "later [redacted]");
    }
}
