//! A host that keeps its journal in memory, with a scripted gate, clock and answers: it
//! shows that the runner reaches the world only through [`RunHost`] (no journal file, no
//! lock file, the gate asked through the host alone) and that a host that can wait for a
//! pause's answer lets the run go on within the same call.

use std::time::{Duration, UNIX_EPOCH};

use super::actions::ActionRun;
use super::done_gate_port::{GateAnswer, GateRequest};
use super::effect::{ActionStep, GuardStep};
use super::host::{ActionBody, GuardBody, Pause, Resume, RunHost};
use super::journal::{Event, JournalContent, Record};
use super::observer::{RunObserver, SilentObserver};
use super::outcome::Outcome;
use super::run_error::RunError;
use super::run_id::RunId;
use super::runner::{start_on, RunSettings, StartRequest};
use super::Durability;
use crate::done_gate::GateDecision;
use crate::pipeline::{load, CheckedPipeline};
use crate::source::SourceFile;
use crate::store::state_dir::StateDir;
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;
use spur_guards::GuardResult;

const RUN_ID: &str = "20260101T000000Z-00abcd";

struct MemoryHost {
    records: Vec<Record>,
    locked: Vec<String>,
    gate: GateAnswer,
    gate_asked: usize,
    answers: Vec<Resume>,
    pauses: Vec<String>,
    secrets: super::secrets::RunSecrets,
    policies: Vec<crate::policy::Policy>,
}

impl MemoryHost {
    fn new(gate: GateAnswer, answers: Vec<Resume>) -> Self {
        Self {
            records: Vec::new(),
            locked: Vec::new(),
            gate,
            gate_asked: 0,
            answers,
            pauses: Vec::new(),
            secrets: Default::default(),
            policies: Vec::new(),
        }
    }

    fn events(&self) -> Vec<&'static str> {
        self.records.iter().map(|r| r.event.name()).collect()
    }
}

impl RunHost for MemoryHost {
    fn now(&mut self) -> Timestamp {
        Timestamp::at(UNIX_EPOCH + Duration::from_secs(1_767_225_600))
    }

    fn new_run_id(&mut self) -> RunId {
        RunId::parse(RUN_ID).unwrap()
    }

    fn lock_task(&mut self, wbs: &Wbs, _run_id: &RunId) -> Result<(), RunError> {
        self.locked.push(wbs.to_string());
        Ok(())
    }

    fn create_journal(&mut self, _run_id: &RunId) -> Result<(), RunError> {
        self.records.clear();
        Ok(())
    }

    fn read_journal(&mut self, _run_id: &RunId) -> Result<JournalContent, RunError> {
        Ok(JournalContent::unchained(self.records.clone()))
    }

    fn reopen_journal(&mut self, _: &RunId, _: &JournalContent) -> Result<(), RunError> {
        Ok(())
    }

    fn keep_policy(&mut self, policy: &crate::policy::Policy) -> Result<(), RunError> {
        self.policies.push(policy.clone());
        Ok(())
    }

    fn kept_policy(&mut self, sha256: &str) -> Result<crate::policy::Policy, RunError> {
        self.policies
            .iter()
            .find(|p| p.sha256() == sha256)
            .cloned()
            .ok_or_else(|| RunError::UnknownState(sha256.to_owned()))
    }

    fn keep_secrets(&mut self, secrets: super::secrets::RunSecrets) {
        self.secrets = secrets;
    }

    fn redactor(&mut self) -> crate::redact::Redactor {
        self.secrets.redactor().clone()
    }

    fn redact(&mut self, text: &str) -> String {
        self.secrets.text(text)
    }

    fn append(&mut self, event: Event, observer: &mut dyn RunObserver) -> Result<Record, RunError> {
        let event = self.secrets.event(event);
        let record = Record {
            seq: self.records.len() as u64 + 1,
            at: self.now().rfc3339(),
            event,
        };
        observer.record(&record);
        self.records.push(record.clone());
        Ok(record)
    }

    fn run_action(
        &mut self,
        step: &ActionStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut ActionBody<'_>,
    ) -> Result<ActionRun, RunError> {
        let log = step.log(self.records.len() as u64 + 1);
        self.append(step.started(&log), observer)?;
        let run = body(&log, observer, None);
        if let ActionRun::Finished(result) = &run {
            self.append(step.finished(result, 0), observer)?;
        }
        Ok(run)
    }

    fn run_guard(
        &mut self,
        step: &GuardStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut GuardBody<'_>,
    ) -> Result<GuardResult, RunError> {
        let result = body();
        self.append(step.evaluated(&result, 0), observer)?;
        Ok(result)
    }

    fn done_gate(&mut self, _request: &GateRequest<'_>) -> GateAnswer {
        self.gate_asked += 1;
        self.gate.clone()
    }

    fn wait_for_answer(&mut self, pause: &Pause<'_>) -> Option<Resume> {
        self.pauses.push(match pause {
            Pause::State { state, .. } => format!("state {state}"),
            Pause::Question { question, .. } => format!("question {}", question.prompt),
        });
        (!self.answers.is_empty()).then(|| self.answers.remove(0))
    }
}

fn checked(yaml: &str) -> CheckedPipeline {
    let loaded = load(&SourceFile::new("p.yaml", yaml)).unwrap();
    CheckedPipeline::new(loaded).unwrap().0
}

