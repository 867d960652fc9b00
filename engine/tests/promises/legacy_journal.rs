//! Journals written before the journal's records went through serde's derive (captured from
//! the `spur` binary of that time, with their pipelines, in `fixtures/legacy_journal/`)
//! still read, replay and resume: a run paused or interrupted by an older spur goes on
//! under this one.

use std::path::{Path, PathBuf};

use spur_engine::done_gate::GateDecision;
use spur_engine::pipeline::TerminalReason;
use spur_engine::run::journal::PauseKind;
use spur_engine::run::journal::{self, Phase};
use spur_engine::run::replay::{self, Position};
use spur_engine::run::{Outcome, RunError, StopReason};

use crate::run_harness::Project;

/// A fixture: its name, the run id it was captured under, its pipeline text.
struct Legacy {
    name: &'static str,
    run_id: &'static str,
    pipeline: &'static str,
}

const DONE: Legacy = Legacy {
    name: "done",
    run_id: "20261201T192536Z-0fca86",
    pipeline: include_str!("fixtures/legacy_journal/done.yaml"),
};
const INITIAL_GATE: Legacy = Legacy {
    name: "initial-gate",
    run_id: "20261201T192536Z-fdbe60",
    pipeline: include_str!("fixtures/legacy_journal/initial-gate.yaml"),
};
const PAUSED: Legacy = Legacy {
    name: "paused",
    run_id: "20261201T192537Z-3a7099",
    pipeline: include_str!("fixtures/legacy_journal/paused.yaml"),
};
const INTERRUPTED: Legacy = Legacy {
    name: "interrupted",
    run_id: "20261201T192537Z-18d141",
    pipeline: include_str!("fixtures/legacy_journal/interrupted.yaml"),
};

impl Legacy {
    fn journal(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/promises/fixtures/legacy_journal")
            .join(format!("{}.jsonl", self.name))
    }

    fn position(&self) -> Position {
        let content = journal::read(&self.journal()).expect("a legacy journal reads");
        assert!(!content.torn_tail, "{}", self.name);
        replay::replay(&content.records).expect("a legacy journal replays")
    }

    /// A project holding this run as the older spur left it.
    fn project(&self) -> (Project, spur_engine::pipeline::CheckedPipeline) {
        let project = Project::new();
        let checked = project.checked(self.pipeline).expect("the fixture checks");
        let run_dir = project.state_dir().runs_dir().join(self.run_id);
        std::fs::create_dir_all(run_dir.join("actions")).unwrap();
        std::fs::copy(self.journal(), run_dir.join("journal.jsonl")).unwrap();
        (project, checked)
    }
}

/// The old "no transition" of a done-gate record; today the field is left out instead.
const NO_TRANSITION: &str = r#""transition":18446744073709551615,"#;

/// Every line, read and written back as the journal writes a record (serde's derive), is
/// the line the older spur wrote: same fields, same order, same spelling. The one
/// exception is the done gate asked for no transition, which no longer writes a sentinel.
#[test]
fn legacy_journal_lines_read_back_to_the_same_bytes() {
    let mut sentinels = 0;
    for legacy in [DONE, INITIAL_GATE, PAUSED, INTERRUPTED] {
        let text = std::fs::read_to_string(legacy.journal()).unwrap();
        let content = journal::read(&legacy.journal()).unwrap();
        assert_eq!(
            content.records.len(),
            text.lines().count(),
            "{}",
            legacy.name
        );
        for (line, record) in text.lines().zip(&content.records) {
            let written = serde_json::to_string(record).unwrap();
            if line.contains(NO_TRANSITION) {
                sentinels += 1;
                assert_eq!(written, line.replace(NO_TRANSITION, ""), "{}", legacy.name);
            } else {
                assert_eq!(written, line, "{}", legacy.name);
            }
        }
    }
    assert_eq!(
        sentinels, 1,
        "the initial-gate fixture has the only sentinel"
    );
}

#[test]
fn legacy_journals_replay_to_where_their_runs_stood() {
    let done = DONE.position();
    let finished = done.finished.as_ref().expect("finished");
    assert_eq!(finished.outcome, Outcome::Done);
    assert_eq!(finished.terminal_reason, TerminalReason::Done);
    assert_eq!(finished.reason, StopReason::TerminalState);
    assert_eq!(done.wbs.as_deref(), Some("0592"));
    assert_eq!(done.force_done_reason.as_deref(), Some("legacy fixture"));
    assert_eq!(done.vars.get("v").map(String::as_str), Some("seven"));
    let t: Vec<_> = done
        .transitions
        .iter()
        .map(|t| (t.transition, t.from.as_str(), t.to.as_str()))
        .collect();
    assert_eq!(t, [(1, "work", "done")]);

    let gate = INITIAL_GATE.position();
    let finished = gate.finished.as_ref().expect("finished");
    assert_eq!(finished.outcome, Outcome::Failed);
    assert_eq!(finished.reason, StopReason::DoneGateDenied);
    let record = gate.gate.as_ref().expect("a done-gate record");
    assert_eq!(record.decision, GateDecision::Deny);
    // Recorded then as usize::MAX, "no transition".
    assert_eq!(record.transition, None);
    assert!(gate.transitions.is_empty());

    let paused = PAUSED.position();
    assert!(paused.finished.is_none());
    assert_eq!(paused.state.as_deref(), Some("hold"));
    assert_eq!(
        paused.paused.as_ref().map(|(kind, _, _)| *kind),
        Some(PauseKind::State)
    );
    assert_eq!(
        paused.vars.get("__hitlAnswer").map(String::as_str),
        Some("yes")
    );

    let interrupted = INTERRUPTED.position();
    assert!(interrupted.interrupted);
    assert_eq!(interrupted.ambiguous(), Some((Phase::Enter, 0)));
}

#[test]
fn a_run_paused_by_an_older_spur_resumes_to_its_end() {
    let (project, checked) = PAUSED.project();
    let outcome = project.resume(&checked, PAUSED.run_id).expect("resumes");
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert_eq!(outcome.state, "done");
    assert_eq!(outcome.iterations, 2);
    // `hold`'s onEnter ran under the older spur; only `done`'s runs now.
    assert_eq!(
        std::fs::read_to_string(project.root().join("trail.txt")).unwrap(),
        "done\n"
    );
    let content = journal::read(&project.journal_path(PAUSED.run_id)).unwrap();
    let position = replay::replay(&content.records).unwrap();
    assert_eq!(position.transitions.len(), 2);
}

#[test]
fn a_run_interrupted_under_an_older_spur_reruns_its_ambiguous_action_and_ends() {
    let (project, checked) = INTERRUPTED.project();
    let outcome = project
        .resume(&checked, INTERRUPTED.run_id)
        .expect("resumes");
    assert_eq!(outcome.outcome, Outcome::Completed);
    assert_eq!(outcome.state, "b");
    assert_eq!(
        std::fs::read_to_string(project.root().join("trail.txt")).unwrap(),
        "ran\n"
    );
}

#[test]
fn a_run_finished_under_an_older_spur_is_not_continued() {
    for legacy in [DONE, INITIAL_GATE] {
        let (project, checked) = legacy.project();
        match project.resume(&checked, legacy.run_id) {
            Err(RunError::AlreadyFinished { state, .. }) => assert_eq!(state, "done"),
            other => panic!("{}: expected AlreadyFinished, got {other:?}", legacy.name),
        }
    }
}
