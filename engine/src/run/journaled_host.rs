//! The host of a run on a durable-execution engine (Restate, through `spur-restate`): each
//! host call is one journaled step of the engine, whose value the engine keeps. On a replay
//! (the worker died; this or another worker runs the run again) the engine hands back the
//! values of the steps already journaled without running them again, so the runner sees
//! the same records, times and results and goes on from the first step not journaled.
//!
//! Records are journaled in batches: a record is kept in memory until the next effect
//! needs the ones before it durable (an action's started marker), a pause, the run's
//! start, or the run's end, then all of them are one step. A record not yet journaled
//! when a worker dies is made again, the same, by the replay (it follows from journaled
//! steps alone). An action is two steps: the batch ending in its `action-started` record
//! (the started marker), then the action itself. A replay that finds the marker journaled and the action not has met an
//! action that started and never finished: it is not run again but journaled as
//! ambiguous, and the run stops with [`RunError::Ambiguous`] for a person to decide. A
//! pause waits on a durable promise of the engine. This module knows nothing of Restate
//! or of async code: the engine's side is the [`StepJournal`] trait.
//!
//! When the engine keeps task records ([`StepJournal::task_records`], a fleet), the done
//! gate and the spur calls of a task's steps work in a private copy of the task's records
//! on the server, and what they append goes back to the server (`run::fleet_state`): the
//! worker's own protected state is never read as evidence.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::actions::{ActionResult, ActionRun, HitlQuestion};
use super::done_gate_port::{DoneGate, GateAnswer, GateRequest};
use super::effect::{ActionStep, GuardStep};
use super::fleet_state::{self, FleetRecords, FleetWrite, Shadow};
use super::fleet_tree::FleetTree;
use super::host::{ActionBody, GuardBody, Pause, Resume, RunHost};
use super::journal::{Event, JournalContent, Record};
use super::lock::LockError;
use super::observer::RunObserver;
use super::outcome::RunOutcome;
use super::run_error::RunError;
use super::run_id::RunId;
use super::runner::{start_on, RunSettings, StartRequest};
use super::secrets::RunSecrets;
use crate::diagnostic::Code;
use crate::done_certificate::CertificateReport;
use crate::done_gate::AllowReason;
use crate::policy::Policy;
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;
use spur_guards::GuardResult;

/// A durable-execution engine's journal as a run sees it: named steps whose values it
/// keeps, and durable promises. Values are JSON text.
pub trait StepJournal {
    /// The value of the step `name`: `body`'s, run now, unless the journal already holds
    /// the step's value (a replay), which is returned without running `body`. Steps come
    /// in the same order with the same names on every replay. A body that cannot make its
    /// value (`Err`: the run's tree could not be fetched) fails the step with its error,
    /// journaled as the step's end where the engine can (the same on every replay); the
    /// run stops with it.
    fn step(
        &mut self,
        name: &str,
        body: &mut dyn FnMut() -> Result<String, String>,
    ) -> Result<String, String>;

    /// Wait until the durable promise `name` is resolved, and its value. `note` (a
    /// [`PauseNote`] as JSON) tells a client what the run waits for meanwhile.
    fn promise(&mut self, name: &str, note: &str) -> Result<String, String>;

    /// Take the run lock of task `wbs` for this run, held until the run ends: `None` when
    /// taken (or this run holds it already), else the run that holds it. Journaled like a
    /// step. An engine without task locks takes every lock.
    fn lock_task(&mut self, _wbs: &str) -> Result<Option<String>, String> {
        Ok(None)
    }

    /// The server's records of task `wbs` ([`FleetRecords`] as JSON), read like a step.
    /// `None`: this engine keeps no task records, and the gate reads the worker's state
    /// as a local run's does.
    fn task_records(&mut self, _wbs: &str) -> Option<Result<String, String>> {
        None
    }

    /// Append `write` ([`FleetWrite`] as JSON) to task `wbs`'s records on the server,
    /// through its handlers. `certify`: the done gate's write, the only one that may hold
    /// a `done` record.
    fn task_write(&mut self, _wbs: &str, _write: &str, _certify: bool) -> Result<(), String> {
        Err("this engine keeps no task records".to_owned())
    }
}

/// What a run waiting at a pause tells its clients: the outcome a local run stops with
/// there (state, question, choices), so `spur run` prints the same, and `spur continue`
/// refuses an answer the question does not accept before it reaches the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PauseNote {
    /// The paused outcome.
    pub outcome: RunOutcome,
    /// Its sentence for people (not part of the outcome's JSON).
    pub detail: Option<String>,
}

/// The value of a pause's promise: the answer and who gave it (`spur continue --answered-by`).
/// A promise resolved with anything else (a bare answer, as before who was sent) is the
/// answer itself, from no one named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PauseAnswer {
    /// The answer (ignored by a `pause: true` state).
    pub answer: String,
    /// Who gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
}

