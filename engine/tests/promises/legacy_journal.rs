//! Journals written before the journal's format 1 (captured from the `spur` binary of that
//! time, with their pipelines, in `fixtures/legacy_journal/`: no format version, no hash
//! chain) still read and replay, so `spur trace` and `spur runs` show them; but nothing
//! shows they were not edited since, so none of them is resumed, whatever its state: the
//! run must be started again.

use std::path::{Path, PathBuf};

use spur_engine::done_gate::GateDecision;
use spur_engine::pipeline::TerminalReason;
use spur_engine::run::journal::{self, JournalFormat, PauseKind, Phase};
use spur_engine::run::replay::{self, Position};
use spur_engine::run::run_error::ErrorClass;
use spur_engine::run::runs_list;
use spur_engine::run::{Outcome, RunError, RunId, StopReason};

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
        assert_eq!(content.format, JournalFormat::Unversioned, "{}", self.name);
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

/// Paused, interrupted (with an ambiguous action) or finished: an older spur's run is not
/// resumed, nothing runs and its journal stays as it was.
#[test]
fn no_run_of_an_older_spur_is_resumed() {
    for legacy in [PAUSED, INTERRUPTED, DONE, INITIAL_GATE] {
        let (project, checked) = legacy.project();
        let path = project.journal_path(legacy.run_id);
        let before = std::fs::read(&path).unwrap();
        match project.resume(&checked, legacy.run_id) {
            Err(e @ RunError::OlderJournal { .. }) => {
                assert_eq!(e.class(), ErrorClass::CannotStart, "{}", legacy.name);
                let text = e.to_string();
                assert!(text.contains("older spur"), "{}: {text}", legacy.name);
                assert!(text.contains(legacy.run_id), "{}: {text}", legacy.name);
            }
            other => panic!("{}: expected OlderJournal, got {other:?}", legacy.name),
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{}", legacy.name);
        assert!(
            !project.root().join("trail.txt").exists(),
            "{}",
            legacy.name
        );
        let recorded = spur_engine::run::recorded_pipeline(
            &project.state_dir(),
            &RunId::parse(legacy.run_id).unwrap(),
        );
        assert!(
            matches!(recorded, Err(RunError::OlderJournal { .. })),
            "{}: {recorded:?}",
            legacy.name
        );
    }
}

/// `spur runs` and `spur trace` still show an older spur's runs.
#[test]
fn runs_and_trace_still_show_an_older_spurs_runs() {
    for (legacy, outcome) in [
        (PAUSED, "paused"),
        (INTERRUPTED, "interrupted"),
        (DONE, "done"),
        (INITIAL_GATE, "failed"),
    ] {
        let (project, _checked) = legacy.project();
        let runs = runs_list::list_runs(&project.state_dir());
        assert_eq!(runs.len(), 1, "{}", legacy.name);
        assert_eq!(runs[0].run_id, legacy.run_id);
        assert_eq!(runs[0].outcome, outcome, "{}", legacy.name);
        let id = RunId::parse(legacy.run_id).unwrap();
        let records = runs_list::trace(&project.state_dir(), &id).unwrap();
        let lines = std::fs::read_to_string(legacy.journal()).unwrap();
        assert_eq!(records.len(), lines.lines().count(), "{}", legacy.name);
    }
}
