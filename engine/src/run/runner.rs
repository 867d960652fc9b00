//! The run loop (ARCHITECTURE.md, *Durability*). One visit of a state:
//! onEnter in order (each action sees the vars set by the ones before it) → `pause: true`?
//! → terminal? → the first transition whose guard passes, in declaration order, among
//! the state's own transitions (O(out-degree)) → the done gate when the target is a
//! success terminal whose terminal reason is `done`, in a run with a wbs → onExit → one
//! durable commit of the transition → enter the target. A resumed run that stands in such
//! a terminal asks the gate again first. Everything it journals, runs or asks goes through
//! its [`RunHost`].

use std::path::PathBuf;

use super::child_env::inject_builtin_vars;
use super::cursor::Cursor;
use super::done_gate_port::DoneGate;
use super::host::RunHost;
use super::journal::{Durability, Event, Phase, Record};
use super::local_host::LocalHost;
use super::observer::RunObserver;
use super::outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
use super::plan::Plan;
use super::replay::{Position, SequenceProgress};
use super::resumable::{self, GoOn};
use super::run_error::RunError;
use super::run_id::RunId;
use super::secret_config::config_secrets;
use super::secrets::RunSecrets;
use super::sequence::SequenceEnd;
use super::step_timeouts::StepTimeouts;
use super::vars::{self, VarError, Vars};
use crate::pipeline::{CheckedPipeline, Pipeline, TerminalReason};
use crate::policy::{project_policy, PinnedPolicy, PolicyError, PolicySource};
use crate::redact;
use crate::store::digest::sha256_hex;
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// How runs are carried out on this machine.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The project's state directory (`.spur/`), where journals and locks live.
    pub state_dir: StateDir,
    /// Whether durable journal records are fsync'd.
    pub durability: Durability,
    /// Put first on PATH for shell steps (e.g. the embedded-jq shim directory).
    pub path_prefix: Option<PathBuf>,
    /// The spur executable, exported as `$SPUR_BIN` (and the `spurBin` var when the
    /// pipeline declares it and the run does not set it).
    pub spur_bin: Option<PathBuf>,
    /// How long a shell step, agent step or shell guard without its own `timeoutMs` may run.
    pub timeouts: StepTimeouts,
    /// Where the run's jq guards and `json.update` expressions are evaluated: for spur, one
    /// worker process per run (`spur __jq-worker`), started as a run with jq guards starts, else on first use.
    pub jq: spur_guards::jq::JqSandbox,
    /// Where `http.request` steps may connect (`http.allow`; empty denies all).
    pub http_allow: super::http_allow::HttpAllowList,
    /// The policy a new run pins: `Project`, the config as it is when the run starts; or,
    /// for a run started from a step of another run, that run's pin (`crate::policy`).
    pub policy: PolicySource,
    /// The socket through which `spur` calls from steps reach this process
    /// ([`super::nested_call`]); named in their environment as `SPUR_RUN_SOCKET`.
    pub run_socket: Option<std::sync::Arc<super::nested_call::RunSocket>>,
}

/// A new run.
pub struct StartRequest<'a> {
    /// Only a checked pipeline runs: no unknown state, undefined template or bad jq.
    pub pipeline: &'a CheckedPipeline,
    /// The pipeline file, recorded in the journal for `spur continue`.
    pub pipeline_path: PathBuf,
    /// Resolved vars (see [`super::vars::resolve`]).
    pub vars: Vars,
    /// `--force-done --reason R`.
    pub force_done_reason: Option<String>,
    /// `--worktree`: the run's id, chosen before it starts, and the worktree made for it.
    pub worktree: Option<(RunId, super::git_worktree::WorktreeRecord)>,
}

/// Resuming a paused or interrupted run.
pub struct ResumeRequest<'a> {
    /// The pipeline, checked; its text must match the run's recorded hash unless allowed.
    pub pipeline: &'a CheckedPipeline,
    /// The run to resume.
    pub run_id: RunId,
    /// `--answer`: the answer to the question the run is paused on.
    pub answer: Option<String>,
    /// `--rerun-ambiguous`: rerun an action that started and never finished.
    pub rerun_ambiguous: bool,
    /// `--allow-changed-pipeline`: resume though the pipeline text changed.
    pub allow_changed_pipeline: bool,
    /// `--force-done --reason R` given to this resume. The reason the run was started with
    /// is in its journal, a file a step can write: like a done-gate answer, it is not
    /// taken from there.
    pub force_done_reason: Option<String>,
    /// `--var NAME=VALUE` given to the resume: only secret vars, which the journal holds
    /// as the marker and so must be given again (book: *Secrets*).
    pub secret_vars: Vec<String>,
    /// `--answered-by WHO`: who gave the answer, recorded with it in `resumed`.
    pub answered_by: Option<String>,
}

