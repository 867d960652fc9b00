//! The task ledger (`<state>/ledger/tasks/<wbs>.jsonl`): the one record of a task's status.
//! Append-only JSON lines, one per status change, each carrying the sha256 of the line
//! before it, so an edited, removed, inserted or reordered record breaks the chain.
//!
//! A record that says `to: "done"` is made only from the done gate's
//! [`Done`](crate::done_gate::Done) token (through [`StatusChange::Done`]). Appends happen
//! under the task's [`DataLock`] and are fsync'd before they return. A broken chain fails
//! closed: it is never read as a status, and nothing is appended to it.

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::{AllowReason, DoneVia, GateDecision};
use crate::store::atomic_file::append_line_durable;
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::data_lock::DataLock;
use crate::store::digest::sha256_hex;
use crate::store::format_version::{line_version, unknown_version, LineVersion};
use crate::store::state_dir::StateDir;
use crate::store::task_status::{ChangeContext, Status, StatusChange};
use crate::wbs::Wbs;

/// The format version this spur writes and reads.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// The most of a ledger that is read: a record is about 300 bytes.
pub(crate) const MAX_LEDGER_BYTES: u64 = 16 * 1024 * 1024;

/// One status change, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LedgerRecord {
    /// The format version ([`FORMAT_VERSION`]).
    pub(crate) v: u64,
    /// 0 for the first record, then gap-free.
    pub(crate) seq: u64,
    /// The task.
    pub(crate) wbs: String,
    /// The status before the change (`todo` for the first record).
    pub(crate) from: Status,
    /// The status after it.
    pub(crate) to: Status,
    /// When, RFC 3339 UTC.
    pub(crate) at: String,
    /// Who (see `audit::current_user`).
    pub(crate) user: String,
    /// The run that made the change, if a run did.
    pub(crate) run: Option<String>,
    /// The done gate's decision, for a change to done; `None` otherwise.
    pub(crate) gate: Option<GateRecord>,
    /// The sha256 of the verdict artifact the gate read (`None` when there was none).
    pub(crate) verdict_sha256: Option<String>,
    /// The hash of the audit record of a forced override.
    pub(crate) audit_hash: Option<String>,
    /// Lowercase hex sha256 of the previous line's bytes; `""` for the first record.
    pub(crate) prev: String,
}

/// How the gate certified a `done` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct GateRecord {
    /// Always `allow`: only an allow makes a done record.
    pub decision: GateDecision,
    /// `pass` or `forced`.
    pub(crate) reason: AllowReason,
    /// The `--reason` of a forced override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) force_reason: Option<String>,
}

/// The ledger as read: the records of its intact prefix and, if the chain breaks, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRead {
    /// The ledger file.
    pub(crate) path: PathBuf,
    /// The records before the first break (all of them when intact).
    pub(crate) records: Vec<LedgerRecord>,
    /// The first record that does not fit the chain.
    pub(crate) broken: Option<LedgerBreak>,
    /// A last line without its newline (a torn append) was ignored.
    pub(crate) torn_tail: bool,
    /// Bytes of the complete lines (where the next record goes).
    complete_len: u64,
    /// sha256 of the last complete line; `""` when there is none.
    last_hash: String,
}

/// The first record of a ledger that breaks its chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LedgerBreak {
    /// The seq the record should have (its line number less one).
    pub(crate) seq: u64,
    /// What is wrong with it.
    pub(crate) problem: String,
    /// The record's format version when it is one this spur does not read.
    #[serde(skip)]
    pub(crate) unknown_version: Option<u64>,
}

impl LedgerRead {
    /// The status the ledger records: its last record's `to`, `todo` with no records. Of
    /// the intact prefix: callers that act on it check [`LedgerRead::intact`] first.
    pub fn status(&self) -> Status {
        self.records
            .last()
            .map_or_else(Status::initial, |r| r.to.clone())
    }