impl PauseAnswer {
    /// The promise's value read back.
    pub fn from_promise(value: String) -> Self {
        serde_json::from_str(&value).unwrap_or(PauseAnswer {
            answer: value,
            answered_by: None,
        })
    }
}

/// Start a run whose host calls are steps of `journal`, with the run id the engine keys
/// the run by, and drive it to a terminal state, an ambiguous action or an error. A pause
/// waits for its promise (`answer-1`, `answer-2`, … in the run's order of pauses).
/// `tree`: a fleet run's worktree ([`FleetTree`]), brought to the journal's commit before
/// the first step this attempt runs, committed and pushed after each action and the done
/// gate; afterwards it names the commit the run's last step left.
pub fn start_journaled(
    request: StartRequest<'_>,
    settings: &RunSettings,
    run_id: RunId,
    journal: &mut dyn StepJournal,
    gate: &mut dyn DoneGate,
    observer: &mut dyn RunObserver,
    tree: Option<&mut FleetTree>,
) -> Result<RunOutcome, RunError> {
    let mut host = JournaledHost {
        journal,
        tree,
        gate,
        run_id,
        records: Vec::new(),
        pending: Vec::new(),
        told: 0,
        secrets: RunSecrets::default(),
        state_dir: settings.state_dir.clone(),
        run_dir: None,
        pauses: 0,
        clock: 0,
        wbs: None,
        fleet: None,
        started: None,
        policy: None,
        socket: settings.run_socket.clone(),
    };
    let outcome = start_on(request, settings, &mut host, observer);
    // The run's last records, journaled whatever its end.
    let flushed = host.flush();
    host.tell(observer);
    let outcome = outcome?;
    flushed?;
    Ok(outcome)
}

struct JournaledHost<'j> {
    journal: &'j mut dyn StepJournal,
    /// A fleet run's worktree.
    tree: Option<&'j mut FleetTree>,
    gate: &'j mut dyn DoneGate,
    run_id: RunId,
    /// The records journaled so far.
    records: Vec<Record>,
    /// The records made since, not yet journaled.
    pending: Vec<Record>,
    /// How many journaled records the observer was told.
    told: usize,
    secrets: RunSecrets,
    state_dir: crate::store::state_dir::StateDir,
    run_dir: Option<PathBuf>,
    /// Pauses so far: names the next one's promise.
    pauses: u32,
    /// `now` calls so far: names the next one's step.
    clock: u32,
    /// The run's task, once its lock is taken.
    wbs: Option<Wbs>,
    /// The server's records of the task, as this run last read or wrote them (`None`:
    /// not read yet, or the engine keeps none).
    fleet: Option<FleetRecords>,
    /// The run's `run-started` record (a shadow's journal, for its steps' spur calls).
    started: Option<Record>,
    /// The policy the run pinned.
    policy: Option<Policy>,
    /// The run's socket for its steps' spur calls.
    socket: Option<std::sync::Arc<super::nested_call::RunSocket>>,
}

/// How a journaled action ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum ActionValue {
    /// It ran to the end; its `action-finished` record, and on a fleet what its spur
    /// calls appended to the task's records (or why that could not be read).
    Finished {
        record: Box<Record>,
        #[serde(default)]
        fleet: Option<Result<FleetWrite, String>>,
        /// A fleet run's worktree: the commit of the tree as the action left it, or why
        /// it could not be committed and pushed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<Result<String, String>>,
    },
    /// It asks this question (the tree as it left it committed, as for `Finished`).
    NeedsAnswer {
        prompt: String,
        choices: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<Result<String, String>>,
    },
    /// It started in an earlier attempt that never journaled its end.
    Ambiguous,
}

/// The gate's answer as journaled.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
enum GateValue {
    Noop,
    Allow {
        reason: AllowReason,
        verdict: Option<String>,
        certificate: Option<CertificateValue>,
    },
    Deny {
        verdict: String,
        message: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "certificate", rename_all = "kebab-case")]
enum CertificateValue {
    Written {
        path: String,
    },
    Failed {
        code: String,
        message: String,
        retry: String,
    },
}

/// The longest an action of a run on an engine may run: the engine aborts an attempt that
/// journals nothing for longer (`spur-restate` waits this plus a margin for the action's
/// kill and its tree's commit), and a replay would hold the action as ambiguous. The
/// default agent timeout is this.
pub const LONGEST_ACTION: Duration = Duration::from_secs(60 * 60);

fn engine_error(step: &str, why: impl std::fmt::Display) -> RunError {
    RunError::Engine(format!("step {step}: {why}"))
}

/// Run `body` as the step `name` of `journal` (unless journaled) and decode its value.
/// Whether the body ran in this attempt is the second value.
fn journaled<T: Serialize + for<'de> Deserialize<'de>>(
    journal: &mut dyn StepJournal,
    name: &str,
    body: &mut dyn FnMut() -> Result<T, String>,
) -> Result<(T, bool), RunError> {
    let mut ran = false;
    let text = journal.step(name, &mut || {
        ran = true;
        body().map(|value| serde_json::to_string(&value).unwrap_or_default())
    });
    let text = text.map_err(|e| engine_error(name, e))?;
    let value = serde_json::from_str(&text).map_err(|e| engine_error(name, e))?;
    Ok((value, ran))
}

