//! Whether a journal is a history its run could have written: before a resume decides
//! anything, every record is checked against the run as replayed up to it and against the
//! pipeline. A step can write the journal, so a record that does not fit (a transition from
//! a state the run is not in, across a guard that never passed, …) refuses the resume.

use super::guard_eval::CompiledGuard;
use super::journal::{Event, Phase, Record};
use super::plan::Plan;
use super::replay::Position;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::pipeline::{Action, Pipeline};

/// What the records are checked against.
#[derive(Clone, Copy)]
pub(crate) enum Against<'a> {
    /// The pipeline the run started with (its text is unchanged).
    Pipeline(&'a Pipeline, &'a Plan),
    /// The pipeline changed since the run started (`--allow-changed-pipeline`): its
    /// transitions and actions may not be those the records name, so the records are
    /// checked only against one another.
    Themselves,
}

/// A journal record that does not fit the run before it or its pipeline.
#[derive(Debug, thiserror::Error)]
#[error("run {run_id} cannot go on: its journal record seq {seq} ({event}) does not fit the run: {what}")]
pub struct RecordDoesNotFit {
    /// The run whose resume was refused.
    pub(crate) run_id: String,
    /// The seq of the first record that does not fit.
    pub(crate) seq: u64,
    /// Its event, as named in the journal.
    pub(crate) event: &'static str,
    /// What does not fit.
    pub(crate) what: String,
}

coded_diagnostic! {
    RecordDoesNotFit {
        Self { run_id, .. } => Code::JournalRecordDoesNotFit,
            help("spur checks every journal record against the run before it and against the pipeline \
                  before it resumes; this one is not a record the run could have written (a step may \
                  have written to the journal). Nothing was run. See the records with `spur trace \
                  {run_id}`, and start a new run with `spur run`");
    }
}

/// Replay `records` (the first is `run-started`), checking each one before it counts.
/// `Ok(None)`: the journal does not start with `run-started`.
pub(crate) fn replay_checked(
    records: &[Record],
    against: Against<'_>,
    run_id: &str,
) -> Result<Option<Position>, RecordDoesNotFit> {
    let Some((first, rest)) = records.split_first() else {
        return Ok(None);
    };
    let Some(mut position) = Position::started(first) else {
        return Ok(None);
    };
    let mut seen = Seen::default();
    for record in rest {
        fits(&position, &seen, record, against).map_err(|what| RecordDoesNotFit {
            run_id: run_id.to_owned(),
            seq: record.seq,
            event: record.event.name(),
            what,
        })?;
        seen.note(record);
        position.apply(record);
    }
    Ok(Some(position))
}

/// What the checks need beyond the replayed position.
#[derive(Default)]
struct Seen {
    /// The seq of `run-finished`, once written.
    finished_at: Option<u64>,
    /// The target the last passing guard of this visit named.
    guarded_to: Option<String>,
    /// A lifecycle instance: the state the pending request asks for.
    requested: Option<String>,
    /// A lifecycle instance: the done gate let the pending request through.
    gate_let_through: bool,
}

impl Seen {
    fn note(&mut self, record: &Record) {
        match &record.event {
            Event::RunFinished { .. } => self.finished_at = Some(record.seq),
            Event::Retried { .. } => {
                self.finished_at = None;
                self.guarded_to = None;
            }
            Event::GuardEvaluated {
                to, passed: true, ..
            } => self.guarded_to = Some(to.clone()),
            Event::Transition { .. } | Event::TransitionDenied { .. } => {
                self.guarded_to = None;
                self.requested = None;
                self.gate_let_through = false;
            }
            Event::TransitionRequested { to, .. } => {
                self.guarded_to = None;
                self.requested = Some(to.clone());
                self.gate_let_through = false;
            }
            Event::DoneGate { decision, .. } => {
                self.gate_let_through = *decision != crate::done_gate::GateDecision::Deny;
            }
            _ => {}
        }
    }
}

