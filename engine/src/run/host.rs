//! The run host: everything the runner needs from the world it runs in. It appends the
//! journal's events, runs effects (actions, guards) between their records, asks the done
//! gate, waits for a pause's answer, holds the task lock, tells the time and makes run ids.
//! [`super::local_host::LocalHost`] is the journal file and lock of `.spur/`; a host that
//! journals elsewhere (a durable workflow engine) implements the same calls and bridges
//! to async itself: the runner stays synchronous.

use super::actions::{ActionRun, HitlQuestion};
use super::done_gate_port::{GateAnswer, GateRequest};
use super::effect::{ActionStep, GuardStep};
use super::journal::{Event, JournalContent, Record};
use super::observer::RunObserver;
use super::outcome::RunOutcome;
use super::run_error::RunError;
use super::run_id::RunId;
use super::secrets::RunSecrets;
use crate::policy::Policy;
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;
use spur_guards::GuardResult;

/// An action's body, run by the host between its records: it gets its log file (relative
/// to the run directory) and the observer (to ask the operator on a terminal).
/// An action's body: given its log (relative to the run directory), the observer, and the
/// hook that journals each process it starts (`None` for a host that keeps no record).
pub(crate) type ActionBody<'b> =
    dyn FnMut(&str, &mut dyn RunObserver, Option<spur_process::StartHook>) -> ActionRun + 'b;

/// A guard's evaluation, run by the host before its record.
pub(crate) type GuardBody<'b> = dyn FnMut() -> GuardResult + 'b;

/// What a run paused for.
#[derive(Debug, Clone, Copy)]
// What the host is told; LocalHost, the only host so far, asks nothing of it yet.
#[allow(dead_code)]
pub(crate) enum Pause<'a> {
    /// The state declares `pause: true`.
    State {
        state: &'a str,
        /// What the run stops with when no answer comes in this call.
        outcome: &'a RunOutcome,
    },
    /// An hitl action asks this and no one at a terminal answered.
    Question {
        state: &'a str,
        question: &'a HitlQuestion,
        /// What the run stops with when no answer comes in this call.
        outcome: &'a RunOutcome,
    },
}

impl Pause<'_> {
    /// What the run stops with when no answer comes in this call.
    pub(crate) fn outcome(&self) -> &RunOutcome {
        match self {
            Pause::State { outcome, .. } | Pause::Question { outcome, .. } => outcome,
        }
    }
}

/// How a paused run goes on within the same call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resume {
    /// The answer to the question (one of its choices), or none for a state pause.
    pub(crate) answer: Option<String>,
    /// Who gave it (`spur continue --answered-by`), when the answer says.
    pub(crate) answered_by: Option<String>,
}

pub(crate) trait RunHost {
    /// The time records are stamped with and run ids are made from.
    fn now(&mut self) -> Timestamp;

    /// A new run id, unique among the runs this host keeps.
    fn new_run_id(&mut self) -> RunId;

    /// Hold the task lock of `wbs` for `run_id` while the host serves the run: a second run
    /// of the task is refused until then.
    fn lock_task(&mut self, wbs: &Wbs, run_id: &RunId) -> Result<(), RunError>;

    /// Begin the journal of a new run.
    fn create_journal(&mut self, run_id: &RunId) -> Result<(), RunError>;

    /// The complete records of `run_id`'s journal so far.
    fn read_journal(&mut self, run_id: &RunId) -> Result<JournalContent, RunError>;

    /// Go on with `run_id`'s journal after `content`, the records read last.
    fn reopen_journal(&mut self, run_id: &RunId, content: &JournalContent) -> Result<(), RunError>;

    /// Keep the snapshot of the policy a run pins as it starts, where the run (resumed) and
    /// spur calls of its steps read it back by its hash.
    fn keep_policy(&mut self, policy: &Policy) -> Result<(), RunError>;

    /// The snapshot of the policy whose hash a run's `run-started` recorded, checked
    /// against that hash.
    fn kept_policy(&mut self, sha256: &str) -> Result<Policy, RunError>;

    /// Keep `secrets` out of every record appended from now on (and out of action logs):
    /// called once the journal is created or reopened, before the first append.
    fn keep_secrets(&mut self, secrets: RunSecrets);

    /// The redactor of the run's secrets known so far.
    fn redactor(&mut self) -> crate::redact::Redactor;

    /// `text` with the run's secrets (those learnt from its records too) replaced.
    fn redact(&mut self, text: &str) -> String;

    /// Append one event and tell the observer. A durable event is durable when this
    /// returns, so a crash after it never loses it.
    fn append(&mut self, event: Event, observer: &mut dyn RunObserver) -> Result<Record, RunError>;

    /// Run one action: `action-started` durable first (a start without a finish is an
    /// ambiguous action on resume), then the body, then `action-finished` once it
    /// finished (none when it needs an answer first).
    fn run_action(
        &mut self,
        step: &ActionStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut ActionBody<'_>,
    ) -> Result<ActionRun, RunError>;

    /// Evaluate one guard, then journal `guard-evaluated` with its result and duration.
    fn run_guard(
        &mut self,
        step: &GuardStep<'_>,
        observer: &mut dyn RunObserver,
        body: &mut GuardBody<'_>,
    ) -> Result<GuardResult, RunError>;

    /// Ask the done gate: the runner's only way to it.
    fn done_gate(&mut self, request: &GateRequest<'_>) -> GateAnswer;

    /// Wait for a paused run to be told to go on, after its `paused` record. `None`: this
    /// host cannot wait, the run stops paused and a later `spur continue` resumes it.
    fn wait_for_answer(&mut self, pause: &Pause<'_>) -> Option<Resume>;
}