/// Bring a fleet run's worktree to the journal's commit (once per attempt), before a
/// step that reads or writes the tree runs.
fn sync(tree: &mut Option<&mut FleetTree>) -> Result<(), String> {
    match tree {
        Some(tree) => tree
            .sync()
            .map_err(|why| format!("the run's tree could not be brought to its commit: {why}")),
        None => Ok(()),
    }
}

/// Commit and push a fleet run's worktree after a step: its commit, or why not.
fn commit(tree: &mut Option<&mut FleetTree>, message: &str) -> Option<Result<String, String>> {
    tree.as_deref_mut().map(|tree| tree.commit(message))
}

impl JournaledHost<'_> {
    /// Run `body` as the step `name` (unless journaled) and decode its value. Whether the
    /// body ran in this attempt is the second value.
    fn step_value<T: Serialize + for<'de> Deserialize<'de>>(
        &mut self,
        name: &str,
        body: &mut dyn FnMut() -> T,
    ) -> Result<(T, bool), RunError> {
        journaled(&mut *self.journal, name, &mut || Ok(body()))
    }

    /// A replayed (or just made) step left the fleet run's tree at `commit`.
    fn follow(&mut self, commit: Option<&str>) {
        if let (Some(tree), Some(commit)) = (self.tree.as_deref_mut(), commit) {
            tree.follow(commit);
        }
    }

    fn next_record(&mut self, event: Event, at: Timestamp) -> Record {
        Record {
            seq: self.next_seq(),
            at: at.rfc3339(),
            event: self.secrets.event(event),
        }
    }

    /// The seq the next record gets.
    fn next_seq(&self) -> u64 {
        (self.records.len() + self.pending.len()) as u64 + 1
    }

    /// Journal the records made since the last batch as one step.
    /// Whether the batch was made in this attempt (false: replayed); true when there is
    /// nothing to journal.
    fn flush(&mut self) -> Result<bool, RunError> {
        self.flush_before(false)
    }

    /// [`Self::flush`]; with `tree`, the batch is journaled only once the fleet run's tree
    /// is at its commit (an action's started marker: the action runs next).
    fn flush_before(&mut self, tree: bool) -> Result<bool, RunError> {
        let (Some(first), Some(last)) = (self.pending.first(), self.pending.last()) else {
            return Ok(true);
        };
        let name = format!("records {}-{}", first.seq, last.seq);
        let mut made = Some(std::mem::take(&mut self.pending));
        let mut fleet_tree = if tree { self.tree.as_deref_mut() } else { None };
        let (batch, ran) = journaled(&mut *self.journal, &name, &mut || {
            sync(&mut fleet_tree)?;
            Ok(made.take().unwrap_or_default())
        })?;
        for record in batch {
            // A replayed record teaches the secrets what the record made now would have.
            let _ = self.secrets.event(record.event.clone());
            self.records.push(record);
        }
        Ok(ran)
    }

    /// Tell the observer the journaled records it has not been told yet.
    fn tell(&mut self, observer: &mut dyn RunObserver) {
        for record in self.records.iter().skip(self.told) {
            observer.record(record);
        }
        self.told = self.records.len();
    }
}

/// The gate's answer as journaled: the gate's, on a fleet what it appended to the task's
/// records (sent to the server's `certify` after the step), and in a fleet run's worktree
/// the commit of the tree as the gate left it.
#[derive(Debug, Serialize, Deserialize)]
struct FleetGateValue {
    answer: GateValue,
    write: Option<FleetWrite>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

impl JournaledHost<'_> {
    /// The server's records of the run's task, read now (a journaled call); `None` when
    /// the run has no task or the engine keeps no records.
    fn read_fleet(&mut self) -> Result<Option<FleetRecords>, RunError> {
        let Some(wbs) = &self.wbs else {
            return Ok(None);
        };
        let Some(text) = self.journal.task_records(wbs.as_str()) else {
            return Ok(None);
        };
        let text = text.map_err(|e| engine_error("task-records", e))?;
        let records: FleetRecords =
            serde_json::from_str(&text).map_err(|e| engine_error("task-records", e))?;
        self.fleet = Some(records.clone());
        Ok(Some(records))
    }

