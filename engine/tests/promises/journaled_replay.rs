//! The crash/resume and non-bypass promises on the Restate host (`run::start_journaled`),
//! with the engine's journal kept in memory as the server keeps it across attempts. A
//! worker that dies inside a step has run the step's body and journaled nothing from
//! then on; the next attempt replays the same journal: journaled values come back without
//! their bodies running, an action whose started marker is journaled and whose end is
//! not is ambiguous and never run again, and everything else goes on as if no worker had
//! died. Each attempt is one real run (real actions, guards and done gate) in a temporary
//! project that stands for the worker's disk, kept across attempts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use proptest::sample::Index;
use spur_engine::pipeline::CheckedPipeline;
use spur_engine::run::fleet_state::{FleetRecords, FleetWrite};
use spur_engine::run::journal::{Event, Record};
use spur_engine::run::{
    self, RunError, RunId, RunObserver, RunOutcome, StartRequest, StepJournal, TaskDoneGate,
};
use spur_engine::wbs::Wbs;

use crate::non_bypass::{artifact_case, ends_done_only_when_certified, spec, Tally};
use crate::property::property;
use crate::run_harness::{one_run_at_a_time, Project};

/// Pipelines searched by default by the crash/replay property; each is run once, then
/// crashed and replayed at up to [`CRASHES`] of its steps.
const CRASH_CASES: u32 = 20;
const CRASHES: usize = 5;
/// Runs searched by default by non-bypass on the journaled host (each maybe crashed once).
const NON_BYPASS_CASES: u32 = 100;
const REASON: &str = "accepted by the operator after review";
const RUN_ID: &str = "20260101T000000Z-00abcd";

/// Where an attempt dies: inside the body of the step with this name, or of the n-th step
/// whose body runs; or as it makes the n-th call to the server (nothing sent).
#[derive(Debug, Clone)]
enum Crash {
    Named(String),
    Nth(usize),
    BeforeCall(usize),
}

/// The engine's journal: named step values kept across attempts; and the server's records
/// of the task (ledger, artifact, audit chain), read and written through journaled calls
/// as the workflow's calls to the `Task` and `Audit` objects are.
#[derive(Default)]
struct MemJournal {
    server: FleetRecords,
    /// The results of the calls to the server, in the order the run made them.
    calls: Vec<(String, Result<String, String>)>,
    /// Calls made so far in the current attempt.
    calls_now: usize,
    values: HashMap<String, String>,
    /// The journaled step names, in the order they were journaled.
    order: Vec<String>,
    /// How many times each step's body ran, over all attempts.
    bodies: HashMap<String, u32>,
    /// Bodies run in the current attempt.
    ran_now: Vec<String>,
    crash: Option<Crash>,
    /// The step the attempt died in; the attempt is dead from then on.
    died_in: Option<String>,
    /// The last call was made now (not replayed).
    ran_call: bool,
}

impl MemJournal {
    /// A new attempt on a new worker: the journal is the server's, the dead worker's gone.
    fn new_attempt(&mut self) {
        self.ran_now.clear();
        self.calls_now = 0;
        self.crash = None;
        self.died_in = None;
    }
}

const DEAD: &str = "the worker died";

impl StepJournal for MemJournal {
    fn step(
        &mut self,
        name: &str,
        body: &mut dyn FnMut() -> Result<String, String>,
    ) -> Result<String, String> {
        if self.died_in.is_some() {
            // A dead worker journals and runs nothing more.
            return Err(DEAD.to_owned());
        }
        if let Some(value) = self.values.get(name) {
            return Ok(value.clone());
        }
        let value = body()?;
        *self.bodies.entry(name.to_owned()).or_default() += 1;
        self.ran_now.push(name.to_owned());
        let dies = match &self.crash {
            Some(Crash::Named(n)) => n == name,
            Some(Crash::Nth(n)) => self.ran_now.len() == n + 1,
            Some(Crash::BeforeCall(_)) | None => false,
        };
        if dies {
            self.died_in = Some(name.to_owned());
            return Err(DEAD.to_owned());
        }
        self.order.push(name.to_owned());
        self.values.insert(name.to_owned(), value.clone());
        Ok(value)
    }