fn run_on(host: &mut MemoryHost, yaml: &str) -> (super::RunOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let settings = RunSettings {
        state_dir: StateDir::at(dir.path().join(".spur")),
        durability: Durability::Unsafe,
        path_prefix: None,
        spur_bin: None,
        timeouts: Default::default(),
        http_allow: Default::default(),
        policy: crate::policy::PolicySource::Project,
        run_socket: None,
        // The test's own filters: trusted, evaluated in process (spur's binary uses a worker).
        jq: spur_guards::jq::JqSandbox::in_process(),
    };
    let checked = checked(yaml);
    let outcome = start_on(
        StartRequest {
            pipeline: &checked,
            pipeline_path: "p.yaml".into(),
            vars: super::vars::resolve(checked.pipeline(), None, &[]).unwrap(),
            force_done_reason: None,
            worktree: None,
        },
        &settings,
        host,
        &mut SilentObserver,
    )
    .unwrap();
    (outcome, dir)
}

#[test]
fn the_gate_the_lock_the_clock_and_the_run_id_are_the_hosts() {
    let mut host = MemoryHost::new(
        GateAnswer::Allow {
            reason: crate::done_gate::AllowReason::Pass,
            verdict: Some("PASS".into()),
            certificate: None,
        },
        Vec::new(),
    );
    let (outcome, dir) = run_on(
        &mut host,
        "name: p\ninitialState: a\nterminalStates: [done]\nvars: {wbs: \"T1\"}\n\
         states: [{id: a}, {id: done}]\ntransitions: [{from: a, to: done}]\n",
    );
    assert_eq!(outcome.outcome, Outcome::Done);
    assert_eq!(outcome.run_id, RUN_ID);
    assert_eq!(host.gate_asked, 1);
    assert_eq!(host.locked, ["T1"]);
    assert_eq!(
        outcome.done_gate.map(|g| g.decision),
        Some(GateDecision::Allow)
    );
    assert_eq!(
        host.events(),
        [
            "run-started",
            "state-entered",
            "guard-evaluated",
            "done-gate",
            "transition",
            "state-entered",
            "run-finished"
        ]
    );
    assert!(host
        .records
        .iter()
        .all(|r| r.at == "2026-01-01T00:00:00.000Z"));
    // Nothing of the run's records is on disk: the journal and the lock are the host's.
    // (`.spur/run/`, where steps write task artifacts, is the project's: it is made.)
    let state = StateDir::at(dir.path().join(".spur"));
    assert!(!state.runs_dir().exists());
    assert!(!dir.path().join(".spur/locks").exists());
    assert!(dir.path().join(".spur/run").is_dir());
}

#[test]
fn a_host_that_answers_pauses_lets_the_run_go_on_in_the_same_call() {
    let mut host = MemoryHost::new(
        GateAnswer::Noop,
        vec![
            Resume {
                answer: None,
                answered_by: None,
            },
            Resume {
                answer: Some("yes".into()),
                answered_by: Some("ada".into()),
            },
        ],
    );
    let (outcome, _dir) = run_on(
        &mut host,
        r#"
name: p
initialState: hold
terminalStates: [shipped, dropped]
vars: {__hitlAnswer: ""}
states:
  - {id: hold, pause: true}
  - id: ask
    onEnter: [{kind: hitl.confirm, options: {prompt: "Ship?"}}]
  - {id: shipped}
  - {id: dropped}
transitions:
  - {from: hold, to: ask}
  - {from: ask, to: shipped, guard: {kind: jq, options: {expr: '.vars.__hitlAnswer == "yes"'}}}
  - {from: ask, to: dropped}
"#,
    );
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert_eq!(outcome.state, "shipped");
    assert_eq!(host.pauses, ["state hold", "question Ship?"]);
    let events = host.events();
    let paused_then_resumed = events
        .windows(2)
        .filter(|w| w == &["paused", "resumed"])
        .count();
    assert_eq!(paused_then_resumed, 2, "{events:?}");
    // Who answered is in the second `resumed`, as the host was told.
    let answered_by: Vec<Option<&str>> = host
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Resumed { answered_by, .. } => Some(answered_by.as_deref()),
            _ => None,
        })
        .collect();
    assert_eq!(answered_by, [None, Some("ada")]);
    // The answer reached the action that asked, which finished with it.
    assert!(host.records.iter().any(|r| matches!(
        &r.event,
        Event::ActionFinished { ok: true, set_vars, .. }
            if set_vars.get("__hitlAnswer").map(String::as_str) == Some("yes")
    )));
}

#[test]
fn a_host_answer_that_is_not_a_choice_is_refused() {
    let mut host = MemoryHost::new(
        GateAnswer::Noop,
        vec![Resume {
            answer: Some("maybe".into()),
            answered_by: None,
        }],
    );
    let dir = tempfile::tempdir().unwrap();
    let settings = RunSettings {
        state_dir: StateDir::at(dir.path().join(".spur")),
        durability: Durability::Unsafe,
        path_prefix: None,
        spur_bin: None,
        timeouts: Default::default(),
        http_allow: Default::default(),
        policy: crate::policy::PolicySource::Project,
        run_socket: None,
        // The test's own filters: trusted, evaluated in process (spur's binary uses a worker).
        jq: spur_guards::jq::JqSandbox::in_process(),
    };
    let checked = checked(
        "name: p\ninitialState: ask\nterminalStates: [end]\n\
         states: [{id: ask, onEnter: [{kind: hitl.confirm}]}, {id: end}]\n\
         transitions: [{from: ask, to: end}]\n",
    );
    let result = start_on(
        StartRequest {
            pipeline: &checked,
            pipeline_path: "p.yaml".into(),
            vars: super::vars::resolve(checked.pipeline(), None, &[]).unwrap(),
            force_done_reason: None,
            worktree: None,
        },
        &settings,
        &mut host,
        &mut SilentObserver,
    );
    assert!(
        matches!(result, Err(RunError::AnswerInvalid { .. })),
        "{result:?}"
    );
}