    /// On a fleet, a shadow of the server's records for the next action's spur calls,
    /// which the run's socket points them at; `None` for a local run or a run without a
    /// task. The records are read once per run, then kept as this run writes them (it
    /// holds the task's lock: no other run writes them meanwhile).
    fn shadow_for_steps(&mut self) -> Result<Option<Shadow>, RunError> {
        if self.fleet.is_none() && self.read_fleet()?.is_none() {
            return Ok(None);
        }
        let (Some(records), Some(wbs)) = (&self.fleet, &self.wbs) else {
            return Ok(None);
        };
        let run = self.started.as_ref().map(|r| (&self.run_id, r));
        let shadow = Shadow::new(&self.state_dir, wbs, records, run, self.policy.as_ref())
            .map_err(|e| engine_error("task-records", format!("a private copy: {e}")))?;
        if let Some(socket) = &self.socket {
            socket.write_into(Some((
                shadow.home().to_path_buf(),
                self.state_dir.key_file().path().map(PathBuf::from),
            )));
        }
        Ok(Some(shadow))
    }

    /// Send what a writer appended to the server (`certify`: the gate's write).
    fn send_write(&mut self, step: &str, write: FleetWrite, certify: bool) -> Result<(), RunError> {
        if write.is_empty() {
            return Ok(());
        }
        let Some(wbs) = &self.wbs else {
            return Err(engine_error(
                step,
                "a task's records were written in a run without a task",
            ));
        };
        let text = serde_json::to_string(&write).map_err(|e| engine_error(step, e))?;
        self.journal
            .task_write(wbs.as_str(), &text, certify)
            .map_err(|e| engine_error(step, format!("the task's records on the server: {e}")))?;
        if let Some(records) = &mut self.fleet {
            records.apply(&write);
        }
        Ok(())
    }

    /// The gate on a fleet: asked in a shadow of `records` (the server's), with the
    /// server's artifact where the gate reads it; what it appended (the `done` record, a
    /// forced override's audit record) goes to the server's `certify` handler. An allow
    /// the server does not record is a deny.
    fn fleet_gate(
        &mut self,
        name: &str,
        request: &GateRequest<'_>,
        records: FleetRecords,
    ) -> GateAnswer {
        let deny = |message: String| GateAnswer::Deny {
            verdict: "UNKNOWN".to_owned(),
            message,
        };
        let wbs = request.wbs;
        let run = self.started.as_ref().map(|r| (&self.run_id, r));
        let (state_dir, policy) = (&self.state_dir, self.policy.as_ref());
        let gate = &mut *self.gate;
        let mut ask = || -> FleetGateValue {
            let cannot = |why: String| FleetGateValue {
                answer: gate_value(GateAnswer::Deny {
                    verdict: "UNKNOWN".to_owned(),
                    message: format!("task {wbs} cannot be marked done: {why}"),
                }),
                write: None,
                commit: None,
            };
            let shadow = match Shadow::new(state_dir, wbs, &records, run, policy) {
                Ok(shadow) => shadow,
                Err(e) => return cannot(format!("a private copy of its records: {e}")),
            };
            if let Err(e) =
                fleet_state::restore_artifact(state_dir, wbs, records.artifact.as_deref())
            {
                return cannot(format!(
                    "the server's verdict artifact could not be put back: {e}"
                ));
            }
            // The view the gate rewrites is of the server's ledger: the worker's is put back.
            let view = fleet_state::KeptView::keep(state_dir, wbs);
            let answer = gate.evaluate(&GateRequest {
                state_dir: shadow.state(),
                ..request.clone()
            });
            view.put_back();
            match shadow.written() {
                Ok(write) => FleetGateValue {
                    answer: gate_value(answer),
                    write: Some(write),
                    commit: None,
                },
                Err(e) => cannot(format!("what the gate wrote could not be read: {e}")),
            }
        };
        let message = format!("spur run {}: the done gate of task {wbs}", self.run_id);
        let value = match in_tree(&mut *self.journal, &mut self.tree, name, &message, &mut ask) {
            Ok(value) => value,
            Err(why) => {
                return deny(format!(
                    "the done gate's answer could not be journaled: {why}"
                ))
            }
        };
        self.follow(value.commit.as_deref());
        let answer = gate_answer(value.answer);
        let Some(write) = value.write else {
            return answer;
        };
        match (self.send_write(name, write, true), answer) {
            (Ok(()), answer) => answer,
            (Err(e), GateAnswer::Allow { .. }) => deny(format!(
                "task {wbs} was certified but the server did not record it, so it is not done: {e}"
            )),
            (Err(_), answer) => answer,
        }
    }
}

/// The gate's step `name`: `ask`'s answer, asked in a fleet run's tree brought to its
/// commit and committed after (a tree that cannot be fetched or pushed is a deny: the
/// gate's writes are private until journaled, so nothing of it reaches the server).
fn in_tree(
    journal: &mut dyn StepJournal,
    tree: &mut Option<&mut FleetTree>,
    name: &str,
    message: &str,
    ask: &mut dyn FnMut() -> FleetGateValue,
) -> Result<FleetGateValue, String> {
    journaled(journal, name, &mut || {
        sync(tree)?;
        let mut value = ask();
        value.commit = commit(tree, message).transpose()?;
        Ok(value)
    })
    .map(|(value, _)| value)
    .map_err(|e| e.to_string())
}

