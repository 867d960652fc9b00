//! The run loop (DESIGN §2 semantics, §5 durability). One visit of a state:
//! onEnter in order (vars set by actions merged after the whole sequence) → terminal? →
//! `pause: true`? → the first transition whose guard passes, in declaration order, among
//! the state's own transitions (O(out-degree)) → the done gate when the target is a
//! success terminal of a run with a wbs → onExit → one durable commit of the transition →
//! enter the target.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::actions::{self, ActionContext, ActionRun, HitlQuestion};
use super::done_gate_port::{DoneGate, GateAnswer, GateRequest};
use super::guard_eval::{self, CompiledGuard, GuardContext};
use super::interrupt;
use super::journal::{self, Durability, Event, Journal, PauseKind, Phase, Record};
use super::lock::TaskLock;
use super::observer::RunObserver;
use super::outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
use super::render::RenderContext;
use super::replay::{self, SequenceProgress};
use super::run_error::RunError;
use super::run_id::RunId;
use super::vars::Vars;
use crate::graph::TransitionGraph;
use crate::pipeline::{Action, ActionKind, CheckedPipeline, OnError, Pipeline, TerminalReason};
use crate::store::digest::sha256_hex;
use crate::store::state_dir::StateDir;
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;

/// How runs are carried out on this machine.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub state_dir: StateDir,
    pub durability: Durability,
    /// Put first on PATH for shell steps (e.g. the embedded-jq shim directory).
    pub path_prefix: Option<PathBuf>,
    /// The spur executable, exported as `$SPUR_BIN` (and the `spurBin` var when the
    /// pipeline declares it and the run does not set it).
    pub spur_bin: Option<PathBuf>,
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
}

/// Resuming a paused or interrupted run.
pub struct ResumeRequest<'a> {
    pub pipeline: &'a CheckedPipeline,
    pub run_id: RunId,
    pub answer: Option<String>,
    pub rerun_ambiguous: bool,
    pub allow_changed_pipeline: bool,
}

/// Start a run and drive it to a terminal state or a pause.
pub fn start(
    request: StartRequest<'_>,
    settings: &RunSettings,
    observer: &mut dyn RunObserver,
    gate: &mut dyn DoneGate,
) -> Result<RunOutcome, RunError> {
    let pipeline = request.pipeline.pipeline();
    let mut vars = request.vars;
    let run_id = RunId::generate(Timestamp::now());
    inject_builtin_vars(pipeline, &mut vars, &run_id, settings);
    let wbs = wbs_of(&vars)?;
    let unset = super::preflight::unset_template_vars(pipeline, &vars);
    if !unset.is_empty() {
        return Err(RunError::UnsetVars { names: unset });
    }
    let plan = Plan::new(pipeline)?;
    let initial = plan
        .graph
        .initial()
        .ok_or_else(|| RunError::UnknownState(pipeline.initial_state.value.clone()))?;
    let lock = match &wbs {
        Some(w) => Some(TaskLock::acquire(
            &settings.state_dir.lock_path(w),
            w.as_str(),
            run_id.as_str(),
        )?),
        None => None,
    };
    let run_dir = settings.state_dir.runs_dir().join(run_id.as_str());
    std::fs::create_dir_all(run_dir.join("actions")).map_err(|source| RunError::RunDir {
        path: run_dir.display().to_string(),
        source,
    })?;
    let journal = Journal::create(&run_dir.join("journal.jsonl"), settings.durability)
        .map_err(RunError::JournalIo)?;
    let mut run = Run {
        pipeline,
        plan,
        run_id,
        run_dir,
        journal: Arc::new(Mutex::new(journal)),
        settings,
        wbs,
        force_reason: request.force_done_reason,
        vars,
        observer,
        gate,
        _lock: lock,
        entered_via: None,
        gate_report: None,
        forced: false,
    };
    interrupt::activate(Arc::clone(&run.journal));
    run.append(Event::RunStarted {
        pipeline: request.pipeline_path.display().to_string(),
        pipeline_name: pipeline.name.value.clone(),
        pipeline_sha256: sha256_hex(pipeline.source.text().as_bytes()),
        vars: run.vars.clone(),
        wbs: run.wbs.as_ref().map(|w| w.to_string()),
        force_done_reason: run.force_reason.clone(),
    })?;
    let cursor = Cursor::entering(initial, 0);
    let result = run.enter_initial(cursor);
    interrupt::deactivate();
    result
}

