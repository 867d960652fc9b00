//! The verdict ledger: `.spur/run/<wbs>-verdicts.jsonl`, append-only, one line per
//! criterion per run. A verdict that differs from the previous line for the same criterion
//! is a *flip*, and a flip forces confidence low: a criterion that changes its mind between
//! runs is not settled, whichever way it went last.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file;
use crate::store::bounded_read::{read_string, ReadError};

/// The most of a ledger `history` reads (about a hundred thousand runs of a task's gates);
/// recording reads only its end.
pub(crate) const MAX_LEDGER_BYTES: u64 = 64 * 1024 * 1024;

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// The verify run that recorded it.
    pub run: String,
    /// The task (wbs), or `null` for a project-wide verify.
    pub(crate) task: Option<String>,
    /// The criterion the verdict is about (a gate's check name).
    pub criterion: String,
    pub(crate) dimension: String,
    /// `PASS`, `WARN`, `FAIL` or `ERROR`.
    pub verdict: String,
    /// `high` or `low`.
    pub confidence: String,
    /// The gate failed once and was run a second time before its verdict was final.
    pub reprobed: bool,
    /// The verdict differs from the previous one recorded for the same criterion.
    pub flip: bool,
    /// Where the evidence behind this verdict is.
    pub(crate) evidence: String,
    /// RFC 3339 UTC.
    pub at: String,
}

/// A verdict about to be recorded: the ledger decides `flip` (and lowers `confidence`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewVerdict {
    pub(crate) criterion: String,
    pub(crate) dimension: String,
    pub(crate) verdict: String,
    pub(crate) confidence: String,
    pub(crate) reprobed: bool,
    pub(crate) evidence: String,
}

/// What reading a ledger found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerContents {
    /// The entries, oldest first.
    pub entries: Vec<LedgerEntry>,
    /// Lines that were not ledger entries (a torn last line after a crash, a hand edit):
    /// skipped, never misread, and counted so `history` can say so.
    pub unreadable_lines: usize,
}

/// Why the ledger could not be read or appended to.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// Reading the ledger failed.
    #[error("cannot read the verdict ledger {}: {source}", path.display())]
    Read {
        /// The ledger file.
        path: PathBuf,
        /// The read error.
        #[source]
        source: io::Error,
    },
    /// Appending to the ledger failed.
    #[error("cannot append to the verdict ledger {}: {source}", path.display())]
    Write {
        /// The ledger file.
        path: PathBuf,
        /// The write error.
        #[source]
        source: io::Error,
    },
}

coded_diagnostic! {
    LedgerError {
        Self::Read { .. } => Code::LedgerUnreadable;
        Self::Write { .. } => Code::LedgerUnwritable,
            help("check that the state directory is writable; the ledger was not changed");
    }
}