impl RunHost for JournaledHost<'_> {
    fn now(&mut self) -> Timestamp {
        self.clock += 1;
        let name = format!("now {}", self.clock);
        match self.step_value(&name, &mut || Timestamp::now().rfc3339()) {
            Ok((text, _)) => Timestamp::parse(&text).unwrap_or_else(Timestamp::now),
            Err(_) => Timestamp::now(),
        }
    }

    /// The engine keys the run by its id: it is given, not made.
    fn new_run_id(&mut self) -> RunId {
        self.run_id.clone()
    }

    /// The engine's lock of the task (the `Task` object of a fleet): a second run of the
    /// task, on any worker, is refused as a local one is.
    fn lock_task(&mut self, wbs: &Wbs, _run_id: &RunId) -> Result<(), RunError> {
        self.wbs = Some(wbs.clone());
        match self.journal.lock_task(wbs.as_str()) {
            Ok(None) => Ok(()),
            Ok(Some(holder)) => Err(RunError::Locked(LockError::Held {
                wbs: wbs.as_str().to_owned(),
                holder: Some(holder),
                path: format!("the engine's Task object {}", wbs.as_str()),
            })),
            Err(why) => Err(engine_error("lock-task", why)),
        }
    }

    /// The journal is the engine's; this worker keeps only the run's action logs.
    fn create_journal(&mut self, run_id: &RunId) -> Result<(), RunError> {
        let run_dir = run_id.dir_in(&self.state_dir);
        std::fs::create_dir_all(run_dir.join("actions")).map_err(|source| RunError::RunDir {
            path: run_dir.display().to_string(),
            source,
        })?;
        self.run_dir = Some(run_dir);
        Ok(())
    }

    fn read_journal(&mut self, _run_id: &RunId) -> Result<JournalContent, RunError> {
        Ok(JournalContent::unchained(self.records.clone()))
    }

    fn reopen_journal(
        &mut self,
        run_id: &RunId,
        _content: &JournalContent,
    ) -> Result<(), RunError> {
        self.create_journal(run_id)
    }

    fn keep_policy(&mut self, policy: &Policy) -> Result<(), RunError> {
        self.policy = Some(policy.clone());
        Ok(policy.store(&self.state_dir)?)
    }

    fn kept_policy(&mut self, sha256: &str) -> Result<Policy, RunError> {
        Ok(Policy::stored(&self.state_dir, sha256)?)
    }

    fn keep_secrets(&mut self, secrets: RunSecrets) {
        self.secrets = secrets;
    }

    fn redactor(&mut self) -> crate::redact::Redactor {
        self.secrets.redactor().clone()
    }

    fn redact(&mut self, text: &str) -> String {
        self.secrets.text(text)
    }

    /// Kept until the next batch; `run-started` is journaled at once (the runner keeps its
    /// time: the policy pin's).
    fn append(&mut self, event: Event, observer: &mut dyn RunObserver) -> Result<Record, RunError> {
        let starts = matches!(event, Event::RunStarted { .. });
        let record = self.next_record(event, Timestamp::now());
        self.pending.push(record);
        if starts {
            self.flush()?;
            self.started = self.records.first().cloned();
            self.tell(observer);
            return self
                .records
                .last()
                .cloned()
                .ok_or_else(|| engine_error("run-started", "no record"));
        }
        self.pending
            .last()
            .cloned()
            .ok_or_else(|| engine_error("append", "no record"))
    }

    fn run_action(
        &mut self,
        step: &ActionStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut ActionBody<'_>,
    ) -> Result<ActionRun, RunError> {
        // An action the engine would abort before it ends is refused before it starts.
        let limit = LONGEST_ACTION.as_millis();
        if let Some(ms) = step.timeout_ms.filter(|ms| u128::from(*ms) > limit) {
            return Err(RunError::ActionTooLong {
                state: step.state.to_owned(),
                index: step.index,
                kind: step.kind.to_owned(),
                minutes: ms.div_ceil(60_000),
                limit: LONGEST_ACTION.as_secs() / 60,
            });
        }
        // On a fleet, the action's spur calls write into a shadow of the server's records.
        let shadow = self.shadow_for_steps()?;
        let seq = self.next_seq();
        let log = step.log(seq);
        // The started marker: journaled (with the records before it) before the action runs.
        let marker = self.next_record(step.started(&log), Timestamp::now());
        self.pending.push(marker);
        // A fleet run's tree is at its commit before the marker is journaled.
        let marked_now = self.flush_before(true)?;
        self.tell(observer);
        let name = format!("action {seq} {}", step.kind);
        let finished_seq = seq + 1;
        let secrets = &mut self.secrets;
        let tree = &mut self.tree;
        let message = format!(
            "spur run {}: {} action {} ({})",
            self.run_id, step.state, step.index, step.kind
        );
        let mut body_observer = ForwardAsk(&mut *observer);
        let mut run_body = || {
            if !marked_now {
                // The marker is from an earlier attempt and the action's end is not
                // journaled: it may or may not have run. Never run it again silently.
                return Ok(ActionValue::Ambiguous);
            }
            let started = Instant::now();
            let run = body(&log, &mut body_observer, None);
            let committed = commit(tree, &message);
            Ok(match run {
                ActionRun::Finished(result) => {
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    let mut event = step.finished(&result, ms);
                    if let (Event::ActionFinished { commit, .. }, Some(Ok(made))) =
                        (&mut event, &committed)
                    {
                        *commit = Some(made.clone());
                    }
                    ActionValue::Finished {
                        record: Box::new(Record {
                            seq: finished_seq,
                            at: Timestamp::now().rfc3339(),
                            event: secrets.event(event),
                        }),
                        fleet: shadow
                            .as_ref()
                            .map(|s| s.written().map_err(|e| e.to_string())),
                        tree: committed,
                    }
                }
                ActionRun::NeedsAnswer(q) => ActionValue::NeedsAnswer {
                    prompt: q.prompt,
                    choices: q.choices,
                    tree: committed,
                },
            })
        };
        let value = journaled(&mut *self.journal, &name, &mut run_body).map(|(value, _)| value);
        if let Some(socket) = &self.socket {
            socket.write_into(None);
        }
        drop(shadow);
        let value: ActionValue = value?;
        // The tree as the action left it; an action whose tree could not be committed
        // and pushed stops the run (another worker would go on without its changes).
        let tree = match &value {
            ActionValue::Finished { tree, .. } | ActionValue::NeedsAnswer { tree, .. } => {
                tree.clone()
            }
            ActionValue::Ambiguous => None,
        };
        match tree {
            Some(Ok(commit)) => self.follow(Some(&commit)),
            Some(Err(why)) => {
                return Err(engine_error(
                    &name,
                    format!("the action ran, but the run's tree could not be committed and pushed, so no other worker could go on from it: {why}"),
                ))
            }
            None => {}
        }
        match value {
            ActionValue::Finished { record, fleet, .. } => {
                match fleet {
                    Some(Ok(write)) => self.send_write(&name, write, false)?,
                    Some(Err(why)) => {
                        return Err(engine_error(
                            &name,
                            format!("what the action's spur calls wrote could not be read: {why}"),
                        ))
                    }
                    None => {}
                }
                let result = result_of(&record);
                self.pending.push(*record);
                Ok(ActionRun::Finished(result))
            }
            ActionValue::NeedsAnswer {
                prompt, choices, ..
            } => Ok(ActionRun::NeedsAnswer(HitlQuestion { prompt, choices })),
            ActionValue::Ambiguous => Err(RunError::Ambiguous {
                run_id: self.run_id.to_string(),
                state: step.state.to_owned(),
                index: step.index,
                kind: step.kind.to_owned(),
                log,
            }),
        }
    }

    /// The guard's evaluation and its record are one step.
    fn run_guard(
        &mut self,
        step: &GuardStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut GuardBody<'_>,
    ) -> Result<GuardResult, RunError> {
        let seq = self.next_seq();
        let name = format!("guard {seq} {}", step.transition);
        let secrets = &mut self.secrets;
        let tree = &mut self.tree;
        let mut evaluate = || {
            let started = Instant::now();
            let result = body();
            let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            Record {
                seq,
                at: Timestamp::now().rfc3339(),
                event: secrets.event(step.evaluated(&result, us)),
            }
        };
        // A transition without a guard has nothing to evaluate: no step of its own.
        let record = if step.kind == "none" {
            evaluate()
        } else {
            // A guard reads the tree: a fleet run's is at its commit first.
            let mut in_tree = || {
                sync(tree)?;
                Ok(evaluate())
            };
            journaled(&mut *self.journal, &name, &mut in_tree)?.0
        };
        let result = match &record.event {
            Event::GuardEvaluated { passed, detail, .. } => {
                let detail = detail.clone().unwrap_or_default();
                if *passed {
                    GuardResult::pass(detail, Duration::ZERO)
                } else {
                    GuardResult::fail(detail, Duration::ZERO)
                }
            }
            other => return Err(engine_error(&name, format!("a {} record", other.name()))),
        };
        self.pending.push(record);
        self.tell(observer);
        Ok(result)
    }

    fn done_gate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        let name = format!("done-gate {}", self.next_seq());
        // On a fleet the gate decides from the server's records, read now.
        match self.read_fleet() {
            Ok(Some(records)) => return self.fleet_gate(&name, request, records),
            Ok(None) => {}
            Err(e) => {
                return GateAnswer::Deny {
                    verdict: "UNKNOWN".to_owned(),
                    message: format!(
                        "task {} cannot be marked done: its records on the server could not be read: {e}",
                        request.wbs
                    ),
                }
            }
        }
        let gate = &mut *self.gate;
        let mut ask = || FleetGateValue {
            answer: gate_value(gate.evaluate(request)),
            write: None,
            commit: None,
        };
        let message = format!(
            "spur run {}: the done gate of task {}",
            self.run_id, request.wbs
        );
        match in_tree(
            &mut *self.journal,
            &mut self.tree,
            &name,
            &message,
            &mut ask,
        ) {
            Ok(value) => {
                self.follow(value.commit.as_deref());
                gate_answer(value.answer)
            }
            Err(why) => GateAnswer::Deny {
                verdict: "UNKNOWN".to_owned(),
                message: format!("the done gate's answer could not be journaled: {why}"),
            },
        }
    }

    fn wait_for_answer(&mut self, pause: &Pause<'_>) -> Option<Resume> {
        // The paused record and those before it are journaled before the wait.
        self.flush().ok()?;
        self.pauses += 1;
        let name = format!("answer-{}", self.pauses);
        let outcome = pause.outcome();
        let note = serde_json::to_string(&PauseNote {
            outcome: outcome.clone(),
            detail: outcome.detail.clone(),
        })
        .unwrap_or_default();
        let given = PauseAnswer::from_promise(self.journal.promise(&name, &note).ok()?);
        if let Some(tree) = self.tree.as_deref_mut() {
            tree.waited();
        }
        Some(Resume {
            answer: match pause {
                Pause::State { .. } => None,
                Pause::Question { .. } => Some(given.answer),
            },
            answered_by: given.answered_by,
        })
    }
}