/// Retrying a failed run (`spur retry`).
pub struct RetryRequest<'a> {
    /// The pipeline, checked; its text must match the run's recorded hash unless allowed.
    pub pipeline: &'a CheckedPipeline,
    /// The run to retry.
    pub run_id: RunId,
    /// `--allow-changed-pipeline`: retry though the pipeline text changed.
    pub allow_changed_pipeline: bool,
    /// `--force-done --reason R` given to this retry.
    pub force_done_reason: Option<String>,
    /// `--var NAME=VALUE`: secret vars given again.
    pub secret_vars: Vec<String>,
}

/// Start a run on this machine (`LocalHost`) and drive it to a terminal state or a pause.
pub fn start(
    request: StartRequest<'_>,
    settings: &RunSettings,
    observer: &mut dyn RunObserver,
    gate: &mut dyn DoneGate,
) -> Result<RunOutcome, RunError> {
    let mut host = LocalHost::new(&settings.state_dir, settings.durability, gate);
    start_on(request, settings, &mut host, observer)
}

/// Resume a run of this machine (`LocalHost`) from its journal.
pub fn resume(
    request: ResumeRequest<'_>,
    settings: &RunSettings,
    observer: &mut dyn RunObserver,
    gate: &mut dyn DoneGate,
) -> Result<RunOutcome, RunError> {
    let mut host = LocalHost::new(&settings.state_dir, settings.durability, gate);
    resume_on(request, settings, &mut host, observer)
}

/// Start a run on `host` and drive it to a terminal state or a pause.
/// The run's socket answers its steps' calls as this run, whatever run id a step names.
fn serve_nested_calls_for(settings: &RunSettings, run_id: &RunId) {
    if let Some(socket) = &settings.run_socket {
        socket.serve_run(run_id);
    }
}

pub(crate) fn start_on(
    request: StartRequest<'_>,
    settings: &RunSettings,
    host: &mut dyn RunHost,
    observer: &mut dyn RunObserver,
) -> Result<RunOutcome, RunError> {
    let pipeline = request.pipeline.pipeline();
    let mut vars = request.vars;
    let run_id = match &request.worktree {
        Some((run_id, _)) => run_id.clone(),
        None => host.new_run_id(),
    };
    serve_nested_calls_for(settings, &run_id);
    inject_builtin_vars(pipeline, &mut vars, &run_id, settings);
    let wbs = wbs_of(&vars)?;
    if wbs.is_none() && request.force_done_reason.is_some() {
        return Err(RunError::ForceWithoutTask);
    }
    let unset = super::preflight::unset_template_vars(pipeline, &vars);
    if !unset.is_empty() {
        return Err(RunError::UnsetVars { names: unset });
    }
    if super::preflight::empty_task_var(pipeline, &vars) {
        return Err(RunError::EmptyTask);
    }
    let plan = Plan::new(pipeline)?;
    if plan.uses_jq_worker() {
        // Its start-up overlaps with the run's own (journal, lock, policy).
        settings.jq.start_early();
    }
    let secrets = RunSecrets::new(pipeline, &config_secrets(&settings.state_dir)?, &vars);
    // The gate's policy as the run starts: the run and its steps' spur calls keep it. The
    // config's must be the one a person approved (the approval was made before any step
    // of this run could write the config; a nested run keeps its outer run's pin).
    let policy = match &settings.policy {
        PolicySource::Project => {
            let policy = project_policy(&settings.state_dir)?.0;
            crate::policy::approval::require(&settings.state_dir, &policy)?;
            policy
        }
        PolicySource::Pinned(outer) => outer.policy().clone(),
    };
    let initial = plan
        .graph
        .initial()
        .ok_or_else(|| RunError::UnknownState(pipeline.initial_state.value.clone()))?;
    if let Some(w) = &wbs {
        host.lock_task(w, &run_id)?;
    }
    host.create_journal(&run_id)?;
    observer.run_id(run_id.as_str());
    host.keep_secrets(secrets);
    host.keep_policy(&policy)?;
    create_artifact_dir(&settings.state_dir)?;
    let mut run = Run {
        facts: Facts {
            pipeline,
            plan,
            run_dir: run_id.dir_in(&settings.state_dir),
            run_id,
            settings,
            wbs,
            force_reason: request.force_done_reason,
            policy: PolicySource::Project,
        },
        vars,
        host,
        observer,
        entered_via: None,
        gated: None,
        gate_report: None,
        forced: false,
        bound_base: 0,
    };
    let started = run.append(Event::RunStarted {
        pipeline: request.pipeline_path.display().to_string(),
        pipeline_name: pipeline.name.value.clone(),
        pipeline_sha256: sha256_hex(pipeline.source.text().as_bytes()),
        vars: run.vars.clone(),
        wbs: run.facts.wbs.as_ref().map(|w| w.to_string()),
        force_done_reason: run.facts.force_reason.clone(),
        policy_sha256: Some(policy.sha256().to_owned()),
        worktree: request.worktree.map(|(_, record)| record),
    })?;
    run.facts.policy = PolicySource::Pinned(PinnedPolicy::new(
        run.facts.run_id.as_str(),
        policy,
        started.at,
    ));
    let outcome = run.enter_initial(Cursor::entering(initial, 0));
    run.redacted(outcome)
}