/// Resume a run from its journal.
pub fn resume(
    request: ResumeRequest<'_>,
    settings: &RunSettings,
    observer: &mut dyn RunObserver,
    gate: &mut dyn DoneGate,
) -> Result<RunOutcome, RunError> {
    let pipeline = request.pipeline.pipeline();
    let run_id = request.run_id;
    let run_dir = settings.state_dir.runs_dir().join(run_id.as_str());
    let journal_path = run_dir.join("journal.jsonl");
    if !journal_path.exists() {
        return Err(RunError::RunNotFound(
            run_id.to_string(),
            settings.state_dir.root().display().to_string(),
        ));
    }
    // Take the task lock before judging the journal: a run still in progress holds it (its
    // unfinished action is running, not ambiguous), and the journal read after the lock is
    // the one we continue.
    let no_start = || {
        RunError::Journal(journal::JournalError::NoStart {
            path: journal_path.clone(),
        })
    };
    let first = journal::read(&journal_path)?;
    let wbs = replay::replay(&first.records)
        .ok_or_else(no_start)?
        .wbs
        .as_deref()
        .map(Wbs::parse)
        .transpose()?;
    let lock = match &wbs {
        Some(w) => Some(TaskLock::acquire(
            &settings.state_dir.lock_path(w),
            w.as_str(),
            run_id.as_str(),
        )?),
        None => None,
    };
    let content = journal::read(&journal_path)?;
    let position = replay::replay(&content.records).ok_or_else(no_start)?;
    if let Some(f) = &position.finished {
        return Err(RunError::AlreadyFinished {
            run_id: run_id.to_string(),
            outcome: f.outcome.clone(),
            state: f.state.clone(),
        });
    }
    if position.pipeline_sha256 != sha256_hex(pipeline.source.text().as_bytes())
        && !request.allow_changed_pipeline
    {
        return Err(RunError::PipelineChanged {
            run_id: run_id.to_string(),
            path: position.pipeline.clone(),
        });
    }
    let plan = Plan::new(pipeline)?;
    let state_id = match &position.state {
        Some(s) => s.clone(),
        None => pipeline.initial_state.value.clone(),
    };
    let state = plan
        .graph
        .state_index(&state_id)
        .ok_or_else(|| RunError::UnknownState(state_id.clone()))?;

    // What kind of stop are we resuming from, and is the answer right for it?
    let awaiting = position
        .paused
        .as_ref()
        .filter(|(kind, _, _)| *kind == PauseKind::Hitl)
        .and_then(|(_, action, _)| *action);
    if let Some(index) = awaiting {
        let question = pipeline
            .states
            .get(state)
            .and_then(|s| s.on_enter.get(index))
            .map(|a| {
                HitlQuestion::of(
                    &a.kind.value,
                    &render_ctx(
                        pipeline,
                        &position.vars,
                        run_id.as_str(),
                        &state_id,
                        position.iteration,
                        &plan.env_allow,
                    ),
                )
            });
        let question = match question {
            Some(Ok(q)) => q,
            _ => HitlQuestion::confirm(None),
        };
        match &request.answer {
            None => {
                return Err(RunError::AnswerRequired {
                    run_id: run_id.to_string(),
                    prompt: question.prompt,
                    choices: question.choices.join(", "),
                })
            }
            Some(a) if !question.accepts(a) => {
                return Err(RunError::AnswerInvalid {
                    answer: a.clone(),
                    prompt: question.prompt,
                    choices: question.choices.join(", "),
                })
            }
            Some(_) => {}
        }
    } else if request.answer.is_some() && position.paused.is_none() {
        return Err(RunError::AnswerUnexpected(run_id.to_string()));
    }
    if let Some((phase, index)) = position.ambiguous() {
        if !request.rerun_ambiguous {
            let kind = pipeline
                .states
                .get(state)
                .and_then(|s| match phase {
                    Phase::Enter => s.on_enter.get(index),
                    Phase::Exit => s.on_exit.get(index),
                })
                .map(|a| a.kind.value.to_string())
                .unwrap_or_default();
            return Err(RunError::Ambiguous {
                run_id: run_id.to_string(),
                state: state_id,
                index,
                kind,
                log: run_dir.join("actions").display().to_string(),
            });
        }
    }

    let journal = Journal::reopen(&journal_path, &content, settings.durability)
        .map_err(RunError::JournalIo)?;
    let entered_via = position.transitions.last().map(|t| t.transition);
    let mut run = Run {
        pipeline,
        plan,
        run_id,
        run_dir,
        journal: Arc::new(Mutex::new(journal)),
        settings,
        wbs,
        force_reason: position.force_done_reason.clone(),
        vars: position.vars.clone(),
        observer,
        gate,
        _lock: lock,
        entered_via,
        gate_report: None,
        forced: false,
    };
    interrupt::activate(Arc::clone(&run.journal));
    let result = (|| {
        run.append(Event::Resumed {
            answer: request.answer.clone(),
            rerun_ambiguous: request.rerun_ambiguous,
        })?;
        if let Some(answer) = &request.answer {
            run.vars.insert("__hitlAnswer".into(), answer.clone());
        }
        let started = position.state.is_some();
        let mut cursor = Cursor {
            state,
            iteration: position.iteration,
            enter: position.enter.clone(),
            enter_complete: position.enter_complete,
            answered: position.answered_in_visit || request.answer.is_some(),
            resumed_from_pause: matches!(position.paused, Some((PauseKind::State, _, _))),
            chosen: position.chosen,
            exit: position.exit.clone(),
            gate_allowed: position
                .gate
                .as_ref()
                .is_some_and(|g| g.decision != "deny" && Some(g.transition) == position.chosen),
            last_action_ok: position.last_action_ok,
            answer: request.answer.clone(),
        };
        if let Some(g) = position.gate.as_ref().filter(|_| cursor.gate_allowed) {
            run.forced = g.forced;
            run.gate_report = Some(DoneGateReport {
                decision: g.decision.clone(),
                verdict: g.verdict.clone(),
                message: g.message.clone(),
            });
        }
        if !started {
            cursor.enter = SequenceProgress::default();
            return run.enter_initial(cursor);
        }
        run.drive(cursor)
    })();
    interrupt::deactivate();
    result
}