/// The observer an action body sees: it may ask (a worker has no terminal: none answers)
/// but its records are the host's to tell.
struct ForwardAsk<'o>(&'o mut dyn RunObserver);

impl RunObserver for ForwardAsk<'_> {
    fn ask(&mut self, question: &HitlQuestion) -> Option<String> {
        self.0.ask(question)
    }
}

/// The result an `action-finished` record tells.
fn result_of(record: &Record) -> ActionResult {
    match &record.event {
        Event::ActionFinished {
            ok,
            error,
            timed_out,
            exit_code,
            set_vars,
            message,
            usage,
            ..
        } => ActionResult {
            ok: *ok,
            error: error.clone(),
            timed_out: *timed_out,
            exit_code: *exit_code,
            set_vars: set_vars.clone(),
            message: message.clone(),
            usage: usage.clone(),
        },
        other => ActionResult::failed(format!("journaled a {} record", other.name())),
    }
}

fn gate_value(answer: GateAnswer) -> GateValue {
    match answer {
        GateAnswer::Noop => GateValue::Noop,
        GateAnswer::Allow {
            reason,
            verdict,
            certificate,
        } => GateValue::Allow {
            reason,
            verdict,
            certificate: certificate.map(|c| match c {
                CertificateReport::Written { path } => CertificateValue::Written { path },
                CertificateReport::Failed {
                    code,
                    message,
                    retry,
                } => CertificateValue::Failed {
                    code: code.to_string(),
                    message,
                    retry,
                },
            }),
        },
        GateAnswer::Deny { verdict, message } => GateValue::Deny { verdict, message },
    }
}