/// Resume a run of `host` from its journal, once [`resumable::check`] let it go on.
pub(crate) fn resume_on(
    request: ResumeRequest<'_>,
    settings: &RunSettings,
    host: &mut dyn RunHost,
    observer: &mut dyn RunObserver,
) -> Result<RunOutcome, RunError> {
    serve_nested_calls_for(settings, &request.run_id);
    let resumable = resumable::check(&request, GoOn::Continue, settings, host)?;
    held_to_approval(settings)?;
    let state = resumable.state;
    let (mut run, position) = reopen(&request, resumable, settings, host, observer)?;
    run.entered_via = position.transitions.last().map(|t| t.transition);
    run.append(Event::Resumed {
        answer: request.answer.clone(),
        rerun_ambiguous: request.rerun_ambiguous,
        force_done_reason: request.force_done_reason.clone(),
        answered_by: request.answered_by.clone(),
    })?;
    if let Some(answer) = &request.answer {
        run.vars.insert("__hitlAnswer".into(), answer.clone());
    }
    let mut cursor = Cursor::resumed(&position, state, request.answer);
    let outcome = if position.state.is_none() {
        cursor.enter = SequenceProgress::default();
        run.enter_initial(cursor)
    } else {
        run.drive(cursor)
    };
    run.redacted(outcome)
}

/// Retry a failed run of this machine (`LocalHost`): it re-enters the state it failed in,
/// or the one it left for a failure terminal, and goes on from there.
pub fn retry(
    request: RetryRequest<'_>,
    settings: &RunSettings,
    observer: &mut dyn RunObserver,
    gate: &mut dyn DoneGate,
) -> Result<RunOutcome, RunError> {
    let mut host = LocalHost::new(&settings.state_dir, settings.durability, gate);
    retry_on(request, settings, &mut host, observer)
}

/// Retry a failed run of `host`: one durable `retried` record after its failed end, then a
/// new visit of the state it goes on from (its onEnter runs again) with a fresh iteration
/// bound. What the run did before stays as it is; the done gate is asked as for any run.
pub(crate) fn retry_on(
    request: RetryRequest<'_>,
    settings: &RunSettings,
    host: &mut dyn RunHost,
    observer: &mut dyn RunObserver,
) -> Result<RunOutcome, RunError> {
    let request = ResumeRequest {
        pipeline: request.pipeline,
        run_id: request.run_id,
        answer: None,
        rerun_ambiguous: false,
        allow_changed_pipeline: request.allow_changed_pipeline,
        force_done_reason: request.force_done_reason,
        secret_vars: request.secret_vars,
        answered_by: None,
    };
    serve_nested_calls_for(settings, &request.run_id);
    let resumable = resumable::check(&request, GoOn::Retry, settings, host)?;
    held_to_approval(settings)?;
    let state = resumable.state;
    let (mut run, position) = reopen(&request, resumable, settings, host, observer)?;
    run.append(Event::Retried {
        state: run.facts.state_id(state).to_owned(),
        iteration: position.iteration,
        force_done_reason: request.force_done_reason.clone(),
    })?;
    run.bound_base = position.iteration;
    let mut cursor = Cursor::entering(state, position.iteration);
    cursor.last_action_ok = position.last_action_ok;
    let outcome = run.enter_initial(cursor);
    run.redacted(outcome)
}