/// `Err(what is wrong)` when `record` cannot follow the run at `p`.
fn fits(p: &Position, seen: &Seen, record: &Record, against: Against<'_>) -> Result<(), String> {
    let pipeline = match against {
        Against::Pipeline(pipeline, plan) => Some((pipeline, plan)),
        Against::Themselves => None,
    };
    if let Event::Retried {
        state, iteration, ..
    } = &record.event
    {
        return retried_fits(p, state, *iteration, pipeline.map(|(pl, _)| pl));
    }
    if let Some(seq) = seen.finished_at {
        return Err(format!(
            "it follows run-finished (seq {seq}): a run writes nothing after it finished but a retry"
        ));
    }
    let name = record.event.name();
    // Most records name the state the run is in; before the first state-entered only the
    // done gate and an end can happen, at the initial state.
    let here = || -> Result<&str, String> {
        p.state
            .as_deref()
            .ok_or_else(|| format!("{name} before the run entered any state"))
    };
    let same_state = |state: &str, expected: Option<&str>| match expected {
        Some(expected) if state != expected => Err(format!(
            "it names state {state:?}, but the run is in {expected:?}"
        )),
        _ => Ok(()),
    };
    let at_or_before_entry = p
        .state
        .as_deref()
        .or(pipeline.map(|(pl, _)| pl.initial_state.value.as_str()));
    if p.lifecycle.is_some() {
        lifecycle_fits(p, seen, record, pipeline)?;
    } else if matches!(
        record.event,
        Event::TransitionRequested { .. } | Event::Reseeded { .. } | Event::TransitionDenied { .. }
    ) {
        return Err(format!(
            "{name} is a record of a lifecycle instance, and this journal is a run's"
        ));
    }
    match &record.event {
        Event::RunStarted { .. } => Err("a second run-started: the run started at seq 1".into()),
        Event::StateEntered { state, iteration } => {
            let expected = match (&p.retried_into, p.transitions.last()) {
                (Some(r), _) => Some((r.as_str(), "the retry re-entered".to_owned())),
                (None, Some(t)) => Some((
                    t.to.as_str(),
                    format!("the last transition (seq {}) entered", t.seq),
                )),
                (None, None) => at_or_before_entry.map(|s| (s, "the run starts in".to_owned())),
            };
            if let Some((expected, by)) = expected.filter(|(e, _)| state != e) {
                return Err(format!("it enters {state:?}, but {by} {expected:?}"));
            }
            if *iteration != p.iteration {
                return Err(format!(
                    "it says iteration {iteration}, but the run has taken {} transitions",
                    p.iteration
                ));
            }
            Ok(())
        }
        Event::ActionStarted {
            state,
            phase,
            index,
            kind,
            ..
        }
        | Event::ActionFinished {
            state,
            phase,
            index,
            kind,
            ..
        } => {
            let current = here()?;
            same_state(state, Some(current))?;
            if let Some((pipeline, _)) = pipeline {
                let action = action_of(pipeline, current, *phase, *index).ok_or_else(|| {
                    format!(
                        "state {current:?} has no {} action {index}",
                        phase_name(*phase)
                    )
                })?;
                let actual = action.kind.value.to_string();
                if *kind != actual {
                    return Err(format!(
                        "{} action {index} of {current:?} is {actual:?}, the record says {kind:?}",
                        phase_name(*phase)
                    ));
                }
            }
            if let Event::ActionFinished { .. } = record.event {
                let progress = match phase {
                    Phase::Enter => &p.enter,
                    Phase::Exit => &p.exit,
                };
                if progress.ambiguous != Some(*index) {
                    return Err(format!(
                        "{} action {index} of {current:?} finished without having started",
                        phase_name(*phase)
                    ));
                }
            }
            Ok(())
        }
        Event::ActionProcess {
            state,
            phase,
            index,
            pgid,
            ..
        } => {
            let current = here()?;
            same_state(state, Some(current))?;
            let progress = match phase {
                Phase::Enter => &p.enter,
                Phase::Exit => &p.exit,
            };
            if progress.ambiguous != Some(*index) {
                return Err(format!(
                    "a process of {} action {index} of {current:?}, which is not running",
                    phase_name(*phase)
                ));
            }
            if *pgid <= 1 {
                return Err(format!("process group {pgid} is no child's"));
            }
            Ok(())
        }
        Event::GuardEvaluated {
            state,
            transition,
            to,
            kind,
            passed,
            ..
        } => {
            let current = here()?;
            same_state(state, Some(current))?;
            if *passed && kind == "never" {
                return Err(format!(
                    "the guard of transition {transition} is `never`, which never passes, yet the record says it passed"
                ));
            }
            if let Some((pipeline, plan)) = pipeline {
                let t = pipeline
                    .transitions
                    .get(*transition)
                    .ok_or_else(|| format!("the pipeline has no transition {transition}"))?;
                if t.from.value != current || t.to.value != *to {
                    return Err(format!(
                        "transition {transition} of the pipeline goes {:?} → {:?}, the record says {current:?} → {to:?}",
                        t.from.value, t.to.value
                    ));
                }
                let guard = plan.guards.get(*transition).and_then(Option::as_ref);
                let actual = guard.map_or("none", CompiledGuard::kind);
                if kind != actual {
                    return Err(format!(
                        "the guard of transition {transition} is {actual:?}, the record says {kind:?}"
                    ));
                }
                if *passed && guard.is_some_and(never_passes) {
                    return Err(format!(
                        "the guard of transition {transition} ({actual}) can never pass, yet the record says it passed"
                    ));
                }
            }
            Ok(())
        }
        Event::Transition {
            transition,
            from,
            to,
            iteration,
        } => {
            let current = here()?;
            if from != current {
                return Err(format!(
                    "transition {transition} goes from {from:?}, but the run is in {current:?}"
                ));
            }
            if let Some((pipeline, _)) = pipeline {
                let t = pipeline
                    .transitions
                    .get(*transition)
                    .ok_or_else(|| format!("the pipeline has no transition {transition}"))?;
                if t.from.value != *from || t.to.value != *to {
                    return Err(format!(
                        "transition {transition} of the pipeline goes {:?} → {:?}, the record says {from:?} → {to:?}",
                        t.from.value, t.to.value
                    ));
                }
            }
            chosen(p, *transition, current, against)?;
            let named = seen.guarded_to.as_deref();
            if let Some(named) = named.filter(|n| p.chosen == Some(*transition) && n != to) {
                return Err(format!(
                    "the guard of transition {transition} that passed named {named:?}, the transition goes to {to:?}"
                ));
            }
            if u64::from(*iteration) != u64::from(p.iteration) + 1 {
                return Err(format!(
                    "it says it is transition #{iteration}, but the run has taken {}",
                    p.iteration
                ));
            }
            Ok(())
        }
        Event::Paused { state, action, .. } => {
            let current = here()?;
            same_state(state, Some(current))?;
            if let (Some((pipeline, _)), Some(index)) = (pipeline, action) {
                if action_of(pipeline, current, Phase::Enter, *index).is_none() {
                    return Err(format!("state {current:?} has no onEnter action {index}"));
                }
            }
            Ok(())
        }
        Event::Resumed { .. } => Ok(()),
        Event::Retried { .. } => Ok(()),
        Event::DoneGate {
            state, transition, ..
        } => {
            same_state(state, at_or_before_entry)?;
            match (transition, p.state.as_deref()) {
                (None, _) => Ok(()),
                (Some(t), Some(current)) => chosen(p, *t, current, against),
                (Some(t), None) => Err(format!(
                    "it was asked for transition {t} before the run entered any state"
                )),
            }
        }
        Event::Interrupted { state } => {
            same_state(state, Some(p.state.as_deref().unwrap_or_default()))
        }
        Event::RunFinished { state, .. } => same_state(state, at_or_before_entry),
        Event::LifecycleBound { .. } => {
            if p.lifecycle.is_some() || p.last_seq != 1 {
                return Err("lifecycle-bound must follow run-started directly".into());
            }
            Ok(())
        }
        Event::TransitionRequested { state, .. } | Event::TransitionDenied { state, .. } => {
            same_state(state, Some(here()?))
        }
        Event::Reseeded { from, .. } => same_state(from, Some(here()?)),
    }
}