    fn promise(&mut self, name: &str, _note: &str) -> Result<String, String> {
        Err(format!(
            "no pause is generated, yet the run waits on {name}"
        ))
    }

    fn task_records(&mut self, wbs: &str) -> Option<Result<String, String>> {
        let server = serde_json::to_string(&self.server).map_err(|e| e.to_string());
        Some(self.call(format!("records {wbs}"), |_| server))
    }

    fn task_write(&mut self, wbs: &str, write: &str, certify: bool) -> Result<(), String> {
        let mut server = self.server.clone();
        let result = self.call(format!("write {wbs} {write} {certify}"), |_| {
            let write: FleetWrite = serde_json::from_str(write).map_err(|e| e.to_string())?;
            if !write.audit.is_empty() && !certify {
                return Err("only the done gate appends to the audit chain".to_owned());
            }
            if write.after != server.ledger.len() || write.audit_after != server.audit.len() {
                return Err("the server's records have moved on since".to_owned());
            }
            server.ledger.extend(write.lines.iter().cloned());
            if write.artifact.is_some() {
                server.artifact.clone_from(&write.artifact);
            }
            server.audit.extend(write.audit.iter().cloned());
            Ok(String::new())
        });
        if result.is_ok() && self.ran_call {
            self.server = server;
        }
        result.map(|_| ())
    }
}

impl MemJournal {
    /// A call to the server, journaled: made once, its result replayed after. A replay
    /// that makes another call at the same place is refused, as the engine refuses a
    /// journal mismatch.
    fn call(
        &mut self,
        what: String,
        make: impl FnOnce(&str) -> Result<String, String>,
    ) -> Result<String, String> {
        self.ran_call = false;
        if self.died_in.is_some() {
            return Err(DEAD.to_owned());
        }
        let at = self.calls_now;
        if matches!(self.crash, Some(Crash::BeforeCall(n)) if n == at) && self.calls.len() == at {
            self.died_in = Some(format!("call {at}: {what}"));
            return Err(DEAD.to_owned());
        }
        self.calls_now += 1;
        if let Some((made, result)) = self.calls.get(at) {
            if *made != what {
                return Err(format!("journal mismatch: {what} replayed as {made}"));
            }
            return result.clone();
        }
        let result = make(&what);
        self.calls.push((what, result.clone()));
        self.ran_call = true;
        result
    }
}

/// The records the host tells, in order (on a replay: all of them, journaled or made).
#[derive(Default)]
struct Records(Vec<Record>);

impl RunObserver for Records {
    fn record(&mut self, record: &Record) {
        self.0.push(record.clone());
    }
}

/// One attempt of the run on the journaled host, with the real done gate.
fn attempt(
    project: &Project,
    checked: &CheckedPipeline,
    flag: bool,
    force: Option<&str>,
    journal: &mut MemJournal,
) -> (Result<RunOutcome, RunError>, Vec<Record>) {
    let vars = run::vars::resolve(checked.pipeline(), None, &project.case_vars(flag))
        .expect("the generated vars resolve");
    let mut records = Records::default();
    let _one = one_run_at_a_time();
    let outcome = run::start_journaled(
        StartRequest {
            pipeline: checked,
            pipeline_path: project.pipeline_path(),
            vars,
            force_done_reason: force.map(str::to_owned),
            worktree: None,
        },
        &project.settings(),
        RunId::parse(RUN_ID).expect("a valid run id"),
        journal,
        &mut TaskDoneGate,
        &mut records,
        None,
    );
    (outcome, records.0)
}

