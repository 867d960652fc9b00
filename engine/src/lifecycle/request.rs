//! A request from outside to move a lifecycle instance (`spur lifecycle request`, and the
//! task verbs): the reference engine's `createOrAttachRun` + `reseedRun` +
//! `requestTransition`, journaled. One request at a time per instance (a lock); then:
//!
//! 1. the instance is opened (its journal checked record by record) or created at the
//!    pipeline's initial state;
//! 2. it is re-seeded to the entity's status when that differs (the file wins): a task's
//!    status is its ledger's, another entity's is the caller's `current`;
//! 3. `transition-requested`; the pipeline's transitions from the current state to the one
//!    asked for are tried in declaration order, each guard journaled, the first that passes
//!    wins; none → `transition-denied` (no such transition, or the guards, named);
//! 4. into a state the done gate guards (a task's `done`, or a success terminal whose reason
//!    is `done`), the gate is asked, as a run asks it; a deny → `transition-denied`;
//! 5. `transition` + `state-entered`; a task's new status goes into its ledger (`done` only
//!    through the gate, which records it itself).
//!
//! No action runs: an outside request moves the instance along an edge, as the reference's
//! `requestTransition` does; onEnter/onExit belong to runs.

use std::path::PathBuf;
use std::time::Instant;

use crate::pipeline::{CheckedPipeline, Pipeline, TerminalReason, Transition};
use crate::run::child_env::{inject_vars_for, step_env, StepPlace};
use crate::run::done_gate_port::{DoneGate, GateRequest};
use crate::run::effect::GuardStep;
use crate::run::event::DenialReason;
use crate::run::finish::classified_success;
use crate::run::guard_eval::{self, GuardContext};
use crate::run::journal::Event;
use crate::run::outcome::DoneGateReport;
use crate::run::plan::{render_ctx, Plan};
use crate::run::secret_config::config_secrets;
use crate::run::secrets::RunSecrets;
use crate::run::vars::{self, Vars};
use crate::run::RunSettings;
use crate::store::audit::current_user;
use crate::store::data_lock::DataLock;
use crate::store::file_lock::FileLock;
use crate::store::task_status::{self, ChangeContext, Status, StatusChange};
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;

use super::answer::{Denial, RequestOutcome, TransitionAnswer};
use super::entity::EntityKey;
use super::error::LifecycleError;
use super::instance::{self, instance_id, Instance};

/// A caller's check of the state asked for: `Err(why)` refuses the request.
pub type StructuralCheck<'a> = dyn Fn(&str) -> Result<(), String> + 'a;

/// A request to move `entity`'s lifecycle instance into `to`.
pub struct TransitionRequest<'a> {
    /// The lifecycle pipeline, checked.
    pub pipeline: &'a CheckedPipeline,
    /// Its file, recorded when the instance is created.
    pub pipeline_path: PathBuf,
    /// Whose lifecycle: `task:<wbs>` or `feature:<id>`.
    pub entity: EntityKey,
    /// The state asked for.
    pub to: String,
    /// The entity's status as its owner records it, for an entity spur keeps no status of
    /// (a feature's file): the instance is re-seeded to it first. `None` for a task (its
    /// ledger is the status) or to keep the instance where it is.
    pub current: Option<String>,
    /// `--var NAME=VALUE`: vars for the guards (the entity's var is set from the entity).
    pub vars: Vec<String>,
    /// `--force-done --reason R`: the done gate's audited override.
    pub force_done_reason: Option<String>,
    /// A check the caller brings for the state asked for, tried once the edge exists and
    /// before its guards (`spur task update` brings `spur task check --as STATUS` for a
    /// task's testing and done): `Err(why)` refuses the request, journaled.
    pub structural_check: Option<&'a StructuralCheck<'a>>,
}