/// The run a resume or retry goes on with, its journal reopened, and where it stood.
fn reopen<'p, 'h>(
    request: &ResumeRequest<'p>,
    resumable: resumable::Resumable,
    settings: &'p RunSettings,
    host: &'h mut dyn RunHost,
    observer: &'h mut dyn RunObserver,
) -> Result<(Run<'p, 'h>, Position), RunError> {
    let position = resumable.position;
    let policy = pinned_at_start(host, &request.run_id, &position)?;
    let config = config_secrets(&settings.state_dir)?;
    let mut vars = position.vars.clone();
    let secrets = given_secrets(request, &config, &mut vars)?;
    host.reopen_journal(&request.run_id, &resumable.content)?;
    observer.run_id(request.run_id.as_str());
    host.keep_secrets(secrets);
    create_artifact_dir(&settings.state_dir)?;
    let run = Run {
        facts: Facts {
            pipeline: request.pipeline.pipeline(),
            plan: resumable.plan,
            run_dir: request.run_id.dir_in(&settings.state_dir),
            run_id: request.run_id.clone(),
            settings,
            wbs: resumable.wbs,
            force_reason: request.force_done_reason.clone(),
            policy,
        },
        vars,
        host,
        observer,
        entered_via: None,
        gated: None,
        gate_report: None,
        forced: false,
        bound_base: position.bound_base,
    };
    Ok((run, position))
}

/// A person's resume or retry (not a step's: its run was held to the approval when it
/// started) goes on only while the config's policy is the approved one, as a start does:
/// a step of the run may have weakened it, and the person is told before anything runs.
/// A config that cannot be read is left to the gate, which denies under it.
fn held_to_approval(settings: &RunSettings) -> Result<(), RunError> {
    if let PolicySource::Project = settings.policy {
        if let Ok((policy, _)) = project_policy(&settings.state_dir) {
            crate::policy::approval::require(&settings.state_dir, &policy)?;
        }
    }
    Ok(())
}

/// The policy a resumed run pinned when it started: its snapshot, checked against the hash
/// in the journal's `run-started`.
fn pinned_at_start(
    host: &mut dyn RunHost,
    run_id: &RunId,
    position: &Position,
) -> Result<PolicySource, RunError> {
    let pinned = |why: String| PolicyError::Pinned {
        run_id: run_id.to_string(),
        why,
    };
    let sha256 = position
        .policy_sha256
        .as_deref()
        .ok_or_else(|| pinned("its run-started records no policy".to_owned()))?;
    let policy = host
        .kept_policy(sha256)
        .map_err(|e| pinned(e.to_string()))?;
    Ok(PolicySource::Pinned(PinnedPolicy::new(
        run_id.as_str(),
        policy,
        position.started_at.clone(),
    )))
}

/// A resumed run's vars with its secrets given again: the journal holds each secret var as
/// the marker, so each must come with `--var`; a `--var` for any other var is refused (a
/// resumed run keeps the vars it started with). The secrets of the resumed run.
fn given_secrets(
    request: &ResumeRequest<'_>,
    config: &[String],
    vars: &mut Vars,
) -> Result<RunSecrets, RunError> {
    let pipeline = request.pipeline.pipeline();
    let names = RunSecrets::new(pipeline, config, &Vars::new());
    for pair in &request.secret_vars {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(VarError::NotAPair(vars::shown_pair(pipeline, pair)).into());
        };
        if !names.is_secret(name) || pipeline.var_default(name).is_none() {
            return Err(RunError::NotASecret(name.to_owned()));
        }
        vars.insert(name.to_owned(), value.to_owned());
    }
    let missing: Vec<String> = names
        .names()
        .filter(|name| vars.get(*name).map(String::as_str) == Some(redact::MARKER))
        .map(str::to_owned)
        .collect();
    if !missing.is_empty() {
        return Err(RunError::SecretNotGiven {
            run_id: request.run_id.to_string(),
            names: missing,
        });
    }
    Ok(RunSecrets::new(pipeline, config, vars))
}

