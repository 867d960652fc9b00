//! Non-bypass: whatever a pipeline's routing does — cycles, several success and
//! failure terminals, `always`/`never`/jq guards, no transition passing, the iteration
//! bound — a run ends `done` if and only if it reaches a success terminal and the verdict
//! artifact recomputes to PASS, or the run was forced with a reason (and then the audit
//! chain holds one more record, and verifies). On a deny the success state's onEnter never
//! runs. Each case is one real run in a fresh temporary project.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseResult;
use serde_json::{json, Value};
use spur_engine::run::journal::{self, Event, Record};
use spur_engine::run::{Outcome, RunOutcome, StopReason};
use spur_engine::store::chain_key::key_for_reading;
use spur_engine::store::{audit, task_status};
use spur_engine::verdict::{aggregate, parse_artifact, Artifact, ArtifactOutcome, Verdict};
use spur_engine::wbs::Wbs;

use crate::aggregation::artifact;
use crate::property::property;
use crate::run_harness::Project;

/// Runner executions searched by default (the promise asks for at least 500).
const RUNS: u32 = 600;

const SUCCESS: [&str; 2] = ["done_a", "done_b"];
/// A success terminal only because nothing leaves it (not listed in terminalStates).
const IMPLICIT: &str = "end";
const FAILURE: [&str; 2] = ["fail_a", "fail_b"];
const REASON: &str = "accepted by the operator after review";

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum To {
    Work(usize),
    Success(usize),
    Failure(usize),
}

/// Guards whose outcome the model knows from the `flag` var alone.
#[derive(Debug, Clone, Copy, PartialEq)]
enum GuardKind {
    None,
    Always,
    Never,
    /// `$flag == "1"`
    JqVarIsSet,
    /// `.vars.flag != "1"` on the run context
    JqVarIsUnset,
    /// `.state | type == "string"`
    JqContext,
    /// `error("no")`: an error does not pass
    JqError,
    /// `"yes"`: a non-boolean does not pass
    JqNotBoolean,
    /// `empty`: no output does not pass
    JqNoOutput,
    /// a missing input file does not pass
    JqMissingFile,
}

impl GuardKind {
    fn passes(self, flag: bool) -> bool {
        match self {
            GuardKind::None | GuardKind::Always | GuardKind::JqContext => true,
            GuardKind::JqVarIsSet => flag,
            GuardKind::JqVarIsUnset => !flag,
            GuardKind::Never
            | GuardKind::JqError
            | GuardKind::JqNotBoolean
            | GuardKind::JqNoOutput
            | GuardKind::JqMissingFile => false,
        }
    }