/// An append-only verdict ledger file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    /// The ledger at `path` (nothing is read until asked).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The ledger's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every readable entry, oldest first; a missing ledger is empty.
    pub fn read(&self) -> Result<LedgerContents, LedgerError> {
        Ok(parse(&self.read_text()?))
    }

    fn read_text(&self) -> Result<String, LedgerError> {
        match read_string(&self.path, MAX_LEDGER_BYTES) {
            Ok(text) => Ok(text),
            Err(e) if e.is_missing() => Ok(String::new()),
            Err(e) => Err(LedgerError::Read {
                path: self.path.clone(),
                source: e.into(),
            }),
        }
    }

    /// Append one line per verdict (one write, one fsync), marking flips against the last
    /// recorded verdict of each criterion. Returns the lines as written.
    pub(crate) fn record(
        &self,
        run: &str,
        task: Option<&str>,
        at: &str,
        verdicts: Vec<NewVerdict>,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        // Serialise concurrent verify runs of one task: read the last verdicts and append
        // under one lock, so no flip is judged against a stale ledger.
        let mut lock =
            crate::store::file_lock::FileLock::exclusive(&self.path).map_err(|source| {
                LedgerError::Write {
                    path: self.path.clone(),
                    source,
                }
            })?;
        let wanted: HashSet<&str> = verdicts.iter().map(|v| v.criterion.as_str()).collect();
        let tail = read_back(lock.file(), &wanted).map_err(|source| LedgerError::Read {
            path: self.path.clone(),
            source,
        })?;
        let previous = tail.last_verdicts;
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
        let separator = if tail.ends_a_line { "" } else { "\n" };
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

/// What the end of the ledger says before a run appends to it.
struct Tail {
    /// The last verdict of each wanted criterion that has one.
    last_verdicts: HashMap<String, String>,
    /// The ledger is empty or ends with a newline (no torn last line to step over).
    ends_a_line: bool,
}

/// Bytes read at a time from the end of the ledger.
const READ_BACK_CHUNK: u64 = 64 * 1024;

/// The last verdict of each of `wanted`, reading the ledger from its end back only as far
/// as needed: the ledger grows by a line per gate per run, and a run usually finds every
/// criterion among the previous run's lines — so recording costs the same after a
/// thousand runs as after one. Lines that are not entries are skipped, as [`parse`] does.
fn read_back(file: &std::fs::File, wanted: &HashSet<&str>) -> io::Result<Tail> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    // The cap `read` holds to: a line read back is carried whole, so without it one long
    // line a step wrote would be held in memory however large.
    if len > MAX_LEDGER_BYTES {
        return Err(ReadError::TooLarge {
            cap: MAX_LEDGER_BYTES,
            size: Some(len),
        }
        .into());
    }
    let mut last_verdicts = HashMap::new();
    let mut ends_a_line = true;
    let mut end = len;
    // The end of a line whose start lies in the part not read yet.
    let mut carry: Vec<u8> = Vec::new();
    while end > 0 && last_verdicts.len() < wanted.len() {
        let start = end.saturating_sub(READ_BACK_CHUNK);
        let mut buf = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
        file.read_exact_at(&mut buf, start)?;
        if end == len {
            ends_a_line = buf.last() == Some(&b'\n');
        }
        buf.extend_from_slice(&carry);
        // Before the first newline of a chunk is part of a line that started earlier.
        let first_whole = match (start, buf.iter().position(|b| *b == b'\n')) {
            (0, _) => 0,
            (_, Some(newline)) => newline + 1,
            (_, None) => buf.len(),
        };
        let (partial, whole) = buf.split_at(first_whole);
        for line in whole.rsplit(|b| *b == b'\n') {
            if last_verdicts.len() == wanted.len() {
                break;
            }
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            if let Ok(entry) = serde_json::from_str::<LedgerEntry>(line) {
                if wanted.contains(entry.criterion.as_str()) {
                    last_verdicts
                        .entry(entry.criterion)
                        .or_insert(entry.verdict);
                }
            }
        }
        carry = partial.strip_suffix(b"\n").unwrap_or(partial).to_vec();
        end = start;
    }
    Ok(Tail {
        last_verdicts,
        ends_a_line,
    })
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
    fn a_criterion_last_seen_many_runs_ago_still_flips() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("l.jsonl"));
        ledger
            .record("0", None, "t", vec![verdict("rare", "PASS")])
            .unwrap();
        for run in 1..5 {
            ledger
                .record(&run.to_string(), None, "t", vec![verdict("often", "PASS")])
                .unwrap();
        }
        let entries = ledger
            .record(
                "5",
                None,
                "t",
                vec![verdict("often", "PASS"), verdict("rare", "FAIL")],
            )
            .unwrap();
        assert!(!entries[0].flip);
        assert!(entries[1].flip, "{entries:?}");
    }

    #[test]
    fn a_ledger_over_the_cap_is_refused_not_carried_into_memory() {
        // One line of zeros as long as the cap allows and one byte more (a sparse file).
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("l.jsonl"));
        std::fs::File::create(ledger.path())
            .unwrap()
            .set_len(MAX_LEDGER_BYTES + 1)
            .unwrap();
        let err = ledger
            .record("1", None, "t", vec![verdict("c", "PASS")])
            .unwrap_err();
        assert!(err.to_string().contains("l.jsonl"), "{err}");
        assert_eq!(
            std::fs::metadata(ledger.path()).unwrap().len(),
            MAX_LEDGER_BYTES + 1,
            "nothing appended"
        );
    }

    #[test]
    fn flips_are_found_across_many_read_back_chunks() {
        // Enough runs that the ledger spans several chunks read from its end, with lines
        // crossing chunk boundaries.
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(dir.path().join("l.jsonl"));
        ledger
            .record("0", None, "t", vec![verdict("rare", "FAIL")])
            .unwrap();
        let busy: Vec<String> = (0..50).map(|i| format!("criterion-{i}")).collect();
        let mut run = 1;
        while std::fs::metadata(ledger.path()).unwrap().len() < 3 * READ_BACK_CHUNK {
            let verdicts = busy.iter().map(|c| verdict(c, "PASS")).collect();
            ledger
                .record(&run.to_string(), None, "t", verdicts)
                .unwrap();
            run += 1;
        }
        let mut verdicts: Vec<_> = busy.iter().map(|c| verdict(c, "PASS")).collect();
        verdicts.push(verdict("rare", "PASS"));
        verdicts.push(verdict("new", "PASS"));
        let entries = ledger.record("last", None, "t", verdicts).unwrap();
        assert!(entries[..50].iter().all(|e| !e.flip));
        assert!(entries[50].flip, "rare was FAIL in the first run");
        assert!(!entries[51].flip, "never seen before: nothing to flip from");
        let contents = ledger.read().unwrap();
        assert_eq!(contents.unreadable_lines, 0);
        assert_eq!(contents.entries.len(), 1 + 50 * (run - 1) + 52);
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