/// A `retried` follows the run's failed end and re-enters the state a retry goes on from
/// (`super::retry`), at the iteration the run had reached. Without the pipeline, that is
/// the state the run ended in or the one it left for it.
fn retried_fits(
    p: &Position,
    state: &str,
    iteration: u32,
    pipeline: Option<&Pipeline>,
) -> Result<(), String> {
    if p.lifecycle.is_some() {
        return Err("a lifecycle instance's journal holds no retried records".into());
    }
    let expected = super::retry::retry_state(p, pipeline)
        .map_err(|why| format!("the run cannot be retried here: {why}"))?;
    let also = match (pipeline, &p.finished, p.transitions.last()) {
        (None, Some(f), Some(t)) if t.to == f.state => Some(t.from.as_str()),
        (None, Some(f), _) => Some(f.state.as_str()),
        _ => None,
    };
    if state != expected && Some(state) != also {
        return Err(format!(
            "it re-enters {state:?}, but a retry of this run goes on from {expected:?}"
        ));
    }
    if iteration != p.iteration {
        return Err(format!(
            "it says iteration {iteration}, but the run has taken {} transitions",
            p.iteration
        ));
    }
    Ok(())
}

/// What a lifecycle instance's journal may hold beyond a run's rules: only its own records
/// (no action, pause or end), a reseed or a transition only into a declared state, a
/// transition only to the state its request asked for, and into a `done` state of a task
/// only once the done gate let the request through.
fn lifecycle_fits(
    p: &Position,
    seen: &Seen,
    record: &Record,
    pipeline: Option<(&Pipeline, &Plan)>,
) -> Result<(), String> {
    let declared = |state: &str| match pipeline {
        Some((pipeline, _)) if pipeline.state(state).is_none() => {
            Err(format!("the pipeline has no state {state:?}"))
        }
        _ => Ok(()),
    };
    match &record.event {
        Event::StateEntered { .. }
        | Event::GuardEvaluated { .. }
        | Event::DoneGate { .. }
        | Event::TransitionDenied { .. } => Ok(()),
        Event::TransitionRequested { to, .. } | Event::Reseeded { to, .. } => declared(to),
        Event::Transition { to, .. } => {
            if seen.requested.as_deref() != Some(to.as_str()) {
                return Err(format!(
                    "a lifecycle instance moves only to the state a request asked for, and no pending request asked for {to:?}"
                ));
            }
            if p.wbs.is_some()
                && crate::store::task_status::Status::names_done(to)
                && !seen.gate_let_through
            {
                return Err(format!(
                    "the transition into {to:?} has no done-gate record letting it through"
                ));
            }
            Ok(())
        }
        other => Err(format!(
            "a lifecycle instance's journal holds no {} records",
            other.name()
        )),
    }
}