/// A project with the case's verdict artifact written through spur's own writer, and the
/// server's records of task T1 seeded with it (as a step's `spur` call would send them).
fn seeded(
    spec_yaml: &str,
    artifact: Option<String>,
) -> Result<(Project, CheckedPipeline, MemJournal), TestCaseError> {
    let project = Project::new();
    let checked = project
        .checked(spec_yaml)
        .map_err(|e| TestCaseError::fail(format!("generated pipeline refused: {e}")))?;
    let mut journal = MemJournal::default();
    if let Some(text) = artifact {
        project.write_artifact(&text);
        let ledger = std::fs::read_to_string(project.state_dir().task_ledger_path(&t1()))
            .map_err(|e| TestCaseError::fail(format!("the ledger: {e}")))?;
        journal.server.ledger = ledger.lines().map(str::to_owned).collect();
        journal.server.artifact = Some(text);
    }
    Ok((project, checked, journal))
}

fn t1() -> Wbs {
    Wbs::parse("T1").expect("valid wbs")
}

/// The server's ledger and audit chain of T1, put where a local run's are, so the checks
/// of a local run read them.
fn server_records_in_place(project: &Project, journal: &MemJournal) -> std::io::Result<()> {
    let state_dir = project.state_dir();
    let write = |path: std::path::PathBuf, lines: &[String]| -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, text)
    };
    write(state_dir.task_ledger_path(&t1()), &journal.server.ledger)?;
    write(state_dir.audit_path(), &journal.server.audit)
}

/// `(from, to, iteration)` of every transition record.
fn transitions(records: &[Record]) -> Vec<(String, String, u32)> {
    records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Transition {
                from,
                to,
                iteration,
                ..
            } => Some((from.clone(), to.clone(), *iteration)),
            _ => None,
        })
        .collect()
}

/// How many times each terminal's marker action ran (a line per run).
fn marker_runs(project: &Project) -> Vec<(String, usize)> {
    let mut runs: Vec<(String, usize)> = std::fs::read_dir(project.root())
        .expect("the project")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id = name.strip_prefix("entered-")?.to_owned();
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            Some((id, text.lines().count()))
        })
        .collect();
    runs.sort();
    runs
}

/// The outcome as `--json` prints it, the project's own path taken out (two projects'
/// runs are compared).
fn outcome_json(outcome: &RunOutcome, project: &Project) -> String {
    serde_json::to_string(outcome)
        .expect("an outcome is JSON")
        .replace(&project.root().display().to_string(), "<project>")
}

/// The `(state, kind)` of the action journaled as step `name` (`action SEQ KIND`): its
/// started marker is record SEQ.
fn action_of(name: &str, records: &[Record]) -> Option<(String, String)> {
    let seq: u64 = name
        .strip_prefix("action ")?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    records
        .iter()
        .find(|r| r.seq == seq)
        .and_then(|r| match &r.event {
            Event::ActionStarted { state, kind, .. } => Some((state.clone(), kind.clone())),
            _ => None,
        })
}

