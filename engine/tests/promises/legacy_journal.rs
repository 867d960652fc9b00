//! Journals of older spurs (captured from the `spur` binary of their time, with their
//! pipelines, in `fixtures/legacy_journal/`): those before the journal's format 1 (no
//! format version, no hash chain) and those of format 1 (chained by plain sha256, before
//! keyed chains: the `*-format1.jsonl` fixtures, written by spur at d15ad19). They still
//! read and replay, so `spur trace` and `spur runs` show them; but nothing shows they were
//! not edited since (a sha256 chain can be recomputed by whoever edits the file), so none
//! of them is resumed, whatever its state: the run must be started again.

use std::path::{Path, PathBuf};

use spur_engine::done_gate::GateDecision;
use spur_engine::pipeline::TerminalReason;
use spur_engine::run::journal::{self, JournalFormat, PauseKind, Phase};
use spur_engine::run::replay::{self, Position};
use spur_engine::run::run_error::ErrorClass;
use spur_engine::run::runs_list;
use spur_engine::run::{Outcome, RunError, RunId, StopReason};
use spur_engine::store::chain_key::KeyAtHand;

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
/// Format 1 (sha256-chained): the forced done of `done.yaml`.
const DONE_FORMAT_1: Legacy = Legacy {
    name: "done-format1",
    run_id: "20261202T072359Z-bf8cb6",
    pipeline: include_str!("fixtures/legacy_journal/done.yaml"),
};
/// Format 1: `paused.yaml` answered yes, left paused at `hold`.
const PAUSED_FORMAT_1: Legacy = Legacy {
    name: "paused-format1",
    run_id: "20261202T072359Z-dc6c4c",
    pipeline: include_str!("fixtures/legacy_journal/paused.yaml"),
};

/// No key is needed to read what was never sealed.
fn no_key() -> KeyAtHand {
    KeyAtHand::Missing {
        file: "(none)".into(),
    }
}

impl Legacy {
    fn journal(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/promises/fixtures/legacy_journal")
            .join(format!("{}.jsonl", self.name))
    }

    fn format(&self) -> JournalFormat {
        if self.name.ends_with("format1") {
            JournalFormat::Unkeyed
        } else {
            JournalFormat::Unversioned
        }
    }

    fn position(&self) -> Position {
        let content = journal::read(&self.journal(), &no_key()).expect("a legacy journal reads");
        assert!(!content.torn_tail, "{}", self.name);
        assert_eq!(content.format, self.format(), "{}", self.name);
        assert_eq!(content.unverifiable, None, "{}", self.name);
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
        let content = journal::read(&legacy.journal(), &no_key()).unwrap();
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

    let done = DONE_FORMAT_1.position();
    let finished = done.finished.as_ref().expect("finished");
    assert_eq!(finished.outcome, Outcome::Done);
    assert_eq!(done.force_done_reason.as_deref(), Some("legacy fixture"));
    assert_eq!(done.vars.get("v").map(String::as_str), Some("seven"));

    let paused = PAUSED_FORMAT_1.position();
    assert!(paused.finished.is_none());
    assert_eq!(paused.state.as_deref(), Some("hold"));
}

/// A format-1 journal is checked as it always was: an edit that does not recompute the
/// sha256 chain is still named.
#[test]
fn a_format_one_journal_is_still_chain_checked() {
    let text = std::fs::read_to_string(PAUSED_FORMAT_1.journal()).unwrap();
    let edited = text.replacen(r#""state":"hold""#, r#""state":"done""#, 1);
    assert_ne!(edited, text);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    std::fs::write(&path, edited).unwrap();
    assert!(matches!(
        journal::read(&path, &no_key()),
        Err(journal::JournalError::ChainBroken { .. })
    ));
}

/// Paused, interrupted (with an ambiguous action) or finished: an older spur's run is not
/// resumed, nothing runs and its journal stays as it was.
#[test]
fn no_run_of_an_older_spur_is_resumed() {
    for legacy in [
        PAUSED,
        INTERRUPTED,
        DONE,
        INITIAL_GATE,
        PAUSED_FORMAT_1,
        DONE_FORMAT_1,
    ] {
        let (project, checked) = legacy.project();
        let path = project.journal_path(legacy.run_id);
        let before = std::fs::read(&path).unwrap();
        match project.resume(&checked, legacy.run_id) {
            Err(e @ RunError::OlderJournal { .. })
                if legacy.format() == JournalFormat::Unversioned =>
            {
                assert_eq!(e.class(), ErrorClass::CannotStart, "{}", legacy.name);
                let text = e.to_string();
                assert!(text.contains("older spur"), "{}: {text}", legacy.name);
                assert!(text.contains(legacy.run_id), "{}: {text}", legacy.name);
            }
            Err(e @ RunError::UnkeyedJournal { .. })
                if legacy.format() == JournalFormat::Unkeyed =>
            {
                assert_eq!(e.class(), ErrorClass::CannotStart, "{}", legacy.name);
                let text = e.to_string();
                assert!(
                    text.contains("not sealed with a key"),
                    "{}: {text}",
                    legacy.name
                );
                assert!(text.contains(legacy.run_id), "{}: {text}", legacy.name);
            }
            other => panic!(
                "{}: expected an older journal refused, got {other:?}",
                legacy.name
            ),
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
            matches!(
                recorded,
                Err(RunError::OlderJournal { .. } | RunError::UnkeyedJournal { .. })
            ),
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
        (PAUSED_FORMAT_1, "paused"),
        (DONE_FORMAT_1, "done"),
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