fn gate_answer(value: GateValue) -> GateAnswer {
    match value {
        GateValue::Noop => GateAnswer::Noop,
        GateValue::Allow {
            reason,
            verdict,
            certificate,
        } => GateAnswer::Allow {
            reason,
            verdict,
            certificate: certificate.map(|c| match c {
                CertificateValue::Written { path } => CertificateReport::Written { path },
                CertificateValue::Failed {
                    code,
                    message,
                    retry,
                } => CertificateReport::Failed {
                    code: Code::ALL
                        .iter()
                        .copied()
                        .find(|k| k.to_string() == code)
                        .unwrap_or(Code::RunEngine),
                    message,
                    retry,
                },
            }),
        },
        GateValue::Deny { verdict, message } => GateAnswer::Deny { verdict, message },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::pipeline::{load, CheckedPipeline};
    use crate::run::observer::SilentObserver;
    use crate::run::Durability;
    use crate::source::SourceFile;
    use crate::store::state_dir::StateDir;

    /// A journal kept in a map, as an engine keeps it across attempts. `crash_at`: the
    /// attempt dies inside the body of the step with that name prefix (the body has run,
    /// its value is never journaled).
    #[derive(Default)]
    struct MapJournal {
        values: HashMap<String, String>,
        order: Vec<String>,
        crash_at: Option<&'static str>,
        bodies_run: usize,
    }

    impl StepJournal for MapJournal {
        fn step(
            &mut self,
            name: &str,
            body: &mut dyn FnMut() -> Result<String, String>,
        ) -> Result<String, String> {
            if let Some(value) = self.values.get(name) {
                return Ok(value.clone());
            }
            let value = body()?;
            self.bodies_run += 1;
            if self.crash_at.is_some_and(|p| name.starts_with(p)) {
                self.crash_at = None;
                return Err("the worker died".into());
            }
            self.order.push(name.to_owned());
            self.values.insert(name.to_owned(), value.clone());
            Ok(value)
        }

        fn promise(&mut self, _name: &str, _note: &str) -> Result<String, String> {
            Ok("yes".into())
        }
    }

    struct NoGate;

    impl DoneGate for NoGate {
        fn evaluate(&mut self, _request: &GateRequest<'_>) -> GateAnswer {
            GateAnswer::Noop
        }
    }

    const PIPELINE: &str = r#"
name: p
initialState: a
terminalStates: [c]
vars: {out: ""}
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: 'echo a >> "$out"'}}
  - id: b
    onEnter:
      - {kind: shell, options: {command: 'echo b >> "$out"'}}
  - {id: c}
