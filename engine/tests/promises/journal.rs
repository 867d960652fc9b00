//! The journal (ARCHITECTURE.md, *Durability*): a crash can cut the journal at any byte. Whatever the cut,
//! resuming never invents, drops or repeats a committed transition: the committed lines
//! stay as they were, and the resumed run's transitions are exactly those of the
//! uninterrupted run (routing is deterministic). A cut before `run-started` is complete
//! cannot be resumed; a journal whose `run-finished` survived is already finished. A cut
//! journal that is then edited (a byte of a committed line flipped) is refused, whichever
//! byte: every line carries the hash of the one before it and of itself.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;
use spur_engine::run::RunError;
use spur_engine::wbs::Wbs;

use crate::non_bypass::{artifact_case, spec};
use crate::property::property;
use crate::run_harness::Project;

/// Runs searched by default; each is cut at [`CUTS`] offsets and resumed from each.
const CASES: u32 = 100;
const CUTS: usize = 6;

/// The complete records of a journal prefix (a final line without `\n` is torn).
fn complete_records(bytes: &[u8]) -> Vec<Value> {
    let complete = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&[][..], |i| &bytes[..=i]);
    complete
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).expect("a complete journal line is JSON"))
        .collect()
}

fn committed_len(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// `(transition index, from, to, iteration)` of every transition record.
fn transitions(records: &[Value]) -> Vec<(u64, String, String, u64)> {
    records
        .iter()
        .filter(|r| r["event"] == "transition")
        .map(|r| {
            (
                r["transition"].as_u64().unwrap_or(u64::MAX),
                r["from"].as_str().unwrap_or_default().to_owned(),
                r["to"].as_str().unwrap_or_default().to_owned(),
                r["iteration"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

fn has_event(records: &[Value], name: &str) -> bool {
    records.iter().any(|r| r["event"] == name)
}

#[test]
fn a_journal_cut_at_any_byte_resumes_without_inventing_dropping_or_repeating_a_transition() {
    let resumes = std::sync::atomic::AtomicU32::new(0);
    property(
        "journal cut at any byte + resume (runs, each resumed from 6 cuts, each cut also edited)",
        CASES,
        (
            spec(false, true),
            artifact_case(),
            proptest::collection::vec(any::<Index>(), CUTS - 1),
            any::<Index>(),
            proptest::collection::vec((any::<Index>(), 1u8..=255), CUTS),
        ),
        |(spec, artifact, cuts, after_transition, flips)| {
            let project = Project::new();
            let checked = project
                .checked(&spec.yaml())
                .map_err(|e| TestCaseError::fail(format!("generated pipeline refused: {e}")))?;
            if let Some(text) = artifact.text() {
                let path = project.state_dir().verdict_path(&Wbs::parse("T1").unwrap());
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
            }
            let vars = [format!("flag={}", if spec.flag { "1" } else { "0" })];
            let first = project
                .run(&checked, &vars, None)
                .map_err(|e| TestCaseError::fail(format!("run error: {e:?}")))?;
            let path = project.journal_path(&first.run_id);
            let original = std::fs::read(&path).unwrap();
            let full = transitions(&complete_records(&original));

            // Random offsets, plus the end of a line right after a committed transition.
            let mut offsets: Vec<usize> =
                cuts.iter().map(|i| i.index(original.len() + 1)).collect();
            let line_ends: Vec<usize> = original
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1)
                .filter(|end| {
                    let records = complete_records(&original[..*end]);
                    records.last().is_some_and(|r| r["event"] == "transition")
                })
                .collect();
            if !line_ends.is_empty() {
                offsets.push(line_ends[after_transition.index(line_ends.len())]);
            }

            for (cut, (at, mask)) in offsets.into_iter().zip(flips) {
                let prefix = &original[..cut];
                let committed = complete_records(prefix);
                let kept = committed_len(prefix);
                // The last committed newline is left alone: flipping it makes the last line
                // torn, which is a shorter cut, not an edit.
                if kept > 1 {
                    let mut edited = prefix.to_vec();
                    let byte = at.index(kept - 1);
                    edited[byte] ^= mask;
                    std::fs::write(&path, &edited).unwrap();
                    let result = project.resume(&checked, &first.run_id);
                    resumes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    prop_assert!(
                        matches!(
                            result,
                            Err(RunError::Journal(_)
                                | RunError::DoesNotFit(_)
                                | RunError::OlderJournal { .. })
                        ),
                        "cut at {cut}, byte {byte} ^ {mask:#04x}: not refused: {result:?}"
                    );
                    prop_assert_eq!(
                        std::fs::read(&path).unwrap(),
                        edited,
                        "a refused journal is left as it was"
                    );
                }
                std::fs::write(&path, prefix).unwrap();
                let result = project.resume(&checked, &first.run_id);
                resumes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let after = std::fs::read(&path).unwrap();
                // Committed lines are never rewritten.
                prop_assert_eq!(&after[..kept], &prefix[..kept], "cut at {}", cut);
                match result {
                    Ok(resumed) => {
                        prop_assert!(
                            has_event(&committed, "run-started")
                                && !has_event(&committed, "run-finished"),
                            "cut at {cut}: resumed a journal that should have been refused"
                        );
                        let now = transitions(&complete_records(&after));
                        prop_assert_eq!(&now, &full, "cut at {}: transitions differ", cut);
                        prop_assert_eq!(resumed.outcome, first.outcome, "cut at {}", cut);
                        prop_assert_eq!(&resumed.state, &first.state, "cut at {}", cut);
                        prop_assert_eq!(resumed.reason, first.reason, "cut at {}", cut);
                    }
                    Err(RunError::AlreadyFinished { .. }) => {
                        prop_assert!(has_event(&committed, "run-finished"), "cut at {}", cut);
                        prop_assert_eq!(&after[..], prefix);
                    }
                    Err(RunError::Journal(_)) => {
                        prop_assert!(
                            !has_event(&committed, "run-started"),
                            "cut at {cut}: a journal with its run-started was refused"
                        );
                        prop_assert!(transitions(&complete_records(&after)).is_empty());
                    }
                    Err(other) => {
                        return Err(TestCaseError::fail(format!(
                            "cut at {cut}: unexpected error {other:?}"
                        )))
                    }
                }
            }
            Ok(())
        },
    );
    eprintln!(
        "  resumed {} times from cut journals",
        resumes.load(std::sync::atomic::Ordering::Relaxed)
    );
}

/// `spur retry` reads the journal as `spur continue` does: a failed run's journal with any
/// one byte of any line edited is refused, whichever byte, and left as it was; the journal
/// as written is retried, and the retry's way to `done` is the done gate's (no verdict:
/// denied).
#[test]
fn a_failed_runs_journal_edited_at_any_byte_refuses_its_retry() {
    let project = Project::new();
    let checked = project
        .checked(
            "name: r\ninitialState: work\nterminalStates: [done]\nvars: {wbs: \"T1\"}\nstates:\n  - id: work\n    onEnter: [{kind: shell, options: {command: 'exit 1'}}]\n  - {id: done}\ntransitions: [{from: work, to: done}]\n",
        )
        .expect("the pipeline checks");
    let first = project.run(&checked, &[], None).expect("the run ends");
    assert_eq!(first.outcome, spur_engine::run::Outcome::Failed);
    let path = project.journal_path(&first.run_id);
    let original = std::fs::read(&path).unwrap();
    let last_newline = original.len() - 1;
    for byte in 0..last_newline {
        for mask in [0x01u8, 0x20] {
            let mut edited = original.clone();
            edited[byte] ^= mask;
            if edited[byte] == b'\n' || original[byte] == b'\n' {
                // Splitting or joining lines is a cut or a corrupt line: also refused, but
                // not what this loop is about.
                continue;
            }
            std::fs::write(&path, &edited).unwrap();
            let result = project.retry(&checked, &first.run_id);
            assert!(
                matches!(
                    result,
                    Err(RunError::Journal(_)
                        | RunError::DoesNotFit(_)
                        | RunError::OlderJournal { .. })
                ),
                "byte {byte} ^ {mask:#04x}: not refused: {result:?}"
            );
            assert_eq!(
                std::fs::read(&path).unwrap(),
                edited,
                "a refused journal is left as it was"
            );
        }
    }
    std::fs::write(&path, &original).unwrap();
    let retried = project
        .retry(&checked, &first.run_id)
        .expect("the retry runs");
    // `work` fails again (nothing was fixed): the retry ended failed at work, journaled.
    assert_eq!(retried.outcome, spur_engine::run::Outcome::Failed);
    assert_eq!(retried.state, "work");
    let records = complete_records(&std::fs::read(&path).unwrap());
    assert_eq!(
        records.iter().filter(|r| r["event"] == "retried").count(),
        1
    );
    assert_eq!(
        records
            .iter()
            .filter(|r| r["event"] == "run-finished")
            .count(),
        2
    );
}