#[test]
fn a_worker_dying_in_any_step_replays_to_the_same_end_or_an_ambiguous_action_never_run_twice() {
    let crashes = AtomicU32::new(0);
    let ambiguous = AtomicU32::new(0);
    let force = prop_oneof![3 => Just(None), 1 => Just(Some(REASON))];
    property(
        "journaled host: a worker dies in a step, the run is replayed (runs, each crashed at up to 5 steps and before each call to the server)",
        CRASH_CASES,
        (
            spec(true, true),
            artifact_case(),
            force,
            proptest::collection::vec(any::<Index>(), CRASHES),
        ),
        |(spec, artifact, force, picks)| {
            let yaml = spec.yaml();
            let (whole, checked, mut journal) = seeded(&yaml, artifact.text())?;
            let (outcome, records) = attempt(&whole, &checked, spec.flag, force, &mut journal);
            let outcome =
                outcome.map_err(|e| TestCaseError::fail(format!("uncrashed run: {e:?}")))?;
            let steps = journal.order.clone();
            let markers = marker_runs(&whole);
            let expected = (outcome_json(&outcome, &whole), transitions(&records));

            // Dying as it calls the server (before the call is sent): the replay makes the
            // call, and ends as the run that never died.
            for c in 0..journal.calls.len() {
                crashes.fetch_add(1, Ordering::Relaxed);
                let (project, checked, mut journal) = seeded(&yaml, artifact.text())?;
                journal.crash = Some(Crash::BeforeCall(c));
                let (died, _) = attempt(&project, &checked, spec.flag, force, &mut journal);
                prop_assert!(journal.died_in.is_some(), "call {c} was not made");
                prop_assert!(died.is_err(), "a dead worker reported {died:?}");
                journal.new_attempt();
                let (replayed, replay_records) =
                    attempt(&project, &checked, spec.flag, force, &mut journal);
                let replayed = replayed.map_err(|e| {
                    TestCaseError::fail(format!("died before call {c}, the replay: {e:?}"))
                })?;
                let got = (
                    outcome_json(&replayed, &project),
                    transitions(&replay_records),
                );
                prop_assert_eq!(&got, &expected, "died before call {}", c);
                prop_assert_eq!(&marker_runs(&project), &markers, "died before call {}", c);
                for (name, runs) in &journal.bodies {
                    prop_assert_eq!(*runs, 1, "the body of {} ran {} times", name, runs);
                }
            }

            let points: Vec<usize> = if steps.len() <= CRASHES {
                (0..steps.len()).collect()
            } else {
                let mut p: Vec<usize> = picks.iter().map(|i| i.index(steps.len())).collect();
                p.sort_unstable();
                p.dedup();
                p
            };
            for k in points {
                let dies_in = steps[k].clone();
                crashes.fetch_add(1, Ordering::Relaxed);
                let (project, checked, mut journal) = seeded(&yaml, artifact.text())?;
                journal.crash = Some(Crash::Named(dies_in.clone()));
                let (died, _) = attempt(&project, &checked, spec.flag, force, &mut journal);
                prop_assert_eq!(journal.died_in.as_deref(), Some(dies_in.as_str()));
                prop_assert!(died.is_err(), "a dead worker reported {died:?}");
                let before = journal.order.clone();
                prop_assert_eq!(&before[..], &steps[..k], "the journal up to the crash");

                journal.new_attempt();
                let (replayed, replay_records) =
                    attempt(&project, &checked, spec.flag, force, &mut journal);
                // The replay ran the body of no step journaled before the crash.
                for name in &journal.ran_now {
                    prop_assert!(!before.contains(name), "{name} ran again on the replay");
                }
                for (name, runs) in &journal.bodies {
                    let allowed = if *name == dies_in { 2 } else { 1 };
                    prop_assert!(*runs <= allowed, "the body of {name} ran {runs} times");
                }
                let ran = marker_runs(&project);
                if let Some((state, kind)) = action_of(&dies_in, &records) {
                    ambiguous.fetch_add(1, Ordering::Relaxed);
                    match &replayed {
                        Err(RunError::Ambiguous {
                            state: s, kind: k, ..
                        }) => {
                            prop_assert_eq!((s, k), (&state, &kind), "crashed in {}", dies_in);
                        }
                        other => {
                            return Err(TestCaseError::fail(format!(
                                "crashed in {dies_in} ({state} {kind}), the replay ended {other:?}"
                            )))
                        }
                    }
                    for (id, n) in &ran {
                        prop_assert!(*n <= 1, "marker {id} ran {n} times");
                    }
                    // What ran is what the uncrashed run ran up to this action.
                    for (id, n) in &ran {
                        let uncrashed = markers.iter().find(|(m, _)| m == id).map(|(_, n)| *n);
                        prop_assert_eq!(Some(*n), uncrashed, "marker {}", id);
                    }
                    // A further replay says the same and runs nothing.
                    journal.new_attempt();
                    let (again, _) = attempt(&project, &checked, spec.flag, force, &mut journal);
                    prop_assert!(
                        matches!(again, Err(RunError::Ambiguous { .. })),
                        "{again:?}"
                    );
                    prop_assert_eq!(marker_runs(&project), ran);
                } else {
                    let replayed = replayed.map_err(|e| {
                        TestCaseError::fail(format!("crashed in {dies_in}, the replay: {e:?}"))
                    })?;
                    let got = (
                        outcome_json(&replayed, &project),
                        transitions(&replay_records),
                    );
                    prop_assert_eq!(&got, &expected, "crashed in {}", dies_in);
                    prop_assert_eq!(&ran, &markers, "crashed in {}", dies_in);
                    prop_assert_eq!(&journal.order, &steps, "crashed in {}", dies_in);
                }
            }
            Ok(())
        },
    );
    let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
    eprintln!(
        "  crash points: {} ({} in an action, replayed as ambiguous; the others in other steps or before a call to the server)",
        n(&crashes),
        n(&ambiguous)
    );
    assert!(n(&ambiguous) > 0 && n(&crashes) > n(&ambiguous));
}