    fn yaml(self) -> Option<Value> {
        let jq = |expr: &str| json!({"kind": "jq", "options": {"expr": expr}});
        Some(match self {
            GuardKind::None => return None,
            GuardKind::Always => json!({"kind": "always"}),
            GuardKind::Never => json!({"kind": "never"}),
            GuardKind::JqVarIsSet => jq(r#"$flag == "1""#),
            GuardKind::JqVarIsUnset => jq(r#".vars.flag != "1""#),
            GuardKind::JqContext => jq(r#".state | type == "string""#),
            GuardKind::JqError => jq(r#"error("no")"#),
            GuardKind::JqNotBoolean => jq(r#""yes""#),
            GuardKind::JqNoOutput => jq("empty"),
            GuardKind::JqMissingFile => {
                json!({"kind": "jq", "options": {"file": "missing.json", "expr": "true"}})
            }
        })
    }
}

/// A generated pipeline: work states `w0…`, two declared success terminals, maybe an
/// implicit one, two failure terminals; random transitions (cycles included), then one
/// fallback per work state (which may be `never`, so no transition passes).
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// `w0`, or now and then the implicit terminal (the gate must hold with no transition
    /// at all).
    pub(crate) initial: To,
    /// Terminals' onEnter: a shell step that adds a line to a marker file, one per run of
    /// it (else a `note`).
    markers: bool,
    /// onEnter and onExit `note` actions on work states (journal records to cut through).
    notes: bool,
    work: usize,
    implicit_terminal: bool,
    transitions: Vec<(usize, To, GuardKind)>,
    fallbacks: Vec<(To, GuardKind)>,
    bound: u32,
    pub(crate) flag: bool,
}

impl Spec {
    fn success_count(&self) -> usize {
        SUCCESS.len() + usize::from(self.implicit_terminal)
    }

    pub(crate) fn name(&self, to: To) -> String {
        match to {
            To::Work(i) => format!("w{i}"),
            To::Success(i) => SUCCESS.get(i).copied().unwrap_or(IMPLICIT).to_owned(),
            To::Failure(i) => FAILURE[i].to_owned(),
        }
    }

    fn all_transitions(&self) -> Vec<(usize, To, GuardKind)> {
        let mut all = self.transitions.clone();
        for (from, (to, guard)) in self.fallbacks.iter().enumerate() {
            all.push((from, *to, *guard));
        }
        all
    }

    pub(crate) fn yaml(&self) -> String {
        let note = |text: String| json!([{"kind": "note", "options": {"message": text}}]);
        let marker = |id: &str| {
            if self.markers {
                json!([{"kind": "shell", "options": {"command": format!("echo ran >> \"$mark/entered-{id}\"")}}])
            } else {
                note(format!("entered {id}"))
            }
        };
        let mut states: Vec<Value> = (0..self.work)
            .map(|i| {
                if self.notes {
                    json!({"id": format!("w{i}"), "onEnter": note(format!("in w{i}")), "onExit": note(format!("leaving w{i}"))})
                } else {
                    json!({"id": format!("w{i}")})
                }
            })
            .collect();
        for id in SUCCESS.iter().chain(FAILURE.iter()) {
            states.push(json!({"id": id, "onEnter": marker(id)}));
        }
        if self.implicit_terminal {
            states.push(json!({"id": IMPLICIT, "onEnter": marker(IMPLICIT)}));
        }
        let transitions: Vec<Value> = self
            .all_transitions()
            .into_iter()
            .map(|(from, to, guard)| {
                let mut t = json!({"from": format!("w{from}"), "to": self.name(to)});
                if let Some(g) = guard.yaml() {
                    t["guard"] = g;
                }
                t
            })
            .collect();
        let mut terminals: Vec<&str> = SUCCESS.to_vec();
        terminals.extend(FAILURE);
        // JSON is YAML: the loader reads it like any flow-style pipeline.
        serde_json::to_string_pretty(&json!({
            "name": "generated",
            "initialState": self.name(self.initial),
            "terminalStates": terminals,
            "failureStates": FAILURE,
            "iterationBound": self.bound,
            "vars": {"wbs": "T1", "flag": "0", "mark": ""},
            "states": states,
            "transitions": transitions,
        }))
        .expect("JSON")
    }

    /// Where the run must end, by the routing rules of a run, before the done gate is asked.
    pub(crate) fn route(&self) -> End {
        let all = self.all_transitions();
        let mut at = match self.initial {
            To::Work(i) => i,
            To::Success(_) => return End::Success(self.name(self.initial)),
            To::Failure(_) => return End::Failure(self.name(self.initial)),
        };
        let mut iterations = 0;
        loop {
            if iterations >= self.bound {
                return End::Bound(format!("w{at}"));
            }
            let Some(&(_, to, _)) = all
                .iter()
                .find(|(from, _, guard)| *from == at && guard.passes(self.flag))
            else {
                return End::NoPassing(format!("w{at}"));
            };
            iterations += 1;
            match to {
                To::Work(next) => at = next,
                To::Success(_) => return End::Success(self.name(to)),
                To::Failure(_) => return End::Failure(self.name(to)),
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum End {
    Success(String),
    Failure(String),
    NoPassing(String),
    Bound(String),
}

pub(crate) fn spec(markers: bool, notes: bool) -> impl Strategy<Value = Spec> {
    let guard = select(vec![
        GuardKind::None,
        GuardKind::Always,
        GuardKind::Never,
        GuardKind::JqVarIsSet,
        GuardKind::JqVarIsUnset,
        GuardKind::JqContext,
        GuardKind::JqError,
        GuardKind::JqNotBoolean,
        GuardKind::JqNoOutput,
        GuardKind::JqMissingFile,
    ]);
    let fallback_guard = prop_oneof![
        4 => Just(GuardKind::None),
        2 => Just(GuardKind::Always),
        1 => Just(GuardKind::Never),
    ];
    (1usize..=5, any::<bool>(), 1u32..=12, any::<bool>(), 0u8..20).prop_flat_map(
        move |(work, implicit_terminal, bound, flag, start)| {
            // A declared terminal cannot be the initial state (`spur check` refuses it, as
            // the reference engine does): the gate with no transition at all is searched
            // through the implicit terminal.
            let initial = match start {
                0..=2 if implicit_terminal => To::Success(2),
                _ => To::Work(0),
            };
            let success = SUCCESS.len() + usize::from(implicit_terminal);
            let to = prop_oneof![
                3 => (0..work).prop_map(To::Work),
                2 => (0..success).prop_map(To::Success),
                1 => (0..FAILURE.len()).prop_map(To::Failure),
            ];
            let terminal = prop_oneof![
                2 => (0..success).prop_map(To::Success),
                1 => (0..FAILURE.len()).prop_map(To::Failure),
            ];
            (
                proptest::collection::vec((0..work, to, guard.clone()), 0..12),
                proptest::collection::vec((terminal, fallback_guard.clone()), work),
            )
                .prop_map(move |(transitions, fallbacks)| Spec {
                    initial,
                    markers,
                    notes,
                    work,
                    implicit_terminal,
                    transitions,
                    fallbacks,
                    bound,
                    flag,
                })
        },
    )
}

/// The verdict artifact on disk before the run.
#[derive(Clone)]
pub(crate) enum ArtifactCase {
    Absent,
    /// Hand-written text and whether it certifies task T1.
    Text(&'static str, bool),
    Generated(Artifact),
}

impl fmt::Debug for ArtifactCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactCase::Absent => f.write_str("Absent"),
            ArtifactCase::Text(text, pass) => write!(f, "Text({text:?}, certifies: {pass})"),
            ArtifactCase::Generated(a) => write!(f, "Generated({})", a.to_json()),
        }
    }
}

impl ArtifactCase {
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            ArtifactCase::Absent => None,
            ArtifactCase::Text(text, _) => Some((*text).to_owned()),
            ArtifactCase::Generated(a) => Some(a.to_json()),
        }
    }

    /// Whether the artifact certifies T1: valid, for T1, stored PASS, recomputed PASS.
    pub(crate) fn certifies(&self) -> bool {
        match self {
            ArtifactCase::Absent => false,
            ArtifactCase::Text(_, pass) => *pass,
            ArtifactCase::Generated(a) => match parse_artifact(a.to_json().as_bytes()) {
                ArtifactOutcome::Valid(parsed) => {
                    parsed.wbs == "T1"
                        && parsed.verdict == Verdict::Pass
                        && aggregate(&parsed).verdict == Verdict::Pass
                }
                _ => false,
            },
        }
    }
}

const PASS_T1: &str = r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}]}"#;

pub(crate) fn artifact_case() -> impl Strategy<Value = ArtifactCase> {
    let texts = select(vec![
        ArtifactCase::Text("", false),
        ArtifactCase::Text("  \n\t", false),
        ArtifactCase::Text("{", false),
        ArtifactCase::Text("PASS", false),
        ArtifactCase::Text("null", false),
        ArtifactCase::Text("[]", false),
        ArtifactCase::Text(r#"{"wbs":"T1","verdict":"PASS"}"#, false),
        ArtifactCase::Text(r#"{"wbs":"T1","verdict":"MAYBE","requirements":[]}"#, false),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1"}]}"#,
            false,
        ),
        ArtifactCase::Text(r#"{"wbs":"T1","verdict":"PASS","requirements":[]}"#, false),
        ArtifactCase::Text(
            r#"{"wbs":"T2","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}]}"#,
            false,
        ),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"UNMET","evidence":"none"}]}"#,
            false,
        ),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":" "}]}"#,
            false,
        ),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"PARTIAL","requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}]}"#,
            false,
        ),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}],"checks":[{"name":"task-check","status":"fail"}]}"#,
            false,
        ),
        ArtifactCase::Text(
            r#"{"wbs":"T1","verdict":"pass","requirements":[{"id":"R1","status":"met","evidence":"src/lib.rs:1"}]}"#,
            true,
        ),
    ]);
    let generated = (artifact(), select(vec!["T1", "T1", "T1", "T2"])).prop_map(|(mut a, wbs)| {
        a.wbs = wbs.to_owned();
        ArtifactCase::Generated(a)
    });
    prop_oneof![
        2 => Just(ArtifactCase::Absent),
        5 => Just(ArtifactCase::Text(PASS_T1, true)),
        6 => texts,
        5 => generated,
    ]
}

