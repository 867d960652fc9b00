//! The host of a run on this machine: the journal file `<protected>/runs/<run-id>/journal.jsonl`,
//! the task lock `.spur/locks/<wbs>.lock`, effects run in process, the done gate given to
//! it, and the interrupt handler following the journal. One `LocalHost` serves one run:
//! dropping it lets go of the interrupt handler first, then of the journal and the lock.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::actions::{ActionResult, ActionRun};
use super::done_gate_port::{DoneGate, GateAnswer, GateRequest};
use super::effect::{ActionStep, GuardStep};
use super::host::{ActionBody, GuardBody, Pause, Resume, RunHost};
use super::interrupt::{self, Activation};
use super::journal::{self, Durability, Event, Journal, JournalContent, Record};
use super::lock::TaskLock;
use super::observer::RunObserver;
use super::run_error::RunError;
use super::run_id::RunId;
use super::secrets::RunSecrets;
use crate::policy::Policy;
use crate::store::chain_key::{key_for_reading, key_for_writing};
use crate::store::state_dir::StateDir;
use crate::store::timestamp::Timestamp;
use crate::store::usage_ledger;
use crate::wbs::Wbs;
use spur_guards::GuardResult;
use spur_process::{Leader, StartHook};

/// The largest action log redacted in place; a larger one is removed rather than kept
/// with a secret in it.
const MAX_LOG_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) struct LocalHost<'g> {
    // Declared in drop order: no `interrupted` record can be written once the journal
    // closed, and the lock outlives both.
    interrupt: Option<Activation>,
    journal: Option<Arc<Mutex<Journal>>>,
    lock: Option<TaskLock>,
    state_dir: StateDir,
    /// The run's directory, once its journal is open (action logs are relative to it).
    run_dir: Option<PathBuf>,
    durability: Durability,
    gate: &'g mut dyn DoneGate,
    /// The run's task, once locked: the steps' spend goes into its usage ledger.
    task: Option<Wbs>,
    /// The run, once its journal is open.
    run_id: Option<RunId>,
}

impl<'g> LocalHost<'g> {
    pub(crate) fn new(
        state_dir: &StateDir,
        durability: Durability,
        gate: &'g mut dyn DoneGate,
    ) -> Self {
        Self {
            interrupt: None,
            journal: None,
            lock: None,
            state_dir: state_dir.clone(),
            run_dir: None,
            durability,
            gate,
            task: None,
            run_id: None,
        }
    }

    fn journal_path(&self, run_id: &RunId) -> PathBuf {
        run_id.dir_in(&self.state_dir).join("journal.jsonl")
    }

    /// Make `journal` the run's, and the one an interrupt writes to.
    fn open(&mut self, journal: Journal, run_id: &RunId) {
        self.interrupt = None;
        let journal = Arc::new(Mutex::new(journal));
        self.interrupt = Some(interrupt::activate(Arc::clone(&journal), run_id));
        self.journal = Some(journal);
        self.run_id = Some(run_id.clone());
    }

    /// The hook that journals an action's process group (`action-process`, durable) once the
    /// process runs and before it is waited for. Appended straight to the journal, not to
    /// the observer: the group is for a resume, not for people.
    fn process_recorder(&self, step: &ActionStep<'_>) -> Result<StartHook, RunError> {
        let journal = Arc::clone(self.journal.as_ref().ok_or_else(|| {
            RunError::JournalIo(std::io::Error::other("no journal is open for this run"))
        })?);
        let (state, phase, index) = (step.state.to_owned(), step.phase, step.index);
        let spur = Leader::this_process();
        Ok(StartHook::new(move |leader: Leader| {
            let mut journal = journal.lock().unwrap_or_else(|p| p.into_inner());
            let event = Event::ActionProcess {
                state: state.clone(),
                phase,
                index,
                pgid: leader.pgid,
                start_time: leader.start_time,
                spur_pid: spur.pgid,
                spur_start_time: spur.start_time,
            };
            journal
                .append(event, Timestamp::now())
                .map(|_| ())
                .map_err(|e| format!("cannot journal its process group: {e}"))
        }))
    }