/// What does not change while a run goes on.
pub(super) struct Facts<'p> {
    pub(super) pipeline: &'p Pipeline,
    pub(super) plan: Plan,
    pub(super) run_id: RunId,
    pub(super) run_dir: PathBuf,
    pub(super) settings: &'p RunSettings,
    pub(super) wbs: Option<Wbs>,
    pub(super) force_reason: Option<String>,
    /// The policy the run pinned as it started (the gate's and `verify.run`'s).
    pub(super) policy: PolicySource,
}

impl Facts<'_> {
    pub(super) fn state_id(&self, state: usize) -> &str {
        self.pipeline
            .states
            .get(state)
            .map_or("", |s| s.id.value.as_str())
    }
}

pub(super) struct Run<'p, 'h> {
    pub(super) facts: Facts<'p>,
    pub(super) vars: Vars,
    pub(super) host: &'h mut dyn RunHost,
    pub(super) observer: &'h mut dyn RunObserver,
    /// The transition that entered the current state (its `terminalReason` applies).
    pub(super) entered_via: Option<usize>,
    /// The state the done gate, asked by this process, let the run into.
    pub(super) gated: Option<usize>,
    pub(super) gate_report: Option<DoneGateReport>,
    pub(super) forced: bool,
    /// Transitions taken before the last retry: the iteration bound counts from here.
    pub(super) bound_base: u32,
}

impl Run<'_, '_> {
    /// The outcome as it may be shown: its texts (and those of an error rendered from a
    /// value) without the run's secrets.
    fn redacted(&mut self, outcome: Result<RunOutcome, RunError>) -> Result<RunOutcome, RunError> {
        let mut outcome = match outcome {
            Ok(outcome) => outcome,
            // The errors whose text holds something rendered from a value.
            Err(RunError::GuardCompile(mut e)) => {
                e.message = self.host.redact(&e.message);
                return Err(RunError::GuardCompile(e));
            }
            Err(RunError::Template(mut e)) => {
                e.message = self.host.redact(&e.message);
                return Err(RunError::Template(e));
            }
            Err(e) => return Err(e),
        };
        outcome.detail = outcome.detail.map(|d| self.host.redact(&d));
        if let Some(gate) = &mut outcome.done_gate {
            gate.message = gate.message.take().map(|m| self.host.redact(&m));
        }
        Ok(outcome)
    }

    pub(super) fn append(&mut self, event: Event) -> Result<Record, RunError> {
        self.host.append(event, &mut *self.observer)
    }

    /// Enter the initial state (the gate applies if it is itself a success terminal).
    fn enter_initial(&mut self, cursor: Cursor) -> Result<RunOutcome, RunError> {
        if let Some(denied) = self.gate_here(&cursor)? {
            return Ok(denied);
        }
        let state = self.facts.state_id(cursor.state).to_owned();
        self.append(Event::StateEntered {
            state,
            iteration: cursor.iteration,
        })?;
        self.drive(cursor)
    }