/// The pipeline prepared for running: graph (O(out-degree) choice) and compiled guards.
struct Plan {
    graph: TransitionGraph,
    /// Transition index → its compiled guard (`None`: no guard, passes).
    guards: Vec<Option<CompiledGuard>>,
    env_allow: Vec<String>,
}

impl Plan {
    fn new(pipeline: &Pipeline) -> Result<Self, RunError> {
        let var_names: Vec<String> = pipeline.vars.iter().map(|v| v.name.value.clone()).collect();
        let guards = pipeline
            .transitions
            .iter()
            .map(|t| {
                t.guard
                    .as_ref()
                    .map(|g| CompiledGuard::compile(g, &var_names))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            graph: TransitionGraph::new(pipeline),
            guards,
            env_allow: pipeline.env_allow.iter().map(|e| e.value.clone()).collect(),
        })
    }
}

/// Where the loop stands within the current state visit.
#[derive(Debug, Clone)]
struct Cursor {
    state: usize,
    iteration: u32,
    enter: SequenceProgress,
    enter_complete: bool,
    /// The operator answered during this visit: a `pause: true` state does not pause again.
    answered: bool,
    /// This visit's `pause: true` stop was resumed by `spur continue`.
    resumed_from_pause: bool,
    chosen: Option<usize>,
    exit: SequenceProgress,
    gate_allowed: bool,
    last_action_ok: Option<bool>,
    /// The answer `spur continue --answer` brought for an hitl action.
    answer: Option<String>,
}