/// Ask `request.entity`'s instance to move into `request.to`; the guards decide, and the
/// done gate for a task's `done`. A refusal is an answer ([`RequestOutcome::Denied`]), not
/// an error; an error means nothing was decided.
pub fn request_transition(
    request: &TransitionRequest<'_>,
    settings: &RunSettings,
    gate: &mut dyn DoneGate,
) -> Result<TransitionAnswer, LifecycleError> {
    let pipeline = request.pipeline.pipeline();
    let name = Wbs::parse(&pipeline.name.value)
        .map_err(|_| LifecycleError::PipelineName(pipeline.name.value.clone()))?;
    let entity = &request.entity;
    let var = entity.kind().var();
    if pipeline.var_default(var).is_none() {
        return Err(LifecycleError::EntityVar {
            entity: entity.to_string(),
            var,
            pipeline: pipeline.name.value.clone(),
        });
    }
    let to = declared(pipeline, &request.to, "--to")?;
    let task = entity.task().cloned();
    if task.is_some() {
        if request.current.is_some() {
            return Err(LifecycleError::TaskStatusIsTheLedger(entity.to_string()));
        }
        task_status_of(&to)?;
    }
    if let Some(current) = &request.current {
        declared(pipeline, current, "--from")?;
    }
    let plan = Plan::new(pipeline)?;
    let id = instance_id(&name, entity);
    let mut vars = vars::resolve(pipeline, None, &request.vars)?;
    vars.insert(var.to_owned(), entity.id().to_owned());
    inject_vars_for(pipeline, &mut vars, &id, settings);

    // One request at a time: the loser waits, then decides against the state the winner left.
    let lock_path = entity.lock_in(&settings.state_dir, &name);
    let _lock = FileLock::exclusive(&lock_path).map_err(|source| LifecycleError::Io {
        path: lock_path.clone(),
        source,
    })?;
    let mut instance = instance::open(
        &settings.state_dir,
        settings.durability,
        &request.pipeline_path,
        pipeline,
        &plan,
        &name,
        entity,
        &vars,
    )?;
    let secrets = RunSecrets::new(pipeline, &config_secrets(&settings.state_dir)?, &vars);
    instance.journal.keep_secrets(secrets);

    let mut req = Request {
        pipeline,
        plan: &plan,
        settings,
        entity,
        task,
        id,
        vars,
        instance,
    };
    req.decide(
        &to,
        request.current.as_deref(),
        request.force_done_reason.as_deref(),
        request.structural_check,
        gate,
    )
}

/// A request in progress: the instance is open and locked.
struct Request<'a> {
    pipeline: &'a Pipeline,
    plan: &'a Plan,
    settings: &'a RunSettings,
    entity: &'a EntityKey,
    task: Option<Wbs>,
    id: String,
    vars: Vars,
    instance: Instance,
}