    fn drive(&mut self, mut c: Cursor) -> Result<RunOutcome, RunError> {
        let pipeline = self.facts.pipeline;
        loop {
            let Some(state) = pipeline.states.get(c.state) else {
                return Err(RunError::UnknownState(c.state.to_string()));
            };
            // 0. A state that certifies the task is stood in only with this process's
            // allow (a resumed run's earlier allow was another process's).
            if let Some(denied) = self.gate_here(&c)? {
                return Ok(denied);
            }
            // 1. onEnter, in order; each action sees the vars the ones before it set.
            if !c.enter_complete {
                match self.sequence(&mut c, Phase::Enter)? {
                    SequenceEnd::Done => c.enter_complete = true,
                    SequenceEnd::Failed { reason, detail } => {
                        return self.finish(
                            &c,
                            Outcome::Failed,
                            StopReason::ActionFailed,
                            reason,
                            Some(detail),
                        );
                    }
                    SequenceEnd::NeedsAnswer { index, question } => {
                        if let Some(paused) = self.pause_for_answer(&mut c, index, &question)? {
                            return Ok(paused);
                        }
                        continue;
                    }
                }
            }
            // 2. pause: true stops after onEnter (once per visit), a terminal state too: the
            // reference engine checks the pause before the terminal.
            if state.pause && !c.answered && !c.resumed_from_pause {
                if let Some(paused) = self.pause_state(&mut c)? {
                    return Ok(paused);
                }
            }
            // 3. A terminal state ends the run.
            if self.facts.plan.graph.is_terminal(c.state) {
                return self.finish_terminal(&c);
            }
            // 4. The first transition whose guard passes, in declaration order.
            let chosen = match c.chosen {
                Some(t) => t,
                None => {
                    if c.iteration.saturating_sub(self.bound_base) >= pipeline.iteration_bound.value
                    {
                        let detail = format!(
                            "iterationBound {} reached at state {:?}",
                            pipeline.iteration_bound.value, state.id.value
                        );
                        return self.finish(
                            &c,
                            Outcome::Failed,
                            StopReason::IterationBoundExceeded,
                            TerminalReason::RetryExhausted,
                            Some(detail),
                        );
                    }
                    match self.select(&c)? {
                        Some(t) => t,
                        None => {
                            let detail = format!(
                                "no transition out of {:?} passed its guard",
                                state.id.value
                            );
                            return self.finish(
                                &c,
                                Outcome::Failed,
                                StopReason::NoPassingTransition,
                                TerminalReason::FailedGuard,
                                Some(detail),
                            );
                        }
                    }
                }
            };
            c.chosen = Some(chosen);
            let Some(transition) = pipeline.transitions.get(chosen) else {
                return Err(RunError::UnknownState(format!("transition {chosen}")));
            };
            let target = self
                .facts
                .plan
                .graph
                .state_index(&transition.to.value)
                .ok_or_else(|| RunError::UnknownState(transition.to.value.clone()))?;
            // 5. The done gate, before a success terminal that certifies the task.
            if !c.gate_allowed && self.needs_gate(target, Some(chosen)) {
                if let Some(denied) = self.ask_gate(&c, Some(chosen))? {
                    return Ok(denied);
                }
                c.gate_allowed = true;
            }
            // 6. onExit, then one durable commit of the transition.
            match self.sequence(&mut c, Phase::Exit)? {
                SequenceEnd::Done => {}
                SequenceEnd::Failed { reason, detail } => {
                    return self.finish(
                        &c,
                        Outcome::Failed,
                        StopReason::ActionFailed,
                        reason,
                        Some(detail),
                    );
                }
                SequenceEnd::NeedsAnswer { .. } => {
                    let detail = format!(
                        "an hitl action in onExit of {:?} needs an answer and no terminal can give it",
                        state.id.value
                    );
                    return self.finish(
                        &c,
                        Outcome::Failed,
                        StopReason::ActionFailed,
                        TerminalReason::FailedCheck,
                        Some(detail),
                    );
                }
            }
            let iteration = c.iteration + 1;
            let from = state.id.value.clone();
            let to = transition.to.value.clone();
            self.append(Event::Transition {
                transition: chosen,
                from,
                to: to.clone(),
                iteration,
            })?;
            self.entered_via = Some(chosen);
            self.gated = c.gate_allowed.then_some(target);
            self.append(Event::StateEntered {
                state: to,
                iteration,
            })?;
            // The last action's result carries into the target: a state with no actions
            // of its own routes `action-ok` on it (the reference engine's "continued onExit
            // failure remains visible to the next state guard").
            let last_action_ok = c.last_action_ok;
            c = Cursor::entering(target, iteration);
            c.last_action_ok = last_action_ok;
        }
    }
}

/// `.spur/run/`, where steps write task artifacts, exists before any step runs: pipelines
/// (the corpus `pr-review.yaml`) write there before any spur step has made it.
fn create_artifact_dir(state_dir: &StateDir) -> Result<(), RunError> {
    let dir = state_dir.run_dir();
    std::fs::create_dir_all(&dir).map_err(|source| RunError::RunDir {
        path: dir.display().to_string(),
        source,
    })
}

/// The run's task id, when it has one (`wbs` var, non-empty). Not a safe path segment →
/// usage error before anything runs.
fn wbs_of(vars: &Vars) -> Result<Option<Wbs>, RunError> {
    match vars.get("wbs").map(String::as_str) {
        None | Some("") => Ok(None),
        Some(w) => Ok(Some(Wbs::parse(w)?)),
    }
}