    /// The records, or the error that the chain is broken.
    pub fn intact(&self) -> Result<&[LedgerRecord], LedgerError> {
        match &self.broken {
            None => Ok(&self.records),
            Some(broken) => Err(match broken.unknown_version {
                Some(found) => LedgerError::UnknownVersion {
                    path: self.path.display().to_string(),
                    seq: broken.seq,
                    problem: broken.problem.clone(),
                    found,
                },
                None => LedgerError::Broken {
                    path: self.path.display().to_string(),
                    seq: broken.seq,
                    problem: broken.problem.clone(),
                },
            }),
        }
    }

    /// The hash the next record's `prev` must carry (hex sha256 of the last line).
    pub(crate) fn last_hash(&self) -> &str {
        &self.last_hash
    }
}

/// Why a ledger could not be read, trusted or appended to.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The file could not be read.
    #[error("could not read the task ledger {path}: {source}")]
    Read {
        /// The ledger file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A record does not fit the chain.
    #[error("the task ledger {path} is broken at seq {seq}: {problem}")]
    Broken {
        /// The ledger file.
        path: String,
        /// The seq of the first record that does not fit.
        seq: u64,
        /// What is wrong with it.
        problem: String,
    },
    /// A record of a format this spur does not read.
    #[error("the task ledger {path} cannot be read at seq {seq}: {problem}")]
    UnknownVersion {
        /// The ledger file.
        path: String,
        /// The record's seq.
        seq: u64,
        /// The sentence naming both versions.
        problem: String,
        /// The record's version.
        found: u64,
    },
    /// The record could not be written.
    #[error("could not append to the task ledger {path}: {source}")]
    Write {
        /// The ledger file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

coded_diagnostic! {
    LedgerError {
        Self::Read { .. } => Code::TaskLedgerReadFailed;
        Self::Broken { .. } => Code::TaskLedgerBroken,
            help(
                "the ledger is the record of the task's status: spur neither reads a status from a \
                 broken one nor appends to it. Restore it from a copy (git) or investigate who \
                 edited it; `spur audit verify` lists every ledger's state"
            );
        Self::UnknownVersion { .. } => Code::TaskLedgerFormat,
            help("use the spur that wrote it (or a newer one)");
        Self::Write { .. } => Code::TaskLedgerWriteFailed,
            help("the status did not change; fix the state directory and retry");
    }
}

/// Read and check the ledger of `wbs`. A missing ledger has no records; only a file that
/// cannot be read at all is an error.
pub fn read(state_dir: &StateDir, wbs: &Wbs) -> Result<LedgerRead, LedgerError> {
    read_path(&state_dir.task_ledger_path(wbs), wbs)
}

fn read_path(path: &Path, wbs: &Wbs) -> Result<LedgerRead, LedgerError> {
    let bytes = match read_bounded(path, MAX_LEDGER_BYTES) {
        Ok(bytes) => bytes,
        Err(ReadError::Missing) => Vec::new(),
        Err(e) => {
            return Err(LedgerError::Read {
                path: path.display().to_string(),
                source: e.into(),
            })
        }
    };
    Ok(check_chain(path, wbs, &bytes))
}

/// Check every complete line; a last line without its newline is a torn append, ignored.
fn check_chain(path: &Path, wbs: &Wbs, bytes: &[u8]) -> LedgerRead {
    let complete_len = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let (complete, tail) = bytes.split_at(complete_len);
    let mut read = LedgerRead {
        path: path.to_path_buf(),
        records: Vec::new(),
        broken: None,
        torn_tail: !tail.is_empty(),
        complete_len: u64::try_from(complete_len).unwrap_or(u64::MAX),
        last_hash: String::new(),
    };
    let body = complete.strip_suffix(b"\n").unwrap_or(complete);
    if body.is_empty() && complete.is_empty() {
        return read;
    }
    for (seq, line) in (0u64..).zip(body.split(|b| *b == b'\n')) {
        let previous = read.records.last();
        match check_line(line, seq, wbs, &read.last_hash, previous) {
            Ok(record) => {
                read.records.push(record);
                read.last_hash = sha256_hex(line);
            }
            Err(broken) => {
                read.broken = Some(broken);
                break;
            }
        }
    }
    read
}

fn check_line(
    line: &[u8],
    seq: u64,
    wbs: &Wbs,
    prev: &str,
    previous: Option<&LedgerRecord>,
) -> Result<LedgerRecord, LedgerBreak> {
    let broken = |problem: String| LedgerBreak {
        seq,
        problem,
        unknown_version: None,
    };
    match line_version(line, FORMAT_VERSION) {
        Err(e) => return Err(broken(format!("the line is not a JSON object: {e}"))),
        Ok(LineVersion::Absent) => {
            return Err(broken("the record has no format version (v)".to_owned()))
        }
        Ok(LineVersion::Unknown(found)) => {
            return Err(LedgerBreak {
                seq,
                problem: unknown_version(found, FORMAT_VERSION),
                unknown_version: Some(found),
            })
        }
        Ok(LineVersion::Supported) => {}
    }
    let record: LedgerRecord = serde_json::from_slice(line)
        .map_err(|e| broken(format!("the line is not a task ledger record: {e}")))?;
    if record.seq != seq {
        return Err(broken(format!(
            "its seq is {}, the line's place says {seq}: a record was removed, inserted or reordered",
            record.seq
        )));
    }
    if record.prev != prev {
        return Err(broken(if seq == 0 {
            "the first record does not start the chain (its prev is not empty): records before it were removed".to_owned()
        } else {
            "its prev is not the sha256 of the line before it: a record was edited, removed, inserted or reordered".to_owned()
        }));
    }
    if record.wbs != wbs.as_str() {
        return Err(broken(format!(
            "it is a record of task {:?}, not {wbs}",
            record.wbs
        )));
    }
    let expected_from = previous.map_or_else(Status::initial, |p| p.to.clone());
    if record.from != expected_from {
        return Err(broken(format!(
            "it changes the status from {}, but the status was {expected_from}",
            record.from
        )));
    }
    consistent_gate(&record).map_err(broken)?;
    Ok(record)
}

/// A done record carries the gate's allow (and a forced one its audit hash); no other does.
fn consistent_gate(record: &LedgerRecord) -> Result<(), String> {
    match (&record.gate, record.to.is_done()) {
        (None, true) => Err("it says done without a done-gate decision".to_owned()),
        (Some(_), false) => Err(format!(
            "it carries a done-gate decision but changes the status to {}",
            record.to
        )),
        (Some(gate), true) if gate.decision != GateDecision::Allow => Err(format!(
            "it says done on a done-gate decision of {}",
            gate.decision
        )),
        (Some(gate), true)
            if (gate.reason == AllowReason::Forced) != record.audit_hash.is_some() =>
        {
            Err("a forced done record must name its audit record, and only a forced one".to_owned())
        }
        _ => Ok(()),
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Appended {
    /// The task already had that status: nothing was written.
    Unchanged(Vec<LedgerRecord>),
    /// The record was written; the ledger's records, it last.
    Written(Vec<LedgerRecord>),
}

impl Appended {
    /// The ledger's records after the append.
    pub(crate) fn records(&self) -> &[LedgerRecord] {
        match self {
            Appended::Unchanged(records) | Appended::Written(records) => records,
        }
    }
}

/// Append `change` to the ledger of the locked task, chained to its last record and
/// fsync'd. A change to the current status writes nothing. A broken or unreadable ledger is
/// an error and is left as it is; a torn last line (an append that never completed) is cut
/// off first, so the new record follows the last complete one.
pub(crate) fn append(
    lock: &DataLock,
    state_dir: &StateDir,
    change: StatusChange<'_>,
    context: &ChangeContext<'_>,
) -> Result<Appended, LedgerError> {
    let wbs = lock.wbs();
    let path = state_dir.task_ledger_path(wbs);
    let read = read_path(&path, wbs)?;
    let mut records = read.intact()?.to_vec();
    let from = read.status();
    let (to, gate, verdict_sha256, audit_hash) = match change {
        StatusChange::To(open) => (open.status().clone(), None, None, None),
        StatusChange::Done(done) => {
            let (reason, force_reason, audit_hash) = match done.via() {
                DoneVia::Pass => (AllowReason::Pass, None, None),
                DoneVia::Forced { reason, audit_hash } => (
                    AllowReason::Forced,
                    Some(reason.clone()),
                    Some(audit_hash.clone()),
                ),
            };
            let gate = GateRecord {
                decision: GateDecision::Allow,
                reason,
                force_reason,
            };
            (
                Status::done(done),
                Some(gate),
                done.verdict_sha256().map(str::to_owned),
                audit_hash,
            )
        }
    };
    if to == from {
        return Ok(Appended::Unchanged(records));
    }
    let record = LedgerRecord {
        v: FORMAT_VERSION,
        seq: u64::try_from(records.len()).unwrap_or(u64::MAX),
        wbs: wbs.to_string(),
        from,
        to,
        at: context.time.clone(),
        user: context.user.to_owned(),
        run: context.run_id.map(str::to_owned),
        gate,
        verdict_sha256,
        audit_hash,
        prev: read.last_hash().to_owned(),
    };
    let write_err = |source| LedgerError::Write {
        path: path.display().to_string(),
        source,
    };
    let line = serde_json::to_string(&record).map_err(|e| write_err(io::Error::other(e)))?;
    if read.torn_tail {
        cut_torn_tail(&path, read.complete_len).map_err(write_err)?;
    }
    append_line_durable(&path, &line).map_err(write_err)?;
    records.push(record);
    Ok(Appended::Written(records))
}

/// Drop the bytes after the last complete line.
fn cut_torn_tail(path: &Path, complete_len: u64) -> io::Result<()> {
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(complete_len)?;
    file.sync_all()
}

/// The tasks that have a ledger file, sorted (file names that are no valid wbs are skipped).
pub(crate) fn ledgered_tasks(state_dir: &StateDir) -> Vec<Wbs> {
    let Ok(entries) = std::fs::read_dir(state_dir.task_ledgers_dir()) else {
        return Vec::new();
    };
    let mut tasks: Vec<Wbs> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.to_str()?.strip_suffix(".jsonl")?.to_owned();
            Wbs::parse(&stem).ok()
        })
        .collect();
    tasks.sort();
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::task_status::Status;

    struct Fixture {
        _dir: tempfile::TempDir,
        state: StateDir,
        wbs: Wbs,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        Fixture {
            state: StateDir::at(dir.path().join(".spur")),
            _dir: dir,
            wbs: Wbs::parse("T1").unwrap(),
        }
    }

    fn ctx() -> ChangeContext<'static> {
        ChangeContext {
            user: "ada",
            run_id: None,
            time: "2026-12-01T10:00:00.000Z".into(),
        }
    }

    fn to(f: &Fixture, status: &str) -> Appended {
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        append(
            &lock,
            &f.state,
            StatusChange::To(Status::open(status).unwrap()),
            &ctx(),
        )
        .unwrap()
    }

    fn lines(f: &Fixture) -> Vec<String> {
        std::fs::read_to_string(f.state.task_ledger_path(&f.wbs))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn write_lines(f: &Fixture, lines: &[String]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(f.state.task_ledger_path(&f.wbs), text).unwrap();
    }

    fn broken(f: &Fixture) -> Option<LedgerBreak> {
        read(&f.state, &f.wbs).unwrap().broken
    }

    #[test]
    fn appends_chain_and_skip_no_changes() {
        let f = fixture();
        assert_eq!(read(&f.state, &f.wbs).unwrap().status(), Status::initial());
        to(&f, "in-progress");
        assert!(matches!(to(&f, "in-progress"), Appended::Unchanged(_)));
        to(&f, "review");
        let lines = lines(&f);
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            r#"{"v":1,"seq":0,"wbs":"T1","from":"todo","to":"in-progress","at":"2026-12-01T10:00:00.000Z","user":"ada","run":null,"gate":null,"verdictSha256":null,"auditHash":null,"prev":""}"#
        );
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.records[1].prev, sha256_hex(lines[0].as_bytes()));
        assert_eq!(ledger.records[1].from.as_str(), "in-progress");
        assert_eq!(ledger.status().as_str(), "review");
    }

    /// An edit of a ledger's lines.
    type Mutation = dyn Fn(&mut Vec<String>);

    #[test]
    fn names_the_first_record_that_breaks_the_chain() {
        let cases: [(&str, &Mutation, u64, &str); 7] = [
            (
                "edited",
                &|l| l[1] = l[1].replace("ada", "eve"),
                2,
                "prev is not the sha256",
            ),
            ("removed", &|l| drop(l.remove(1)), 1, "seq is 2"),
            ("reordered", &|l| l.swap(1, 2), 1, "seq is 2"),
            ("first removed", &|l| drop(l.remove(0)), 0, "seq is 1"),
            (
                "garbage",
                &|l| l[1] = "{not json".into(),
                1,
                "not a JSON object",
            ),
            (
                "unversioned",
                &|l| l[0] = l[0].replace(r#""v":1,"#, ""),
                0,
                "no format version",
            ),
            (
                "another task's",
                &|l| l[0] = l[0].replace(r#""wbs":"T1""#, r#""wbs":"T2""#),
                0,
                "task \"T2\"",
            ),
        ];
        for (name, mutate, seq, fragment) in cases {
            let f = fixture();
            for s in ["in-progress", "review", "blocked"] {
                to(&f, s);
            }
            let mut l = lines(&f);
            mutate(&mut l);
            write_lines(&f, &l);
            let broken = broken(&f).unwrap_or_else(|| panic!("{name}: not caught"));
            assert_eq!(broken.seq, seq, "{name}: {broken:?}");
            assert!(broken.problem.contains(fragment), "{name}: {broken:?}");
            // Fails closed: nothing is appended to a broken ledger.
            let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
            let err = append(
                &lock,
                &f.state,
                StatusChange::To(Status::open("todo").unwrap()),
                &ctx(),
            )
            .unwrap_err();
            assert!(matches!(err, LedgerError::Broken { .. }), "{name}: {err}");
            assert_eq!(lines(&f), l, "{name}: the ledger was changed");
        }
    }

    #[test]
    fn a_done_record_without_the_gate_breaks_the_chain() {
        let f = fixture();
        to(&f, "in-progress");
        let mut l = lines(&f);
        l[0] = l[0].replace(r#""to":"in-progress""#, r#""to":"done""#);
        write_lines(&f, &l);
        let broken = broken(&f).unwrap();
        assert!(
            broken.problem.contains("without a done-gate decision"),
            "{broken:?}"
        );
    }

    #[test]
    fn a_newer_format_is_named_with_both_versions() {
        let f = fixture();
        to(&f, "in-progress");
        let mut l = lines(&f);
        l.push(format!(
            r#"{{"v":2,"seq":1,"prev":"{}","whatever":true}}"#,
            sha256_hex(l[0].as_bytes())
        ));
        write_lines(&f, &l);
        let ledger = read(&f.state, &f.wbs).unwrap();
        let err = ledger.intact().unwrap_err();
        assert!(matches!(err, LedgerError::UnknownVersion { found: 2, .. }));
        let text = err.to_string();
        assert!(text.contains("T1.jsonl"), "{text}");
        assert!(
            text.contains("written by a newer spur (format 2); this spur reads format 1"),
            "{text}"
        );
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_before_the_next_append() {
        let f = fixture();
        to(&f, "in-progress");
        let path = f.state.task_ledger_path(&f.wbs);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(br#"{"v":1,"seq":1,"wbs":"T1","from":"in-pro"#);
        std::fs::write(&path, &bytes).unwrap();
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert!(ledger.torn_tail);
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.status().as_str(), "in-progress");
        to(&f, "review");
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert!(!ledger.torn_tail);
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.records.len(), 2);
    }

    #[test]
    fn a_fifo_as_the_ledger_is_an_error_not_a_hang() {
        let f = fixture();
        std::fs::create_dir_all(f.state.task_ledgers_dir()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(f.state.task_ledger_path(&f.wbs))
            .status()
            .unwrap();
        assert!(made.success());
        let err = read(&f.state, &f.wbs).unwrap_err();
        assert!(err.to_string().contains("it is a FIFO"), "{err}");
    }

    #[test]
    fn lists_ledgered_tasks() {
        let f = fixture();
        to(&f, "in-progress");
        std::fs::write(f.state.task_ledgers_dir().join("..bad.jsonl"), "").unwrap();
        std::fs::write(f.state.task_ledgers_dir().join("notes.txt"), "").unwrap();
        assert_eq!(ledgered_tasks(&f.state), vec![f.wbs.clone()]);
    }
}