impl Request<'_> {
    fn append(&mut self, event: Event) -> Result<(), LifecycleError> {
        let path = self.instance.path.clone();
        let record = self
            .instance
            .journal
            .append(event, Timestamp::now())
            .map_err(|source| LifecycleError::Io { path, source })?;
        self.instance.position.apply(&record);
        Ok(())
    }

    fn state(&self) -> String {
        self.instance.position.state.clone().unwrap_or_default()
    }

    fn decide(
        &mut self,
        to: &str,
        current: Option<&str>,
        force: Option<&str>,
        structural_check: Option<&StructuralCheck<'_>>,
        gate: &mut dyn DoneGate,
    ) -> Result<TransitionAnswer, LifecycleError> {
        let reseeded = self.reseed(current)?;
        let from = self.state();
        let mut answer = TransitionAnswer {
            outcome: RequestOutcome::Unchanged,
            entity: self.entity.to_string(),
            pipeline: self.pipeline.name.value.clone(),
            from: from.clone(),
            to: to.to_owned(),
            state: from.clone(),
            transition: None,
            reseeded,
            denied: None,
            done_gate: None,
            task_status: None,
            journal: self.instance.path.display().to_string(),
        };
        let candidates: Vec<usize> = self
            .pipeline
            .transitions
            .iter()
            .enumerate()
            .filter(|(_, t)| t.from.value == from && t.to.value == to)
            .map(|(i, _)| i)
            .collect();
        let gated = self.certifies(to, &candidates);
        if force.is_some() && !gated {
            return Err(if self.task.is_none() {
                LifecycleError::Run(crate::run::RunError::ForceWithoutTask)
            } else {
                LifecycleError::ForceNotDone(to.to_owned())
            });
        }
        if from == to && candidates.is_empty() {
            answer.task_status = self.task_status()?;
            return Ok(answer);
        }
        self.append(Event::TransitionRequested {
            state: from.clone(),
            to: to.to_owned(),
            vars: self.vars.clone(),
            force_done_reason: force.map(str::to_owned),
        })?;
        if candidates.is_empty() {
            let detail = self.no_such_transition(&from, to);
            return self.deny(answer, DenialReason::NoSuchTransition, detail);
        }
        if let Some(Err(detail)) = structural_check.map(|check| check(to)) {
            return self.deny(answer, DenialReason::CheckFailed, detail);
        }
        let chosen = match self.first_passing(&from, &candidates)? {
            Ok(chosen) => chosen,
            Err(failed) => {
                let detail = format!(
                    "the guard of {from:?} → {to:?} did not pass: {}",
                    failed.join("; ")
                );
                return self.deny(answer, DenialReason::GuardFailed, detail);
            }
        };
        if gated {
            let report = self.ask_gate(&from, chosen, force, gate)?;
            let denied = report.decision == crate::done_gate::GateDecision::Deny;
            let message = report.message.clone().unwrap_or_default();
            answer.done_gate = Some(report);
            if denied {
                return self.deny(answer, DenialReason::DoneGateDenied, message);
            }
        }
        let iteration = self.instance.position.iteration + 1;
        self.append(Event::Transition {
            transition: chosen,
            from: from.clone(),
            to: to.to_owned(),
            iteration,
        })?;
        self.append(Event::StateEntered {
            state: to.to_owned(),
            iteration,
        })?;
        if !gated {
            self.record_status(to)?;
        }
        answer.outcome = RequestOutcome::Allowed;
        answer.transition = Some(chosen);
        answer.state = to.to_owned();
        answer.task_status = self.task_status()?;
        Ok(answer)
    }

    fn deny(
        &mut self,
        mut answer: TransitionAnswer,
        reason: DenialReason,
        detail: String,
    ) -> Result<TransitionAnswer, LifecycleError> {
        self.append(Event::TransitionDenied {
            state: answer.from.clone(),
            to: answer.to.clone(),
            reason,
            detail: detail.clone(),
        })?;
        answer.outcome = RequestOutcome::Denied;
        answer.denied = Some(Denial { reason, detail });
        answer.task_status = self.task_status()?;
        Ok(answer)
    }

    /// Set the instance to the entity's status when it is elsewhere: a task's ledger status
    /// (when the ledger has one, else its task file's `status:`), another entity's `current`.
    fn reseed(&mut self, current: Option<&str>) -> Result<Option<[String; 2]>, LifecycleError> {
        let status = match &self.task {
            Some(wbs) => {
                let record = task_status::load(&self.settings.state_dir, wbs)?;
                if record.history.is_empty() {
                    file_status(&self.settings.state_dir, wbs, &record.status)
                } else {
                    Some(record.status.to_string())
                }
            }
            None => current.map(str::to_owned),
        };
        let here = self.state();
        let Some(status) = status.filter(|s| *s != here) else {
            return Ok(None);
        };
        let status = declared(self.pipeline, &status, "the entity's status")?;
        self.append(Event::Reseeded {
            from: here.clone(),
            to: status.clone(),
        })?;
        Ok(Some([here, status]))
    }

    /// Whether moving into `to` certifies the task, so that the done gate must allow it: a
    /// task's state named `done`, wherever it sits in the graph, or a success terminal whose
    /// terminal reason (declared on the transition, else by its name) is `done`.
    fn certifies(&self, to: &str, candidates: &[usize]) -> bool {
        if self.task.is_none() {
            return false;
        }
        if Status::names_done(to) {
            return true;
        }
        let graph = &self.plan.graph;
        let Some(index) = graph.state_index(to) else {
            return false;
        };
        if !graph.is_terminal(index) || graph.is_failure(index) {
            return false;
        }
        let declared = |t: &Transition| t.terminal_reason.as_ref().map(|r| r.value);
        let reasons: Vec<TerminalReason> = candidates
            .iter()
            .filter_map(|&t| self.pipeline.transitions.get(t))
            .map(|t| declared(t).unwrap_or_else(|| classified_success(to)))
            .collect();
        // Any way in that ends `done` is guarded (more gating never lets a task through).
        reasons.is_empty() && classified_success(to) == TerminalReason::Done
            || reasons.contains(&TerminalReason::Done)
    }

    /// Evaluate the guards of `candidates` in order, journaling each: the first that passes,
    /// or what each that did not pass said.
    fn first_passing(
        &mut self,
        from: &str,
        candidates: &[usize],
    ) -> Result<Result<usize, Vec<String>>, LifecycleError> {
        let mut failed = Vec::new();
        let run_dir = self
            .instance
            .path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let iteration = self.instance.position.iteration;
        let env = step_env(
            self.settings,
            &StepPlace {
                run_id: &self.id,
                run_dir: &run_dir,
                workflow: &self.pipeline.name.value,
                state: from,
                iteration,
            },
            &self.vars,
        );
        let last_action = serde_json::json!({ "ok": null });
        for &t in candidates {
            let Some(transition) = self.pipeline.transitions.get(t) else {
                continue;
            };
            let guard = self.plan.guards.get(t).and_then(Option::as_ref);
            let started = Instant::now();
            let result = match guard {
                None => spur_guards::GuardResult::bare(true),
                Some(guard) => {
                    let ctx = GuardContext {
                        render: render_ctx(
                            self.pipeline,
                            &self.vars,
                            &self.id,
                            from,
                            iteration,
                            &self.plan.env_allow,
                        ),
                        project_root: self.settings.state_dir.project_root(),
                        env: &env,
                        last_action_ok: None,
                        last_action: &last_action,
                        default_timeout: self.settings.timeouts.guard,
                    };
                    guard_eval::evaluate(guard, &ctx)
                }
            };
            let duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            let step = GuardStep {
                state: from,
                transition: t,
                to: &transition.to.value,
                kind: guard.map_or("none", guard_eval::CompiledGuard::kind),
            };
            self.append(step.evaluated(&result, duration_us))?;
            if result.passed {
                return Ok(Ok(t));
            }
            failed.push(self.guard_said(t, transition, &result));
        }
        Ok(Err(failed))
    }

    /// `transition 2 (shell guard `…`: exit 1)`: which edge, which guard, what it said.
    fn guard_said(
        &self,
        t: usize,
        transition: &Transition,
        result: &spur_guards::GuardResult,
    ) -> String {
        let kind = self
            .plan
            .guards
            .get(t)
            .and_then(Option::as_ref)
            .map_or("none", guard_eval::CompiledGuard::kind);
        let command = transition
            .guard
            .as_ref()
            .and_then(|g| g.options.get_str("command"))
            .map(|c| format!(" `{}`", c.value))
            .unwrap_or_default();
        let said = result
            .detail_if_any()
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        format!("transition {t} ({kind} guard{command}{said})")
    }

    /// Ask the done gate for transition `chosen` (through the same port as a run) and
    /// journal its answer.
    fn ask_gate(
        &mut self,
        from: &str,
        chosen: usize,
        force: Option<&str>,
        gate: &mut dyn DoneGate,
    ) -> Result<DoneGateReport, LifecycleError> {
        let Some(wbs) = self.task.clone() else {
            return Err(LifecycleError::Run(crate::run::RunError::ForceWithoutTask));
        };
        let answer = gate.evaluate(&GateRequest {
            state_dir: &self.settings.state_dir,
            wbs: &wbs,
            run_id: &self.id,
            force_reason: force,
            policy: &self.settings.policy,
        });
        let (report, forced) = answer.report(&wbs);
        self.append(Event::DoneGate {
            state: from.to_owned(),
            transition: Some(chosen),
            decision: report.decision,
            verdict: report.verdict.clone(),
            message: report.message.clone(),
            forced,
        })?;
        Ok(report)
    }

    /// A task's new status into its ledger (not done: the gate records that itself).
    fn record_status(&mut self, to: &str) -> Result<(), LifecycleError> {
        let Some(wbs) = &self.task else {
            return Ok(());
        };
        let open = Status::open(to).map_err(|_| LifecycleError::NotAStatus(to.to_owned()))?;
        let lock = DataLock::acquire(&self.settings.state_dir, wbs)?;
        let user = current_user();
        let context = ChangeContext {
            user: &user,
            run_id: Some(&self.id),
            time: crate::store::timestamp::now(),
        };
        match task_status::record_change(
            &lock,
            &self.settings.state_dir,
            StatusChange::To(open),
            &context,
        ) {
            // The ledger is the status: a view that could not be rewritten is rewritten at
            // the next change (and `spur audit verify` shows it meanwhile).
            Ok(_) | Err(task_status::TaskError::ViewWrite { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn task_status(&self) -> Result<Option<String>, LifecycleError> {
        match &self.task {
            Some(wbs) => Ok(Some(
                task_status::current_status(&self.settings.state_dir, wbs)?.to_string(),
            )),
            None => Ok(None),
        }
    }

    fn no_such_transition(&self, from: &str, to: &str) -> String {
        let out: Vec<&str> = self
            .pipeline
            .transitions
            .iter()
            .filter(|t| t.from.value == from)
            .map(|t| t.to.value.as_str())
            .collect();
        if out.is_empty() {
            format!(
                "{} has no transition out of {from:?}",
                self.pipeline.name.value
            )
        } else {
            format!(
                "{} has no transition {from:?} → {to:?}; from {from:?} it goes to: {}",
                self.pipeline.name.value,
                out.join(", ")
            )
        }
    }
}

/// `state` when it is one of the pipeline's states.
fn declared(
    pipeline: &Pipeline,
    state: &str,
    what: &'static str,
) -> Result<String, LifecycleError> {
    if pipeline.state(state).is_some() {
        return Ok(state.to_owned());
    }
    Err(LifecycleError::UnknownState {
        what,
        state: state.to_owned(),
        pipeline: pipeline.name.value.clone(),
        states: pipeline.states.iter().map(|s| s.id.value.clone()).collect(),
    })
}

/// The status of a task with a task file that no ledger record has spoken for yet: what
/// its file says (canonical), else the ledger's status before any record. A file that
/// says done says nothing: only the done gate's record is done. `None` without a task
/// file: the instance stays where it is.
fn file_status(
    state_dir: &crate::store::state_dir::StateDir,
    wbs: &Wbs,
    ledger: &Status,
) -> Option<String> {
    let document = crate::task::lifecycle_gate::lifecycle_document(state_dir, wbs).ok()??;
    let claimed = document.status_text().and_then(|text| {
        crate::task::status_name::canonical_status(&text).filter(|s| !Status::names_done(s))
    });
    Some(claimed.map_or_else(|| ledger.to_string(), str::to_owned))
}

/// A task's lifecycle moves only into states that are task statuses.
fn task_status_of(state: &str) -> Result<(), LifecycleError> {
    if Status::names_done(state) || Status::open(state).is_ok() {
        Ok(())
    } else {
        Err(LifecycleError::NotAStatus(state.to_owned()))
    }
}