impl Cursor {
    fn entering(state: usize, iteration: u32) -> Self {
        Self {
            state,
            iteration,
            enter: SequenceProgress::default(),
            enter_complete: false,
            answered: false,
            resumed_from_pause: false,
            chosen: None,
            exit: SequenceProgress::default(),
            gate_allowed: false,
            last_action_ok: None,
            answer: None,
        }
    }
}

/// How an action sequence ended.
enum SequenceEnd {
    Done,
    Failed {
        reason: TerminalReason,
        detail: String,
    },
    NeedsAnswer {
        index: usize,
        question: HitlQuestion,
    },
}

struct Run<'p, 'o> {
    pipeline: &'p Pipeline,
    plan: Plan,
    run_id: RunId,
    run_dir: PathBuf,
    journal: Arc<Mutex<Journal>>,
    settings: &'o RunSettings,
    wbs: Option<Wbs>,
    force_reason: Option<String>,
    vars: Vars,
    observer: &'o mut dyn RunObserver,
    gate: &'o mut dyn DoneGate,
    _lock: Option<TaskLock>,
    /// The transition that entered the current state (its `terminalReason` applies).
    entered_via: Option<usize>,
    gate_report: Option<DoneGateReport>,
    forced: bool,
}

impl Run<'_, '_> {
    fn append(&mut self, event: Event) -> Result<Record, RunError> {
        if interrupt::is_interrupting() {
            // The interrupt handler owns the journal now; stop before any further effect.
            interrupt::wait_for_exit();
        }
        let record = {
            let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            journal.append(event).map_err(RunError::JournalIo)?
        };
        self.observer.record(&record);
        Ok(record)
    }

    fn state_id(&self, state: usize) -> &str {
        self.pipeline
            .states
            .get(state)
            .map_or("", |s| s.id.value.as_str())
    }

    /// Enter the initial state (the gate applies if it is itself a success terminal).
    fn enter_initial(&mut self, cursor: Cursor) -> Result<RunOutcome, RunError> {
        if self.needs_gate(cursor.state) {
            if let Some(denied) = self.ask_gate(&cursor, None)? {
                return Ok(denied);
            }
        }
        let state = self.state_id(cursor.state).to_owned();
        self.append(Event::StateEntered {
            state,
            iteration: cursor.iteration,
        })?;
        self.drive(cursor)
    }