/// How the searched runs ended, so the output shows every branch was exercised.
#[derive(Default)]
pub(crate) struct Tally {
    done_by_pass: AtomicU32,
    done_forced: AtomicU32,
    denied: AtomicU32,
    failure_terminal: AtomicU32,
    no_passing_transition: AtomicU32,
    iteration_bound: AtomicU32,
}

impl Tally {
    pub(crate) fn count(&self, route: &End, certified: bool, forced: bool) {
        let counter = match route {
            End::Success(_) if certified && forced => &self.done_forced,
            End::Success(_) if certified => &self.done_by_pass,
            End::Success(_) => &self.denied,
            End::Failure(_) => &self.failure_terminal,
            End::NoPassing(_) => &self.no_passing_transition,
            End::Bound(_) => &self.iteration_bound,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Print how the runs ended; fail unless done by PASS, done forced and a deny at a
    /// success terminal were each seen.
    pub(crate) fn finish(&self) {
        let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
        eprintln!(
            "  ended: done by PASS {}, done forced {}, denied at a success terminal {}, failure terminal {}, no passing transition {}, iteration bound {}",
            n(&self.done_by_pass),
            n(&self.done_forced),
            n(&self.denied),
            n(&self.failure_terminal),
            n(&self.no_passing_transition),
            n(&self.iteration_bound),
        );
        assert!(n(&self.done_by_pass) > 0 && n(&self.done_forced) > 0 && n(&self.denied) > 0);
    }
}

/// The statement of non-bypass for one finished run of `spec` (with `artifact` on disk
/// before it and `force`), whose records are `records`: done exactly when certified at a
/// success terminal, the forced ones audited, and no success state entered otherwise.
pub(crate) fn ends_done_only_when_certified(
    project: &Project,
    spec: &Spec,
    artifact: &ArtifactCase,
    force: Option<&str>,
    outcome: &RunOutcome,
    records: &[Record],
    tally: &Tally,
) -> TestCaseResult {
    let state_dir = project.state_dir();
    let wbs = Wbs::parse("T1").expect("valid wbs");
    let entered = |id: &str| project.root().join(format!("entered-{id}")).exists();
    let entered_in_journal = |id: &str| {
        records.iter().any(|r| match &r.event {
            Event::StateEntered { state, .. } | Event::ActionStarted { state, .. } => state == id,
            _ => false,
        })
    };
    let task_done = task_status::current_status(&state_dir, &wbs)
        .map_err(|e| TestCaseError::fail(format!("task status: {e:?}")))?
        .is_done();
    let audit_records = audit::list(&state_dir.audit_path())
        .map_err(|e| TestCaseError::fail(format!("audit: {e:?}")))?
        .len();
    let chain = audit::verify(&state_dir.audit_path(), &key_for_reading(&state_dir))
        .map_err(|e| TestCaseError::fail(format!("audit: {e:?}")))?;
    prop_assert!(chain.is_verified(), "audit chain broken: {chain:?}");

    let route = spec.route();
    let certified = artifact.certifies() || force.is_some();
    tally.count(&route, certified, force.is_some());
    let success_ids: Vec<String> = (0..spec.success_count())
        .map(|i| spec.name(To::Success(i)))
        .collect();
    match &route {
        End::Success(target) if certified => {
            prop_assert_eq!(outcome.outcome, Outcome::Done, "{:?}", outcome);
            prop_assert_eq!(&outcome.state, target);
            prop_assert!(entered(target), "onEnter of {target} did not run");
            prop_assert!(task_done);
            prop_assert_eq!(outcome.forced, force.is_some());
            prop_assert_eq!(audit_records, usize::from(force.is_some()));
        }
        End::Success(target) => {
            prop_assert_eq!(outcome.outcome, Outcome::Failed, "{:?}", outcome);
            prop_assert_eq!(outcome.reason, StopReason::DoneGateDenied);
            if spec.initial == To::Work(0) {
                prop_assert!(&outcome.state != target);
            }
            prop_assert!(!entered(target), "onEnter of {target} ran on a deny");
            prop_assert!(!entered_in_journal(target), "{target} entered on a deny");
            prop_assert!(!task_done);
            prop_assert_eq!(audit_records, 0);
        }
        End::Failure(state) => {
            prop_assert_eq!(outcome.outcome, Outcome::Failed, "{:?}", outcome);
            prop_assert_eq!(outcome.reason, StopReason::FailureState);
            prop_assert_eq!(&outcome.state, state);
            prop_assert!(!task_done);
            prop_assert_eq!(audit_records, 0);
        }
        End::NoPassing(state) | End::Bound(state) => {
            let reason = if matches!(route, End::Bound(_)) {
                StopReason::IterationBoundExceeded
            } else {
                StopReason::NoPassingTransition
            };
            prop_assert_eq!(outcome.outcome, Outcome::Failed, "{:?}", outcome);
            prop_assert_eq!(outcome.reason, reason);
            prop_assert_eq!(&outcome.state, state);
            prop_assert!(!task_done);
            prop_assert_eq!(audit_records, 0);
        }
    }
    // Done exactly when certified at a success terminal; no other success state
    // was ever entered.
    prop_assert_eq!(
        outcome.outcome == Outcome::Done,
        certified && matches!(route, End::Success(_))
    );
    for id in &success_ids {
        if outcome.outcome != Outcome::Done || *id != outcome.state {
            prop_assert!(!entered(id), "{id} entered but the run is {:?}", outcome);
        }
    }
    Ok(())
}

#[test]
fn a_run_ends_done_only_through_a_recomputed_pass_or_an_audited_force() {
    let force = prop_oneof![4 => Just(None), 1 => Just(Some(REASON))];
    let tally = Tally::default();
    property(
        "non-bypass over random pipelines (runner executions)",
        RUNS,
        (spec(true, false), artifact_case(), force),
        |(spec, artifact, force)| {
            let project = Project::new();
            let checked = project
                .checked(&spec.yaml())
                .map_err(|e| TestCaseError::fail(format!("generated pipeline refused: {e}")))?;
            let outcome = project
                .run_case(&checked, spec.flag, artifact.text(), force)
                .map_err(|e| TestCaseError::fail(format!("run error: {e:?}")))?;

            let journal_path = project.journal_path(&outcome.run_id);
            let records = journal::read(&journal_path, &key_for_reading(&project.state_dir()))
                .map_err(|e| TestCaseError::fail(format!("journal: {e:?}")))?
                .records;
            ends_done_only_when_certified(
                &project, &spec, &artifact, force, &outcome, &records, &tally,
            )
        },
    );
    tally.finish();
}