transitions: [{from: a, to: b}, {from: b, to: c}]
"#;

    fn attempt(dir: &std::path::Path, journal: &mut MapJournal) -> Result<RunOutcome, RunError> {
        let loaded = load(&SourceFile::new("p.yaml", PIPELINE)).unwrap();
        let checked = CheckedPipeline::new(loaded).unwrap().0;
        let settings = RunSettings {
            state_dir: StateDir::at(dir.join(".spur")),
            durability: Durability::Unsafe,
            path_prefix: None,
            spur_bin: None,
            timeouts: Default::default(),
            http_allow: Default::default(),
            policy: crate::policy::PolicySource::Project,
            run_socket: None,
            jq: spur_guards::jq::JqSandbox::in_process(),
        };
        let out = format!("out={}", dir.join("steps.txt").display());
        let vars = crate::run::vars::resolve(checked.pipeline(), None, &[out]).unwrap();
        start_journaled(
            StartRequest {
                pipeline: &checked,
                pipeline_path: dir.join("p.yaml"),
                vars,
                force_done_reason: None,
                worktree: None,
            },
            &settings,
            RunId::parse("20260101T000000Z-00abcd").unwrap(),
            journal,
            &mut NoGate,
            &mut SilentObserver,
            None,
        )
    }

    fn steps(dir: &std::path::Path) -> String {
        std::fs::read_to_string(dir.join("steps.txt")).unwrap_or_default()
    }

    #[test]
    fn a_pause_answer_names_who_gave_it_and_a_bare_one_is_the_answer_itself() {
        let sent = PauseAnswer {
            answer: "ship".into(),
            answered_by: Some("ada via spur ui".into()),
        };
        let value = serde_json::to_string(&sent).unwrap();
        assert_eq!(PauseAnswer::from_promise(value), sent);
        let bare = PauseAnswer::from_promise("ship".into());
        assert_eq!((bare.answer.as_str(), bare.answered_by), ("ship", None));
        // Text that is not exactly the envelope is an answer, not a misread field.
        let odd = r#"{"answer":"ship","by":"x"}"#;
        assert_eq!(PauseAnswer::from_promise(odd.into()).answer, odd);
    }

    #[test]
    fn a_replay_of_a_finished_run_runs_no_step_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = MapJournal::default();
        let first = attempt(dir.path(), &mut journal).unwrap();
        assert_eq!(first.outcome, crate::run::Outcome::Completed);
        assert_eq!(steps(dir.path()), "a\nb\n");
        let bodies = journal.bodies_run;
        let again = attempt(dir.path(), &mut journal).unwrap();
        assert_eq!(again, first);
        assert_eq!(journal.bodies_run, bodies, "no body ran on the replay");
        assert_eq!(steps(dir.path()), "a\nb\n");
        // Two actions (marker batch + action each), the start, the end: six steps.
        assert_eq!(journal.order.len(), 6, "{:?}", journal.order);
    }

    #[test]
    fn an_action_whose_attempt_died_is_ambiguous_on_replay_and_never_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = MapJournal {
            crash_at: Some("action 8"),
            ..MapJournal::default()
        };
        let died = attempt(dir.path(), &mut journal);
        assert!(matches!(died, Err(RunError::Engine(_))), "{died:?}");
        assert_eq!(
            steps(dir.path()),
            "a\nb\n",
            "b ran once, in the attempt that died"
        );
        let replay = attempt(dir.path(), &mut journal);
        match replay {
            Err(RunError::Ambiguous { state, kind, .. }) => {
                assert_eq!((state.as_str(), kind.as_str()), ("b", "shell"));
            }
            other => panic!("expected an ambiguous action, got {other:?}"),
        }
        assert_eq!(steps(dir.path()), "a\nb\n", "neither action ran again");
        // The ambiguity is journaled: a further replay says the same without running b.
        let again = attempt(dir.path(), &mut journal);
        assert!(
            matches!(again, Err(RunError::Ambiguous { .. })),
            "{again:?}"
        );
        assert_eq!(steps(dir.path()), "a\nb\n");
    }
}
