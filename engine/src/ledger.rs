//! The verdict ledger: `.spur/run/<wbs>-verdicts.jsonl`, append-only, one line per
//! criterion per run. A verdict that differs from the previous line for the same criterion
//! is a *flip*, and a flip forces confidence low: a criterion that changes its mind between
//! runs is not settled, whichever way it went last.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file;

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub run: String,
    /// The task (wbs), or `null` for a project-wide verify.
    pub task: Option<String>,
    pub criterion: String,
    pub dimension: String,
    /// `PASS`, `WARN`, `FAIL` or `ERROR`.
    pub verdict: String,
    /// `high` or `low`.
    pub confidence: String,
    pub reprobed: bool,
    pub flip: bool,
    /// Where the evidence behind this verdict is.
    pub evidence: String,
    /// RFC 3339 UTC.
    pub at: String,
}

/// A verdict about to be recorded: the ledger decides `flip` (and lowers `confidence`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVerdict {
    pub criterion: String,
    pub dimension: String,
    pub verdict: String,
    pub confidence: String,
    pub reprobed: bool,
    pub evidence: String,
}

/// What reading a ledger found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerContents {
    pub entries: Vec<LedgerEntry>,
    /// Lines that were not ledger entries (a torn last line after a crash, a hand edit):
    /// skipped, never misread, and counted so `history` can say so.
    pub unreadable_lines: usize,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LedgerError {
    #[error("cannot read the verdict ledger {}: {source}", path.display())]
    #[diagnostic(code(spur::ledger::unreadable))]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot append to the verdict ledger {}: {source}", path.display())]
    #[diagnostic(
        code(spur::ledger::unwritable),
        help("check that the state directory is writable; the ledger was not changed")
    )]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// An append-only verdict ledger file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every readable entry, oldest first; a missing ledger is empty.
    pub fn read(&self) -> Result<LedgerContents, LedgerError> {
        Ok(parse(&self.read_text()?))
    }

    fn read_text(&self) -> Result<String, LedgerError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            Err(source) => Err(LedgerError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// Append one line per verdict (one write, one fsync), marking flips against the last
    /// recorded verdict of each criterion. Returns the lines as written.
    pub fn record(
        &self,
        run: &str,
        task: Option<&str>,
        at: &str,
        verdicts: Vec<NewVerdict>,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        // Serialise concurrent verify runs of one task: read the last verdicts and append
        // under one lock, so no flip is judged against a stale ledger.
        let _lock = crate::file_lock::FileLock::exclusive(&self.path).map_err(|source| {
            LedgerError::Write {
                path: self.path.clone(),
                source,
            }
        })?;
        let text = self.read_text()?;
        let previous_entries = parse(&text).entries;
        let previous = last_verdicts(&previous_entries);
        let entries: Vec<LedgerEntry> = verdicts
            .into_iter()
            .map(|v| {
                let flip = previous
                    .get(v.criterion.as_str())
                    .is_some_and(|last| *last != v.verdict);
                LedgerEntry {
                    run: run.to_owned(),
                    task: task.map(str::to_owned),
                    confidence: if flip { "low".to_owned() } else { v.confidence },
                    criterion: v.criterion,
                    dimension: v.dimension,
                    verdict: v.verdict,
                    reprobed: v.reprobed,
                    flip,
                    evidence: v.evidence,
                    at: at.to_owned(),
                }
            })
            .collect();
        if entries.is_empty() {
            return Ok(entries);
        }
        // A torn last line (a crash mid-append) stays alone on its line.
        let separator = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let lines = entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        atomic_file::append_line_durable(&self.path, &format!("{separator}{lines}")).map_err(
            |source| LedgerError::Write {
                path: self.path.clone(),
                source,
            },
        )?;
        Ok(entries)
    }
}

fn parse(text: &str) -> LedgerContents {
    let mut contents = LedgerContents::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(entry) => contents.entries.push(entry),
            Err(_) => contents.unreadable_lines += 1,
        }
    }
    contents
}

/// The last verdict recorded for each criterion.
pub fn last_verdicts(entries: &[LedgerEntry]) -> HashMap<&str, &str> {
    entries
        .iter()
        .map(|e| (e.criterion.as_str(), e.verdict.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(criterion: &str, verdict: &str) -> NewVerdict {
        NewVerdict {
            criterion: criterion.into(),
            dimension: "build".into(),
            verdict: verdict.into(),
            confidence: "high".into(),
            reprobed: false,
            evidence: "e.md".into(),
        }
    }

    #[test]
    fn a_changed_verdict_is_a_flip_with_low_confidence() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("t-verdicts.jsonl"));
        let first = ledger
            .record(
                "r1",
                Some("t"),
                "a",
                vec![verdict("gate-a", "PASS"), verdict("gate-b", "PASS")],
            )
            .unwrap();
        assert!(first.iter().all(|e| !e.flip && e.confidence == "high"));
        let second = ledger
            .record(
                "r2",
                Some("t"),
                "b",
                vec![verdict("gate-a", "FAIL"), verdict("gate-b", "PASS")],
            )
            .unwrap();
        assert!(second[0].flip);
        assert_eq!(second[0].confidence, "low");
        assert!(!second[1].flip);
        assert_eq!(second[1].confidence, "high");
        let all = ledger.read().unwrap();
        assert_eq!(all.entries.len(), 4);
        assert_eq!(all.entries[2], second[0]);
    }

    #[test]
    fn flips_compare_with_the_latest_line_of_the_criterion() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("l.jsonl"));
        for (run, v) in [("1", "FAIL"), ("2", "PASS"), ("3", "PASS")] {
            ledger
                .record(run, None, "t", vec![verdict("c", v)])
                .unwrap();
        }
        let flips: Vec<bool> = ledger
            .read()
            .unwrap()
            .entries
            .iter()
            .map(|e| e.flip)
            .collect();
        assert_eq!(flips, [false, true, false]);
    }

    #[test]
    fn a_torn_line_is_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        let ledger = Ledger::at(&path);
        ledger
            .record("1", None, "t", vec![verdict("c", "PASS")])
            .unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"run\":\"2\",\"crit");
        std::fs::write(&path, text).unwrap();
        let contents = ledger.read().unwrap();
        assert_eq!((contents.entries.len(), contents.unreadable_lines), (1, 1));
        ledger
            .record("3", None, "t", vec![verdict("c", "PASS")])
            .unwrap();
        let contents = ledger.read().unwrap();
        assert_eq!((contents.entries.len(), contents.unreadable_lines), (2, 1));
    }
}