/// Transition `t` may be taken from `current` in this visit: its guard passed (the last
/// guard that did), or, by the pipeline, it has none.
fn chosen(p: &Position, t: usize, current: &str, against: Against<'_>) -> Result<(), String> {
    let unguarded = match against {
        Against::Pipeline(pipeline, plan) => {
            pipeline
                .transitions
                .get(t)
                .is_some_and(|tr| tr.from.value == current)
                && plan.guards.get(t).is_some_and(Option::is_none)
        }
        Against::Themselves => false,
    };
    match p.chosen {
        Some(c) if c == t => Ok(()),
        _ if unguarded => Ok(()),
        Some(c) => Err(format!(
            "the guard that passed in this visit of {current:?} is transition {c}'s, not transition {t}'s"
        )),
        None => Err(format!(
            "no guard of transition {t} passed in this visit of {current:?}"
        )),
    }
}

fn action_of<'p>(
    pipeline: &'p Pipeline,
    state: &str,
    phase: Phase,
    index: usize,
) -> Option<&'p Action> {
    let state = pipeline.state(state)?;
    match phase {
        Phase::Enter => state.on_enter.get(index),
        Phase::Exit => state.on_exit.get(index),
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Enter => "onEnter",
        Phase::Exit => "onExit",
    }
}

/// A guard that passes on no input at all: `never`, and what is built from it so that it
/// cannot pass (`all` holding one, `any` of only such, `not` of guards that always pass).
fn never_passes(guard: &CompiledGuard) -> bool {
    match guard {
        CompiledGuard::Never => true,
        CompiledGuard::All(guards) => guards.iter().any(never_passes),
        CompiledGuard::Any(guards) => guards.iter().all(never_passes),
        CompiledGuard::Not(guards) => guards.iter().all(always_passes),
        _ => false,
    }
}