#[test]
fn on_the_journaled_host_a_run_ends_done_only_through_a_recomputed_pass_or_an_audited_force() {
    let force = prop_oneof![4 => Just(None), 1 => Just(Some(REASON))];
    let crash = prop_oneof![1 => Just(None), 4 => (0usize..10).prop_map(Some)];
    let tally = Tally::default();
    let crashed = AtomicU32::new(0);
    let ambiguous = AtomicU32::new(0);
    property(
        "non-bypass on the journaled host (runs, some crashed at a random step and replayed)",
        NON_BYPASS_CASES,
        (spec(true, false), artifact_case(), force, crash),
        |(spec, artifact, force, crash)| {
            let (project, checked, mut journal) = seeded(&spec.yaml(), artifact.text())?;
            journal.crash = crash.map(Crash::Nth);
            let (mut outcome, mut records) =
                attempt(&project, &checked, spec.flag, force, &mut journal);
            let died_in = journal.died_in.clone();
            if let Some(step) = &died_in {
                crashed.fetch_add(1, Ordering::Relaxed);
                prop_assert!(outcome.is_err(), "a dead worker reported {outcome:?}");
                journal.new_attempt();
                (outcome, records) = attempt(&project, &checked, spec.flag, force, &mut journal);
                if let Err(RunError::Ambiguous { .. }) = &outcome {
                    // The run stopped at the marker it died in, for a person to decide:
                    // the task is done only if the gate certified it before (a success
                    // terminal's onEnter runs after the gate).
                    ambiguous.fetch_add(1, Ordering::Relaxed);
                    prop_assert!(step.starts_with("action "), "ambiguous after {step}");
                    server_records_in_place(&project, &journal)
                        .map_err(|e| TestCaseError::fail(format!("the server's records: {e}")))?;
                    let done = spur_engine::store::task_status::current_status(
                        &project.state_dir(),
                        &t1(),
                    )
                    .map_err(|e| TestCaseError::fail(format!("task status: {e:?}")))?
                    .is_done();
                    let certified = artifact.certifies() || force.is_some();
                    let at_success = matches!(spec.route(), crate::non_bypass::End::Success(_));
                    prop_assert!(
                        !done || (certified && at_success),
                        "done without certification"
                    );
                    return Ok(());
                }
            }
            server_records_in_place(&project, &journal)
                .map_err(|e| TestCaseError::fail(format!("the server's records: {e}")))?;
            let outcome = outcome.map_err(|e| {
                TestCaseError::fail(format!("run error (died in {died_in:?}): {e:?}"))
            })?;
            ends_done_only_when_certified(
                &project, &spec, &artifact, force, &outcome, &records, &tally,
            )
        },
    );
    tally.finish();
    let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
    eprintln!(
        "  crashed and replayed: {} ({} ambiguous)",
        n(&crashed),
        n(&ambiguous)
    );
    assert!(n(&crashed) > 0);
}