    fn drive(&mut self, mut c: Cursor) -> Result<RunOutcome, RunError> {
        loop {
            let Some(state) = self.pipeline.states.get(c.state) else {
                return Err(RunError::UnknownState(c.state.to_string()));
            };
            // 1. onEnter, in order; vars merged after the whole sequence.
            if !c.enter_complete {
                match self.sequence(&mut c, Phase::Enter)? {
                    SequenceEnd::Done => {
                        let pending = c.enter.pending_vars();
                        self.vars.extend(pending);
                        c.enter_complete = true;
                    }
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
                        self.append(Event::Paused {
                            state: state.id.value.clone(),
                            kind: PauseKind::Hitl,
                            action: Some(index),
                            prompt: Some(question.prompt.clone()),
                        })?;
                        return Ok(self.paused(
                            &c,
                            format!(
                                "waiting for an answer to {:?} ({})",
                                question.prompt,
                                question.choices.join("/")
                            ),
                        ));
                    }
                }
            }
            // 2. A terminal state ends the run.
            if self.plan.graph.is_terminal(c.state) {
                return self.finish_terminal(&c);
            }
            // 3. pause: true stops after onEnter (once per visit).
            if state.pause && !c.answered && !c.resumed_from_pause {
                self.append(Event::Paused {
                    state: state.id.value.clone(),
                    kind: PauseKind::State,
                    action: None,
                    prompt: None,
                })?;
                return Ok(self.paused(
                    &c,
                    format!("state {:?} pauses for the operator", state.id.value),
                ));
            }
            // 4. The first transition whose guard passes, in declaration order.
            let chosen = match c.chosen {
                Some(t) => t,
                None => {
                    if c.iteration >= self.pipeline.iteration_bound.value {
                        let detail = format!(
                            "iterationBound {} reached at state {:?}",
                            self.pipeline.iteration_bound.value, state.id.value
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
            let Some(transition) = self.pipeline.transitions.get(chosen) else {
                return Err(RunError::UnknownState(format!("transition {chosen}")));
            };
            let target = self
                .plan
                .graph
                .state_index(&transition.to.value)
                .ok_or_else(|| RunError::UnknownState(transition.to.value.clone()))?;
            // 5. The done gate, before a success terminal of a run with a wbs.
            if !c.gate_allowed && self.needs_gate(target) {
                if let Some(denied) = self.ask_gate(&c, Some(chosen))? {
                    return Ok(denied);
                }
                c.gate_allowed = true;
            }
            // 6. onExit, then one durable commit of the transition.
            match self.sequence(&mut c, Phase::Exit)? {
                SequenceEnd::Done => {
                    let pending = c.exit.pending_vars();
                    self.vars.extend(pending);
                }
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
            self.append(Event::StateEntered {
                state: to,
                iteration,
            })?;
            c = Cursor::entering(target, iteration);
        }
    }

    /// A success terminal of a run with a wbs: the gate must allow entering it.
    fn needs_gate(&self, target: usize) -> bool {
        self.wbs.is_some()
            && self.plan.graph.is_terminal(target)
            && !self.plan.graph.is_failure(target)
    }

    /// Ask the done gate; `Some(outcome)` when it denied (the run has ended failed).
    fn ask_gate(
        &mut self,
        c: &Cursor,
        transition: Option<usize>,
    ) -> Result<Option<RunOutcome>, RunError> {
        let Some(wbs) = self.wbs.clone() else {
            return Ok(None);
        };
        let answer = self.gate.evaluate(&GateRequest {
            state_dir: &self.settings.state_dir,
            wbs: &wbs,
            run_id: self.run_id.as_str(),
            force_reason: self.force_reason.as_deref(),
        });
        let (decision, verdict, message, forced) = match &answer {
            GateAnswer::Noop => (
                "noop",
                None,
                Some(format!("task {wbs} was already done")),
                false,
            ),
            GateAnswer::Allow { forced, verdict } => ("allow", verdict.clone(), None, *forced),
            GateAnswer::Deny { verdict, message } => {
                ("deny", Some(verdict.clone()), Some(message.clone()), false)
            }
        };
        self.append(Event::DoneGate {
            state: self.state_id(c.state).to_owned(),
            transition: transition.unwrap_or(usize::MAX),
            decision: decision.to_owned(),
            verdict: verdict.clone(),
            message: message.clone(),
            forced,
        })?;
        self.forced = forced;
        self.gate_report = Some(DoneGateReport {
            decision: decision.to_owned(),
            verdict,
            message: message.clone(),
        });
        if let GateAnswer::Deny { .. } = answer {
            return self
                .finish(
                    c,
                    Outcome::Failed,
                    StopReason::DoneGateDenied,
                    TerminalReason::FailedCheck,
                    message,
                )
                .map(Some);
        }
        Ok(None)
    }

    /// Try the current state's transitions in declaration order; journal each guard.
    fn select(&mut self, c: &Cursor) -> Result<Option<usize>, RunError> {
        let state_id = self.state_id(c.state).to_owned();
        let outgoing: Vec<usize> = self.plan.graph.outgoing(c.state).to_vec();
        // Building the process environment costs allocations; only shell and plugin guards
        // need it (this keeps a loop of `always` guards at the journal's cost).
        let needs_env = outgoing.iter().any(|&t| {
            self.plan
                .guards
                .get(t)
                .and_then(Option::as_ref)
                .is_some_and(CompiledGuard::has_side_effects)
        });
        let env = if needs_env {
            self.process_env(&state_id, c.iteration)
        } else {
            Vec::new()
        };
        let last_action = serde_json::json!({ "ok": c.last_action_ok });
        for t in outgoing {
            let Some(transition) = self.pipeline.transitions.get(t) else {
                continue;
            };
            let started = Instant::now();
            let (kind, result) = match self.plan.guards.get(t).and_then(Option::as_ref) {
                None => ("none".to_owned(), spur_guards::GuardResult::bare(true)),
                Some(guard) => {
                    let ctx = GuardContext {
                        render: render_ctx(
                            self.pipeline,
                            &self.vars,
                            self.run_id.as_str(),
                            &state_id,
                            c.iteration,
                            &self.plan.env_allow,
                        ),
                        project_root: self.settings.state_dir.project_root(),
                        env: &env,
                        last_action_ok: c.last_action_ok,
                        last_action: &last_action,
                    };
                    (guard.kind().to_owned(), guard_eval::evaluate(guard, &ctx))
                }
            };
            let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.append(Event::GuardEvaluated {
                state: state_id.clone(),
                transition: t,
                to: transition.to.value.clone(),
                kind,
                passed: result.passed,
                detail: result.detail_if_any().map(str::to_owned),
                duration_us,
            })?;
            if result.passed {
                return Ok(Some(t));
            }
        }
        Ok(None)
    }

    /// Run the onEnter or onExit list from where the cursor stands.
    fn sequence(&mut self, c: &mut Cursor, phase: Phase) -> Result<SequenceEnd, RunError> {
        let pipeline = self.pipeline;
        let Some(state) = pipeline.states.get(c.state) else {
            return Ok(SequenceEnd::Done);
        };
        let list: &[Action] = match phase {
            Phase::Enter => &state.on_enter,
            Phase::Exit => &state.on_exit,
        };
        for (index, action) in list.iter().enumerate() {
            let progress = match phase {
                Phase::Enter => &mut c.enter,
                Phase::Exit => &mut c.exit,
            };
            let policy = action
                .on_error
                .as_ref()
                .map_or(pipeline.default_on_error.value, |o| o.value);
            if let Some(done) = progress.finished.get(&index) {
                // Finished before a resume: never run again.
                c.last_action_ok = Some(done.ok);
                if !done.ok && policy == OnError::Fail {
                    return Ok(SequenceEnd::Failed {
                        reason: failure_reason(&action.kind.value, false),
                        detail: format!(
                            "action {index} ({}) of {:?} failed",
                            action.kind.value, state.id.value
                        ),
                    });
                }
                continue;
            }
            let answer = if progress.awaiting_answer == Some(index) {
                c.answer.take()
            } else {
                None
            };
            progress.ambiguous = None;
            let result = self.run_action(c, phase, index, action, answer)?;
            let result = match result {
                ActionRun::NeedsAnswer(question) => {
                    return Ok(SequenceEnd::NeedsAnswer { index, question });
                }
                ActionRun::Finished(r) => r,
            };
            c.last_action_ok = Some(result.ok);
            if result.set_vars.contains_key("__hitlAnswer") {
                c.answered = true;
            }
            let progress = match phase {
                Phase::Enter => &mut c.enter,
                Phase::Exit => &mut c.exit,
            };
            progress.finished.insert(
                index,
                replay::FinishedAction {
                    ok: result.ok,
                    set_vars: result.set_vars.clone(),
                },
            );
            if !result.ok && policy == OnError::Fail {
                return Ok(SequenceEnd::Failed {
                    reason: failure_reason(&action.kind.value, result.timed_out),
                    detail: format!(
                        "action {index} ({}) of {:?} failed: {}",
                        action.kind.value,
                        state.id.value,
                        result.error.unwrap_or_default()
                    ),
                });
            }
        }
        Ok(SequenceEnd::Done)
    }

    /// Journal the start durably, run the action, journal its finish durably.
    fn run_action(
        &mut self,
        c: &Cursor,
        phase: Phase,
        index: usize,
        action: &Action,
        answer: Option<String>,
    ) -> Result<ActionRun, RunError> {
        let state_id = self.state_id(c.state).to_owned();
        let kind = action.kind.value.to_string();
        let seq = self
            .journal
            .lock()
            .map(|j| j.next_seq())
            .unwrap_or_else(|p| p.into_inner().next_seq());
        let log_rel = format!("actions/{seq:04}-{}.log", sanitize(&kind));
        self.append(Event::ActionStarted {
            state: state_id.clone(),
            phase,
            index,
            kind: kind.clone(),
            log: Some(log_rel.clone()),
        })?;
        let started = Instant::now();
        let render = render_ctx(
            self.pipeline,
            &self.vars,
            self.run_id.as_str(),
            &state_id,
            c.iteration,
            &self.plan.env_allow,
        );
        let env = self.process_env(&state_id, c.iteration);
        let log_path = self.run_dir.join(&log_rel);
        let observer = &mut *self.observer;
        let mut ask = |q: &HitlQuestion| observer.ask(q);
        let mut ctx = ActionContext {
            action,
            render,
            vars: &self.vars,
            state_dir: &self.settings.state_dir,
            project_root: self.settings.state_dir.project_root(),
            run_dir: &self.run_dir,
            run_id: self.run_id.as_str(),
            log_path: &log_path,
            env: &env,
            answer: answer.as_deref(),
            ask: &mut ask,
        };
        let run = actions::run(&mut ctx);
        if let ActionRun::Finished(result) = &run {
            let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.append(Event::ActionFinished {
                state: state_id,
                phase,
                index,
                kind,
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
            })?;
        }
        Ok(run)
    }

    /// Environment for processes: every var, plus `SPUR_*` and PATH.
    fn process_env(&self, state: &str, iteration: u32) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        env.push(("SPUR_RUN_ID".into(), self.run_id.to_string()));
        env.push(("SPUR_RUN_DIR".into(), self.run_dir.display().to_string()));
        env.push(("SPUR_STATE".into(), state.to_owned()));
        env.push(("SPUR_ITERATION".into(), iteration.to_string()));
        env.push(("SPUR_WORKFLOW".into(), self.pipeline.name.value.clone()));
        env.push((
            "SPUR_STATE_DIR".into(),
            self.settings.state_dir.root().display().to_string(),
        ));
        if let Some(bin) = &self.settings.spur_bin {
            env.push(("SPUR_BIN".into(), bin.display().to_string()));
        }
        if let Some(prefix) = &self.settings.path_prefix {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![prefix.clone()];
            dirs.extend(std::env::split_paths(&path));
            if let Ok(joined) = std::env::join_paths(dirs) {
                env.push(("PATH".into(), joined.to_string_lossy().into_owned()));
            }
        }
        env
    }

    fn finish_terminal(&mut self, c: &Cursor) -> Result<RunOutcome, RunError> {
        let declared = self
            .entered_via
            .and_then(|t| self.pipeline.transitions.get(t))
            .and_then(|t| t.terminal_reason.as_ref())
            .map(|r| r.value);
        if self.plan.graph.is_failure(c.state) {
            let reason = declared.unwrap_or(TerminalReason::FailedCheck);
            let detail = format!("reached failure state {:?}", self.state_id(c.state));
            return self.finish(
                c,
                Outcome::Failed,
                StopReason::FailureState,
                reason,
                Some(detail),
            );
        }
        let outcome = if self.wbs.is_some() {
            Outcome::Done
        } else {
            Outcome::Completed
        };
        let reason = declared.unwrap_or(TerminalReason::Done);
        self.finish(c, outcome, StopReason::TerminalState, reason, None)
    }

    fn finish(
        &mut self,
        c: &Cursor,
        outcome: Outcome,
        reason: StopReason,
        terminal_reason: TerminalReason,
        detail: Option<String>,
    ) -> Result<RunOutcome, RunError> {
        let state = self.state_id(c.state).to_owned();
        self.append(Event::RunFinished {
            outcome: outcome.as_str().to_owned(),
            state: state.clone(),
            terminal_reason: terminal_reason.as_str().to_owned(),
            reason: reason.as_str().to_owned(),
            iterations: c.iteration,
        })?;
        Ok(RunOutcome {
            run_id: self.run_id.to_string(),
            pipeline: self.pipeline.name.value.clone(),
            outcome,
            state,
            terminal_reason,
            reason,
            iterations: c.iteration,
            forced: self.forced,
            done_gate: self.gate_report.clone(),
            detail,
        })
    }

    fn paused(&self, c: &Cursor, detail: String) -> RunOutcome {
        RunOutcome {
            run_id: self.run_id.to_string(),
            pipeline: self.pipeline.name.value.clone(),
            outcome: Outcome::Paused,
            state: self.state_id(c.state).to_owned(),
            terminal_reason: TerminalReason::PausedOperator,
            reason: StopReason::Paused,
            iterations: c.iteration,
            forced: false,
            done_gate: None,
            detail: Some(detail),
        }
    }
}

/// The terminal reason of a failed action: a timeout, a failed agent, or a failed check.
fn failure_reason(kind: &ActionKind, timed_out: bool) -> TerminalReason {
    if timed_out {
        TerminalReason::FailedTimeout
    } else if matches!(kind, ActionKind::AgentRun(_)) {
        TerminalReason::FailedAgent
    } else {
        TerminalReason::FailedCheck
    }
}

fn render_ctx<'a>(
    pipeline: &'a Pipeline,
    vars: &'a Vars,
    run_id: &'a str,
    state: &'a str,
    iteration: u32,
    env_allow: &'a [String],
) -> RenderContext<'a> {
    RenderContext {
        vars,
        env_allow,
        workflow: &pipeline.name.value,
        run_id,
        state,
        iteration,
    }
}

/// The run's task id, when it has one (`wbs` var, non-empty). Not a safe path segment →
/// usage error before anything runs.
fn wbs_of(vars: &Vars) -> Result<Option<Wbs>, RunError> {
    match vars.get("wbs").map(String::as_str) {
        None | Some("") => Ok(None),
        Some(w) => Ok(Some(Wbs::parse(w)?)),
    }
}

/// Vars spur provides: `__runId` and `spurBin` when the pipeline declares them and the
/// run left them empty / at their default.
fn inject_builtin_vars(
    pipeline: &Pipeline,
    vars: &mut Vars,
    run_id: &RunId,
    settings: &RunSettings,
) {
    if pipeline.var_default("__runId").is_some() && vars.get("__runId").is_none_or(String::is_empty)
    {
        vars.insert("__runId".into(), run_id.to_string());
    }
    if let Some(bin) = &settings.spur_bin {
        let default = pipeline.var_default("spurBin");
        if default.is_some() && vars.get("spurBin").map(String::as_str) == default {
            vars.insert("spurBin".into(), bin.display().to_string());
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

/// The run directory of `run_id` under `state_dir`.
pub fn run_dir(state_dir: &StateDir, run_id: &RunId) -> PathBuf {
    state_dir.runs_dir().join(run_id.as_str())
}

/// The pipeline file a run was started with (from its journal's `run-started`).
pub fn recorded_pipeline(state_dir: &StateDir, run_id: &RunId) -> Result<PathBuf, RunError> {
    let path = run_dir(state_dir, run_id).join("journal.jsonl");
    if !path.exists() {
        return Err(RunError::RunNotFound(
            run_id.to_string(),
            state_dir.root().display().to_string(),
        ));
    }
    let content = journal::read(&path)?;
    match content.records.first().map(|r| &r.event) {
        Some(Event::RunStarted { pipeline, .. }) => Ok(PathBuf::from(pipeline)),
        _ => Err(RunError::Journal(journal::JournalError::NoStart { path })),
    }
}