    /// Rewrite an action's log with the run's secrets replaced, once the action is over
    /// (its process wrote the file itself). Nothing to do without secrets or a log.
    fn redact_log(&self, log: &str) -> Result<(), RunError> {
        let redactor = self.journal()?.secrets().redactor().clone();
        let Some(run_dir) = &self.run_dir else {
            return Ok(());
        };
        if redactor.is_empty() {
            return Ok(());
        }
        let path = run_dir.join(log);
        let bytes = match crate::store::bounded_read::read_bounded(&path, MAX_LOG_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.is_missing() => return Ok(()),
            // A log too large or not a file is not kept: it could hold a secret.
            Err(_) => {
                return std::fs::remove_file(&path).map_err(|source| RunError::RunDir {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        if let std::borrow::Cow::Owned(redacted) = redactor.bytes(&bytes) {
            crate::store::atomic_file::write_atomic(&path, &redacted).map_err(|source| {
                RunError::RunDir {
                    path: path.display().to_string(),
                    source,
                }
            })?;
        }
        Ok(())
    }

    /// Put what a task run's step spent into the task's usage ledger, before its
    /// `action-finished` is journaled (a crash in between leaves the spend on record). A
    /// ledger that cannot take it fails the step: a spend that is not on record is not
    /// held to any budget.
    fn record_spend(&self, step: &ActionStep<'_>, seq: u64, result: &mut ActionResult) {
        let (Some(wbs), Some(run_id), Some(usage)) = (&self.task, &self.run_id, &result.usage)
        else {
            return;
        };
        let spend = usage_ledger::Spend {
            run: run_id.as_str(),
            action: seq,
            state: step.state,
            kind: step.kind,
            usage,
        };
        if let Err(e) = usage_ledger::append(&self.state_dir, wbs, &spend) {
            result.ok = false;
            let why = format!("{}: its usage cannot be recorded: {e}", step.kind);
            result.error = Some(match result.error.take() {
                Some(before) => format!("{before}; {why}"),
                None => why,
            });
        }
    }

    fn journal(&self) -> Result<MutexGuard<'_, Journal>, RunError> {
        let journal = self.journal.as_ref().ok_or_else(|| {
            RunError::JournalIo(std::io::Error::other("no journal is open for this run"))
        })?;
        Ok(journal.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl RunHost for LocalHost<'_> {
    fn now(&mut self) -> Timestamp {
        Timestamp::now()
    }

    fn new_run_id(&mut self) -> RunId {
        RunId::generate(self.now())
    }

    fn lock_task(&mut self, wbs: &Wbs, run_id: &RunId) -> Result<(), RunError> {
        self.lock = None;
        self.lock = Some(TaskLock::acquire(
            &self.state_dir.lock_path(wbs),
            wbs.as_str(),
            run_id.as_str(),
        )?);
        self.task = Some(wbs.clone());
        Ok(())
    }

    fn create_journal(&mut self, run_id: &RunId) -> Result<(), RunError> {
        let run_dir = run_id.dir_in(&self.state_dir);
        std::fs::create_dir_all(run_dir.join("actions")).map_err(|source| RunError::RunDir {
            path: run_dir.display().to_string(),
            source,
        })?;
        let key = key_for_writing(&self.state_dir)?;
        let journal = Journal::create(&run_dir.join("journal.jsonl"), self.durability, key)
            .map_err(RunError::JournalIo)?;
        self.open(journal, run_id);
        self.run_dir = Some(run_dir);
        Ok(())
    }

    fn read_journal(&mut self, run_id: &RunId) -> Result<JournalContent, RunError> {
        let path = self.journal_path(run_id);
        if !path.exists() {
            return Err(RunError::RunNotFound(
                run_id.to_string(),
                self.state_dir.root().display().to_string(),
            ));
        }
        Ok(journal::read(&path, &key_for_reading(&self.state_dir))?)
    }

    fn reopen_journal(&mut self, run_id: &RunId, content: &JournalContent) -> Result<(), RunError> {
        let key = key_for_writing(&self.state_dir)?;
        let journal = Journal::reopen(&self.journal_path(run_id), content, self.durability, key)
            .map_err(RunError::JournalIo)?;
        self.open(journal, run_id);
        self.run_dir = Some(run_id.dir_in(&self.state_dir));
        Ok(())
    }

    fn keep_policy(&mut self, policy: &Policy) -> Result<(), RunError> {
        Ok(policy.store(&self.state_dir)?)
    }

    fn kept_policy(&mut self, sha256: &str) -> Result<Policy, RunError> {
        Ok(Policy::stored(&self.state_dir, sha256)?)
    }

    /// Also redacts the run's action logs already there: a resumed run may hold the log of
    /// an action whose spur was killed before it could redact it.
    fn keep_secrets(&mut self, secrets: RunSecrets) {
        let redact_existing = !secrets.redactor().is_empty();
        if let Ok(mut journal) = self.journal() {
            journal.keep_secrets(secrets);
        }
        let Some(actions) = self.run_dir.as_ref().map(|d| d.join("actions")) else {
            return;
        };
        if !redact_existing {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&actions) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            // Best effort: a log that cannot be rewritten now is rewritten by no one later,
            // and the run's records (the journal) never held the value.
            let _ = self.redact_log(&format!("actions/{}", name.to_string_lossy()));
        }
    }

    fn redactor(&mut self) -> crate::redact::Redactor {
        match self.journal() {
            Ok(journal) => journal.secrets().redactor().clone(),
            Err(_) => crate::redact::Redactor::default(),
        }
    }

    fn redact(&mut self, text: &str) -> String {
        match self.journal() {
            Ok(journal) => journal.secrets().text(text),
            Err(_) => text.to_owned(),
        }
    }

    fn append(&mut self, event: Event, observer: &mut dyn RunObserver) -> Result<Record, RunError> {
        if interrupt::is_interrupting() {
            // The interrupt handler owns the journal now; stop before any further effect.
            interrupt::wait_for_exit();
        }
        let at = self.now();
        let record = self
            .journal()?
            .append(event, at)
            .map_err(RunError::JournalIo)?;
        observer.record(&record);
        Ok(record)
    }

    fn run_action(
        &mut self,
        step: &ActionStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut ActionBody<'_>,
    ) -> Result<ActionRun, RunError> {
        let seq = self.journal()?.next_seq();
        let log = step.log(seq);
        self.append(step.started(&log), observer)?;
        let started = Instant::now();
        let mut run = body(&log, observer, Some(self.process_recorder(step)?));
        if let ActionRun::Finished(result) = &mut run {
            self.record_spend(step, seq, result);
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.append(step.finished(result, duration_ms), observer)?;
        }
        self.redact_log(&log)?;
        Ok(run)
    }

    fn run_guard(
        &mut self,
        step: &GuardStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut GuardBody<'_>,
    ) -> Result<GuardResult, RunError> {
        let started = Instant::now();
        let result = body();
        let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.append(step.evaluated(&result, duration_us), observer)?;
        Ok(result)
    }

    fn done_gate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        self.gate.evaluate(request)
    }

    /// No one waits here: the process ends paused and `spur continue` brings the answer.
    fn wait_for_answer(&mut self, _pause: &Pause<'_>) -> Option<Resume> {
        None
    }
}