/// A guard that passes on any input (the dual of [`never_passes`]).
fn always_passes(guard: &CompiledGuard) -> bool {
    match guard {
        CompiledGuard::Always => true,
        CompiledGuard::All(guards) => guards.iter().all(always_passes),
        CompiledGuard::Any(guards) => guards.iter().any(always_passes),
        CompiledGuard::Not(guards) => guards.iter().any(never_passes),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::done_gate::GateDecision;
    use crate::pipeline::{load, CheckedPipeline, TerminalReason};
    use crate::run::outcome::{Outcome, StopReason};
    use crate::source::SourceFile;

    const YAML: &str = r#"
name: p
initialState: a
terminalStates: [done]
vars: {wbs: "T1"}
states:
  - id: a
    onEnter: [{kind: note, options: {message: hi}}]
    onExit: [{kind: shell, options: {command: "true"}}]
  - {id: b}
  - {id: done}
transitions:
  - {from: a, to: done, guard: {kind: never}}
  - {from: a, to: b, guard: {kind: always}}
  - {from: b, to: done}
  - {from: b, to: a, guard: {kind: all, options: {guards: [{kind: always}, {kind: not, options: {guards: [{kind: always}]}}]}}}
"#;

    fn pipeline() -> CheckedPipeline {
        let loaded = load(&SourceFile::new("p.yaml", YAML)).unwrap();
        CheckedPipeline::new(loaded).unwrap().0
    }

    fn started() -> Event {
        Event::RunStarted {
            pipeline: "p.yaml".into(),
            pipeline_name: "p".into(),
            pipeline_sha256: "00".into(),
            vars: BTreeMap::new(),
            wbs: Some("T1".into()),
            force_done_reason: None,
            policy_sha256: None,
            worktree: None,
        }
    }

    fn entered(state: &str, iteration: u32) -> Event {
        Event::StateEntered {
            state: state.into(),
            iteration,
        }
    }

    fn action(started: bool, state: &str, phase: Phase, index: usize, kind: &str) -> Event {
        if started {
            Event::ActionStarted {
                state: state.into(),
                phase,
                index,
                kind: kind.into(),
                log: None,
                timeout_ms: None,
            }
        } else {
            Event::ActionFinished {
                state: state.into(),
                phase,
                index,
                kind: kind.into(),
                ok: true,
                error: None,
                timed_out: false,
                exit_code: None,
                duration_ms: 0,
                set_vars: BTreeMap::new(),
                message: None,
                usage: None,
                commit: None,
            }
        }
    }

    fn guard(state: &str, transition: usize, to: &str, kind: &str, passed: bool) -> Event {
        Event::GuardEvaluated {
            state: state.into(),
            transition,
            to: to.into(),
            kind: kind.into(),
            passed,
            detail: None,
            duration_us: 0,
        }
    }

    fn transition(transition: usize, from: &str, to: &str, iteration: u32) -> Event {
        Event::Transition {
            transition,
            from: from.into(),
            to: to.into(),
            iteration,
        }
    }

    fn gate(state: &str, transition: Option<usize>) -> Event {
        Event::DoneGate {
            state: state.into(),
            transition,
            decision: GateDecision::Allow,
            verdict: Some("PASS".into()),
            message: None,
            forced: false,
        }
    }

    fn finished(state: &str) -> Event {
        Event::RunFinished {
            outcome: Outcome::Done,
            state: state.into(),
            terminal_reason: TerminalReason::Done,
            reason: StopReason::TerminalState,
            iterations: 2,
        }
    }

    /// A run of the pipeline: a → b → done, every record as the runner writes it.
    fn honest() -> Vec<Event> {
        vec![
            started(),
            entered("a", 0),
            action(true, "a", Phase::Enter, 0, "note"),
            action(false, "a", Phase::Enter, 0, "note"),
            guard("a", 0, "done", "never", false),
            guard("a", 1, "b", "always", true),
            action(true, "a", Phase::Exit, 0, "shell"),
            action(false, "a", Phase::Exit, 0, "shell"),
            transition(1, "a", "b", 1),
            entered("b", 1),
            guard("b", 2, "done", "none", true),
            gate("b", Some(2)),
            transition(2, "b", "done", 2),
            entered("done", 2),
            finished("done"),
        ]
    }

    fn records(events: Vec<Event>) -> Vec<Record> {
        events
            .into_iter()
            .zip(1..)
            .map(|(event, seq)| Record {
                seq,
                at: "t".into(),
                event,
            })
            .collect()
    }

    /// `Err((seq, what))` of the first record that does not fit, in both modes.
    fn check(events: Vec<Event>, with_pipeline: bool) -> Result<(), (u64, String)> {
        let checked = pipeline();
        let plan = Plan::new(checked.pipeline()).unwrap();
        let against = if with_pipeline {
            Against::Pipeline(checked.pipeline(), &plan)
        } else {
            Against::Themselves
        };
        replay_checked(&records(events), against, "R")
            .map(|p| assert!(p.is_some()))
            .map_err(|e| (e.seq, e.what))
    }

    /// `honest()` with the record at `seq` replaced by `event` (or removed).
    fn forged(seq: usize, event: Option<Event>) -> Vec<Event> {
        let mut events = honest();
        match event {
            Some(e) => events[seq - 1] = e,
            None => {
                events.remove(seq - 1);
            }
        }
        events
    }

    #[track_caller]
    fn refused(events: Vec<Event>, with_pipeline: bool, seq: u64, what: &str) {
        match check(events, with_pipeline) {
            Err((s, w)) => {
                assert_eq!(s, seq, "{w}");
                assert!(w.contains(what), "{w:?} does not say {what:?}");
            }
            Ok(()) => panic!("not refused; expected seq {seq}: {what}"),
        }
    }

    #[test]
    fn an_honest_journal_fits_with_and_without_its_pipeline() {
        assert_eq!(check(honest(), true), Ok(()));
        assert_eq!(check(honest(), false), Ok(()));
    }

    #[test]
    fn a_transition_from_elsewhere_of_another_pipeline_or_without_its_guard_is_refused() {
        let elsewhere = forged(9, Some(transition(2, "b", "done", 1)));
        refused(
            elsewhere,
            false,
            9,
            r#"goes from "b", but the run is in "a""#,
        );
        let unknown = forged(9, Some(transition(7, "a", "b", 1)));
        refused(unknown, true, 9, "the pipeline has no transition 7");
        let other = forged(9, Some(transition(1, "a", "done", 1)));
        refused(
            other,
            true,
            9,
            r#"goes "a" → "b", the record says "a" → "done""#,
        );
        let retargeted = forged(9, Some(transition(1, "a", "done", 1)));
        refused(
            retargeted,
            false,
            9,
            r#"passed named "b", the transition goes to "done""#,
        );
        let not_chosen = forged(9, Some(transition(0, "a", "done", 1)));
        refused(
            not_chosen,
            false,
            9,
            "is transition 1's, not transition 0's",
        );
        let mut unguarded = honest();
        unguarded.drain(4..6);
        refused(unguarded, true, 7, "no guard of transition 1 passed");
        let skipped = forged(9, Some(transition(1, "a", "b", 4)));
        refused(skipped, true, 9, "transition #4, but the run has taken 0");
    }

    #[test]
    fn a_transition_without_a_guard_needs_no_guard_record_when_the_pipeline_says_so() {
        assert_eq!(check(forged(11, None), true), Ok(()));
        refused(
            forged(11, None),
            false,
            11,
            "no guard of transition 2 passed",
        );
    }

    #[test]
    fn a_guard_that_can_never_pass_never_passed() {
        let never = forged(5, Some(guard("a", 0, "done", "never", true)));
        refused(never.clone(), true, 5, "`never`, which never passes");
        refused(never, false, 5, "`never`, which never passes");
        let mut events = honest();
        events[10] = guard("b", 3, "a", "all", true);
        refused(events, true, 11, "(all) can never pass");
        let kind = forged(6, Some(guard("a", 1, "b", "shell", true)));
        refused(kind, true, 6, r#"is "always", the record says "shell""#);
        let elsewhere = forged(6, Some(guard("b", 2, "done", "none", true)));
        refused(
            elsewhere,
            false,
            6,
            r#"names state "b", but the run is in "a""#,
        );
    }

    #[test]
    fn state_entered_names_the_initial_state_or_the_last_transitions_target() {
        refused(
            forged(2, Some(entered("b", 0))),
            true,
            2,
            r#"the run starts in "a""#,
        );
        refused(
            forged(10, Some(entered("done", 1))),
            false,
            10,
            "the last transition (seq 9) entered \"b\"",
        );
        refused(forged(10, Some(entered("b", 3))), true, 10, "iteration 3");
    }

    #[test]
    fn an_action_record_names_an_action_of_the_current_state() {
        let missing = forged(3, Some(action(true, "a", Phase::Enter, 4, "note")));
        refused(missing, true, 3, r#"state "a" has no onEnter action 4"#);
        let kind = forged(7, Some(action(true, "a", Phase::Exit, 0, "note")));
        refused(kind, true, 7, r#"is "shell", the record says "note""#);
        let elsewhere = forged(3, Some(action(true, "b", Phase::Enter, 0, "note")));
        refused(elsewhere, false, 3, "but the run is in \"a\"");
        refused(forged(3, None), false, 3, "finished without having started");
        let early = vec![started(), action(true, "a", Phase::Enter, 0, "note")];
        refused(early, true, 2, "before the run entered any state");
    }

    #[test]
    fn run_started_comes_once_and_nothing_follows_run_finished() {
        let mut twice = honest();
        twice.insert(1, started());
        refused(twice, true, 2, "a second run-started");
        let mut after = honest();
        after.push(entered("done", 2));
        refused(after, true, 16, "it follows run-finished (seq 15)");
    }

    #[test]
    fn a_done_gate_record_names_the_state_and_the_chosen_transition() {
        refused(
            forged(12, Some(gate("b", Some(0)))),
            true,
            12,
            "transition 2's, not transition 0's",
        );
        refused(
            forged(12, Some(gate("a", Some(2)))),
            true,
            12,
            "the run is in \"b\"",
        );
        assert_eq!(check(forged(12, Some(gate("b", None))), true), Ok(()));
        let initial = vec![started(), gate("a", None), finished("a")];
        assert_eq!(check(initial, true), Ok(()));
        let elsewhere = vec![started(), gate("b", None)];
        refused(elsewhere, true, 2, "the run is in \"a\"");
    }

    fn retried(state: &str, iteration: u32) -> Event {
        Event::Retried {
            state: state.into(),
            iteration,
            force_done_reason: None,
        }
    }

    fn failed_in(state: &str, reason: StopReason, iterations: u32) -> Event {
        Event::RunFinished {
            outcome: Outcome::Failed,
            state: state.into(),
            terminal_reason: TerminalReason::FailedCheck,
            reason,
            iterations,
        }
    }

    /// a → b, then b's onEnter… no: the run fails in b (an action), and is retried at b.
    fn failed_at_b() -> Vec<Event> {
        let mut events = honest();
        events.truncate(10); // … transition a → b, state-entered b
        events.push(failed_in("b", StopReason::ActionFailed, 1));
        events
    }

    #[test]
    fn a_retry_follows_a_failed_end_and_reenters_the_state_a_retry_goes_on_from() {
        let mut ok = failed_at_b();
        ok.push(retried("b", 1));
        ok.push(entered("b", 1));
        ok.push(guard("b", 2, "done", "none", true));
        assert_eq!(check(ok.clone(), true), Ok(()));
        assert_eq!(check(ok, false), Ok(()));

        let mut elsewhere = failed_at_b();
        elsewhere.push(retried("a", 1));
        refused(
            elsewhere,
            true,
            12,
            r#"it re-enters "a", but a retry of this run goes on from "b""#,
        );

        let mut iteration = failed_at_b();
        iteration.push(retried("b", 0));
        refused(iteration, true, 12, "iteration 0");

        let mut entered_elsewhere = failed_at_b();
        entered_elsewhere.push(retried("b", 1));
        entered_elsewhere.push(entered("a", 1));
        refused(entered_elsewhere, true, 13, r#"the retry re-entered "b""#);
    }

    #[test]
    fn no_retry_of_a_run_that_did_not_fail() {
        let mut done = honest();
        done.push(retried("b", 2));
        refused(done, true, 16, "only a failed run is retried");
        let mut running = honest();
        running.truncate(10);
        running.push(retried("b", 1));
        refused(running, true, 11, "it has not finished");
    }

    #[test]
    fn a_retry_after_a_failure_state_reenters_the_state_it_left() {
        let mut events = honest();
        events.truncate(12); // … guard b → done passed, gate allowed
        events[12 - 1] = guard("b", 2, "done", "none", true);
        // b → done was never a failure state: model one by ending failed in `done` itself.
        events.push(transition(2, "b", "done", 2));
        events.push(entered("done", 2));
        events.push(failed_in("done", StopReason::FailureState, 2));
        let mut back = events.clone();
        back.push(retried("b", 2));
        assert_eq!(check(back.clone(), true), Ok(()));
        assert_eq!(check(back, false), Ok(()));
        let mut into_terminal = events;
        into_terminal.push(retried("done", 2));
        refused(into_terminal, true, 16, r#"goes on from "b""#);
    }
}
