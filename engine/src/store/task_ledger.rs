//! The task ledger (`<state>/ledger/tasks/<wbs>.jsonl`): the one record of a task's status,
//! and of what spur did to its evidence. Append-only JSON lines, each carrying the chain
//! value of the line before it (`prev`) and sealed with the key (`store::seal`: the id of
//! the key and an HMAC of the line), so an edited, removed, inserted or reordered record
//! breaks the chain, and a record written without the key is not proof. Records have kinds
//! (`store::ledger_record`): `status` changes, `verdict-written` (spur wrote the verdict
//! artifact) and `verified` (a verify run's results at a tree fingerprint); one chain holds
//! them all, and a status is read from `status` records only.
//!
//! A record that says `to: "done"` is made only from the done gate's
//! [`Done`](crate::done_gate::Done) token (through [`StatusChange::Done`]). Every append,
//! of any kind, goes through [`append`], under the task's [`DataLock`], and is fsync'd
//! before it returns. A broken chain fails closed: it is never read as a status, and
//! nothing is appended to it. So does a chain whose seals cannot be checked (the key is
//! missing, or another key sealed it): it is *unverifiable*, neither tampered nor fine.
//!
//! Ledgers of spurs before keyed chains (formats 1 and 2) still read: their records are
//! *unkeyed*, chained by plain sha256, and sealed records may follow them (never the other
//! way round). Unkeyed records are history, not proof: the gate takes neither a done nor
//! evidence from one (ARCHITECTURE.md, *Keyed chains*).

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::{AllowReason, DoneVia, GateDecision};
use crate::store::atomic_file::append_line_durable;
use crate::store::bounded_read::{open_regular_as, read_bounded, ReadError};
use crate::store::chain_key::{key_for_reading, key_for_writing, KeyAtHand, KeyError};
use crate::store::data_lock::DataLock;
use crate::store::format_version::{line_version, unknown_version, LineVersion};
use crate::store::ledger_record::{is_sha256_hex, FormatOneRecord};
pub use crate::store::ledger_record::{
    GateRecord, LedgerEntry, LedgerRecord, StatusRecord, VerdictWriter, VerdictWritten, Verified,
    VerifiedGate,
};
use crate::store::seal::{self, chain_value, find_seal, SealCheck};
use crate::store::state_dir::StateDir;
use crate::store::task_status::{ChangeContext, Status, StatusChange};
use crate::wbs::Wbs;

/// The format version this spur writes: records with a `kind`, sealed with the key.
pub const FORMAT_VERSION: u64 = 3;

/// The format of records with a `kind` before keyed chains: still read, as unkeyed.
pub const FORMAT_UNSEALED: u64 = 2;

/// The format before record kinds: status records only, still read (as unkeyed `status`
/// records).
pub const FORMAT_STATUS_ONLY: u64 = 1;

/// The most of a ledger that is read: a record is about 300 bytes.
pub(crate) const MAX_LEDGER_BYTES: u64 = 16 * 1024 * 1024;

/// The ledger as read: the records of its intact prefix and, if the chain breaks or its
/// seals cannot be checked, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRead {
    /// The ledger file.
    pub(crate) path: PathBuf,
    /// The records before the first break (all of them when intact).
    pub(crate) records: Vec<LedgerRecord>,
    /// The first record that does not fit the chain.
    pub(crate) broken: Option<LedgerBreak>,
    /// The first record whose seal cannot be checked with the key at hand.
    pub(crate) unverifiable: Option<LedgerUnverifiable>,
    /// A last line without its newline (a torn append) was ignored.
    pub(crate) torn_tail: bool,
    /// Bytes of the complete lines (where the next record goes).
    complete_len: u64,
    /// Chain value of the last complete line; `""` when there is none.
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

/// The first record of a ledger whose seal cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LedgerUnverifiable {
    /// Its seq.
    pub(crate) seq: u64,
    /// Why (which key sealed it, and what the key file holds).
    pub(crate) why: String,
    /// The key file is there but refused (others can read it, not a file of the user's):
    /// the fix is the key file's, not the ledger's.
    #[serde(skip)]
    pub(crate) key_refused: bool,
}

impl LedgerRead {
    /// The status the ledger records: its last `status` record's `to`, `todo` with none. Of
    /// the intact prefix: callers that act on it check [`LedgerRead::intact`] first.
    pub fn status(&self) -> Status {
        last_status(&self.records)
    }

    /// The last `status` record of the intact prefix.
    pub fn last_status_record(&self) -> Option<&LedgerRecord> {
        self.records.iter().rev().find(|r| r.status().is_some())
    }

    /// The done record that makes the task done, when the ledger says done through a
    /// sealed record: an unkeyed done is history, not proof.
    pub fn certified_done(&self) -> Option<&LedgerRecord> {
        self.last_status_record()
            .filter(|r| r.is_keyed() && r.status().is_some_and(|s| s.to.is_done()))
    }

    /// The last `verdict-written` record of the intact prefix, with the record it is in.
    pub fn last_verdict_written(&self) -> Option<(&LedgerRecord, &VerdictWritten)> {
        self.records
            .iter()
            .rev()
            .find_map(|r| r.verdict_written().map(|w| (r, w)))
    }

    /// The last `verified` record of the intact prefix, with the record it is in.
    pub fn last_verified(&self) -> Option<(&LedgerRecord, &Verified)> {
        self.records
            .iter()
            .rev()
            .find_map(|r| r.verified().map(|v| (r, v)))
    }

    /// How many records of the intact prefix are unkeyed (from before keyed chains).
    pub fn unkeyed(&self) -> usize {
        self.records.iter().filter(|r| !r.is_keyed()).count()
    }

    /// How many unkeyed records no sealed record follows: nothing shows the ledger was not
    /// rewritten whole. (A sealed record's `prev` anchors the lines before it; unkeyed
    /// records are always the first ones.)
    pub fn unanchored(&self) -> usize {
        if self.records.iter().any(LedgerRecord::is_keyed) {
            0
        } else {
            self.records.len()
        }
    }

    /// The records, or the error that the chain is broken or cannot be verified.
    pub fn intact(&self) -> Result<&[LedgerRecord], LedgerError> {
        if let Some(unverifiable) = &self.unverifiable {
            let path = self.path.display().to_string();
            let why = unverifiable.why.clone();
            return Err(if unverifiable.key_refused {
                LedgerError::KeyRefused { path, why }
            } else {
                LedgerError::Unverifiable {
                    path,
                    seq: unverifiable.seq,
                    why,
                }
            });
        }
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

    /// The chain value the next record's `prev` must carry.
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
    /// A record's seal cannot be checked with the key at hand.
    #[error("the task ledger {path} cannot be verified from seq {seq}: {why}")]
    Unverifiable {
        /// The ledger file.
        path: String,
        /// The seq of the first record that cannot be verified.
        seq: u64,
        /// Why.
        why: String,
    },
    /// The key file is there, but spur refuses it.
    #[error("the task ledger {path} cannot be verified: {why}")]
    KeyRefused {
        /// The ledger file.
        path: String,
        /// What is wrong with the key file.
        why: String,
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
    /// There is no key to seal the record with.
    #[error(transparent)]
    Key(#[from] KeyError),
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
        forward { Key }
        Self::Read { .. } => Code::TaskLedgerReadFailed;
        Self::Broken { .. } => Code::TaskLedgerBroken,
            help(
                "the ledger is the record of the task's status: spur neither reads a status from a \
                 broken one nor appends to it. Restore it from a copy (git) or investigate who \
                 edited it; `spur audit verify` lists every ledger's state"
            );
        Self::Unverifiable { .. } => Code::TaskLedgerUnverifiable,
            help(
                "spur neither reads a status from a ledger it cannot verify nor appends to it. \
                 Restore the key that sealed it (or point SPUR_KEY_FILE at it); if that key is \
                 lost, move the ledger aside and certify the task again (book: Keys)"
            );
        Self::KeyRefused { .. } => Code::KeyRefused,
            help("fix the key file (`spur key show` says where it is): spur uses only a regular file \
                  of yours that no one else can read");
        Self::UnknownVersion { .. } => Code::TaskLedgerFormat,
            help("use the spur that wrote it (or a newer one)");
        Self::Write { .. } => Code::TaskLedgerWriteFailed,
            help("the status did not change; fix the state directory and retry");
    }
}

/// Read and check the ledger of `wbs`, its seals with the state directory's key. A
/// missing ledger has no records; only a file that cannot be read at all is an error.
pub fn read(state_dir: &StateDir, wbs: &Wbs) -> Result<LedgerRead, LedgerError> {
    read_path(
        &state_dir.task_ledger_path(wbs),
        wbs,
        &key_for_reading(state_dir),
    )
}

fn read_path(path: &Path, wbs: &Wbs, key: &KeyAtHand) -> Result<LedgerRead, LedgerError> {
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
    Ok(check_chain(path, wbs, &bytes, key))
}

/// Check every complete line; a last line without its newline is a torn append, ignored.
fn check_chain(path: &Path, wbs: &Wbs, bytes: &[u8], key: &KeyAtHand) -> LedgerRead {
    let complete_len = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let (complete, tail) = bytes.split_at(complete_len);
    let mut read = LedgerRead {
        path: path.to_path_buf(),
        records: Vec::new(),
        broken: None,
        unverifiable: None,
        torn_tail: !tail.is_empty(),
        complete_len: u64::try_from(complete_len).unwrap_or(u64::MAX),
        last_hash: String::new(),
    };
    let body = complete.strip_suffix(b"\n").unwrap_or(complete);
    if body.is_empty() && complete.is_empty() {
        return read;
    }
    let mut status = Status::initial();
    let mut sealed_before = false;
    for (seq, line) in (0u64..).zip(body.split(|b| *b == b'\n')) {
        let place = Place {
            seq,
            wbs,
            prev: &read.last_hash,
            status: &status,
            sealed_before,
        };
        match check_line(line, &place, key) {
            Ok(record) => {
                if let Some(change) = record.status() {
                    status = change.to.clone();
                }
                sealed_before |= record.is_keyed();
                read.records.push(record);
                read.last_hash = chain_value(line);
            }
            Err(LineProblem::Broken(broken)) => {
                read.broken = Some(broken);
                break;
            }
            Err(LineProblem::Unverifiable(why)) => {
                let key_refused = matches!(key, KeyAtHand::Unusable { .. });
                read.unverifiable = Some(LedgerUnverifiable {
                    seq,
                    why,
                    key_refused,
                });
                break;
            }
        }
    }
    read
}

/// Where a line stands in the chain: what it must follow.
struct Place<'a> {
    seq: u64,
    wbs: &'a Wbs,
    /// The chain value of the line before.
    prev: &'a str,
    /// The status the records before it leave.
    status: &'a Status,
    /// Whether a sealed record came before it.
    sealed_before: bool,
}

/// Why a line is not taken.
enum LineProblem {
    Broken(LedgerBreak),
    /// Its seal cannot be checked with the key at hand (why).
    Unverifiable(String),
}

fn check_line(line: &[u8], at: &Place<'_>, key: &KeyAtHand) -> Result<LedgerRecord, LineProblem> {
    let seq = at.seq;
    let broken = |problem: String| {
        LineProblem::Broken(LedgerBreak {
            seq,
            problem,
            unknown_version: None,
        })
    };
    let not_a_record =
        |e: serde_json::Error| broken(format!("the line is not a task ledger record: {e}"));
    let record: LedgerRecord = match line_version(line, FORMAT_VERSION) {
        Err(e) => return Err(broken(format!("the line is not a JSON object: {e}"))),
        Ok(LineVersion::Absent) => {
            return Err(broken("the record has no format version (v)".to_owned()))
        }
        Ok(LineVersion::Unknown(FORMAT_STATUS_ONLY)) => {
            serde_json::from_slice::<FormatOneRecord>(line)
                .map_err(not_a_record)?
                .into()
        }
        Ok(LineVersion::Unknown(FORMAT_UNSEALED)) => {
            let record: LedgerRecord = serde_json::from_slice(line).map_err(not_a_record)?;
            if record.key.is_some() || record.mac.is_some() {
                return Err(broken(format!(
                    "a record of format {FORMAT_UNSEALED} carries no seal (key, mac)"
                )));
            }
            record
        }
        Ok(LineVersion::Unknown(found)) => {
            return Err(LineProblem::Broken(LedgerBreak {
                seq,
                problem: unknown_version(found, FORMAT_VERSION),
                unknown_version: Some(found),
            }))
        }
        Ok(LineVersion::Supported) => serde_json::from_slice(line).map_err(not_a_record)?,
    };
    let sealed = if record.v == FORMAT_VERSION {
        let seal = find_seal(line).filter(|seal| {
            record.key.as_deref() == Some(seal.key_id) && record.mac.as_deref() == Some(seal.mac)
        });
        match seal {
            Some(seal) => Some(seal),
            None => {
                return Err(broken(
                    "it is not sealed: its last fields are not its key and its mac".to_owned(),
                ))
            }
        }
    } else {
        None
    };
    if sealed.is_none() && at.sealed_before {
        return Err(broken(
            "it is unkeyed (no seal) after sealed records: it was written without the key"
                .to_owned(),
        ));
    }
    if record.seq != seq {
        return Err(broken(format!(
            "its seq is {}, the line's place says {seq}: a record was removed, inserted or reordered",
            record.seq
        )));
    }
    if record.prev != at.prev {
        return Err(broken(if seq == 0 {
            "the first record does not start the chain (its prev is not empty): records before it were removed".to_owned()
        } else {
            "its prev is not the chain value of the line before it: a record was edited, removed, inserted or reordered".to_owned()
        }));
    }
    if record.wbs != at.wbs.as_str() {
        return Err(broken(format!(
            "it is a record of task {:?}, not {}",
            record.wbs, at.wbs
        )));
    }
    match &record.entry {
        LedgerEntry::Status(change) => {
            if change.from != *at.status {
                return Err(broken(format!(
                    "it changes the status from {}, but the status was {}",
                    change.from, at.status
                )));
            }
            consistent_gate(change).map_err(broken)?;
        }
        LedgerEntry::VerdictWritten(written) => {
            if !is_sha256_hex(&written.sha256) {
                return Err(broken(format!(
                    "its verdict sha256 {:?} is not 64 lowercase hex digits",
                    written.sha256
                )));
            }
        }
        LedgerEntry::Verified(verified) => {
            if !is_sha256_hex(&verified.fingerprint) {
                return Err(broken(format!(
                    "its fingerprint {:?} is not 64 lowercase hex digits",
                    verified.fingerprint
                )));
            }
        }
    }
    if let Some(seal) = sealed {
        match seal::check(&seal, key) {
            SealCheck::Valid => {}
            SealCheck::Unverifiable(why) => return Err(LineProblem::Unverifiable(why)),
            SealCheck::Forged => {
                return Err(broken(
                    "its seal is not the key's MAC of the line: the record was edited, or sealed without the key"
                        .to_owned(),
                ))
            }
        }
    }
    Ok(record)
}

/// The `to` of the last `status` record; `todo` when there is none.
fn last_status(records: &[LedgerRecord]) -> Status {
    records
        .iter()
        .rev()
        .find_map(|r| r.status().map(|s| s.to.clone()))
        .unwrap_or_else(Status::initial)
}

/// A done record carries the gate's allow (and a forced one its audit hash); no other does.
fn consistent_gate(record: &StatusRecord) -> Result<(), String> {
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

/// What to append. A status change is made only from a [`StatusChange`], so a `done`
/// record still needs the gate's token; the other kinds are facts spur records.
#[derive(Debug)]
// `Verified` is made by verify.
#[allow(dead_code)]
pub(crate) enum NewRecord<'a> {
    /// A status change (a change to the current status writes nothing).
    Status(StatusChange<'a>),
    /// spur wrote the task's verdict artifact.
    VerdictWritten(VerdictWritten),
    /// A verify run's gate results.
    Verified(Verified),
}

/// Append `new` to the ledger of the locked task, chained to its last record, sealed with
/// the key and fsync'd: the one way any record gets into a task ledger. A change to the
/// current status writes nothing (except a done over an unkeyed done: the sealed record
/// is what makes it proof). A broken, unverifiable or unreadable ledger is an error and is
/// left as it is; a torn last line (an append that never completed) is cut off first, so
/// the new record follows the last complete one.
pub(crate) fn append(
    lock: &DataLock,
    state_dir: &StateDir,
    new: NewRecord<'_>,
    context: &ChangeContext<'_>,
) -> Result<Appended, LedgerError> {
    let wbs = lock.wbs();
    let path = state_dir.task_ledger_path(wbs);
    let key = key_for_writing(state_dir)?;
    let read = read_path(&path, wbs, &KeyAtHand::Key(key.clone()))?;
    let mut records = read.intact()?.to_vec();
    let sealed_status = read.last_status_record().is_none_or(LedgerRecord::is_keyed);
    let entry = match new {
        NewRecord::Status(change) => match status_entry(change, read.status(), sealed_status) {
            Some(entry) => entry,
            None => return Ok(Appended::Unchanged(records)),
        },
        NewRecord::VerdictWritten(written) => LedgerEntry::VerdictWritten(written),
        NewRecord::Verified(verified) => LedgerEntry::Verified(verified),
    };
    let record = LedgerRecord {
        v: FORMAT_VERSION,
        seq: u64::try_from(records.len()).unwrap_or(u64::MAX),
        wbs: wbs.to_string(),
        at: context.time.clone(),
        user: context.user.to_owned(),
        run: context.run_id.map(str::to_owned),
        entry,
        prev: read.last_hash().to_owned(),
        key: None,
        mac: None,
    };
    let write_err = |source| LedgerError::Write {
        path: path.display().to_string(),
        source,
    };
    let open = serde_json::to_string(&record).map_err(|e| write_err(io::Error::other(e)))?;
    let line = seal::seal(open.strip_suffix('}').unwrap_or(&open), &key);
    let record = serde_json::from_str(&line).map_err(|e| write_err(io::Error::other(e)))?;
    if read.torn_tail {
        cut_torn_tail(&path, read.complete_len).map_err(write_err)?;
    }
    append_line_durable(&path, &line).map_err(write_err)?;
    records.push(record);
    Ok(Appended::Written(records))
}

/// The status record of `change` from status `from`; `None` when it changes nothing: the
/// same status, unless it is done and `from` came from an unkeyed record (`sealed` false).
fn status_entry(change: StatusChange<'_>, from: Status, sealed: bool) -> Option<LedgerEntry> {
    let policy_sha256 = match &change {
        StatusChange::To(_) => None,
        StatusChange::Done(done) => done.policy_sha256().map(str::to_owned),
    };
    let (to, gate, verdict_sha256, audit_hash) = match change {
        StatusChange::To(open) => (open.status().clone(), None, None, None),
        StatusChange::Done(done) => {
            let (reason, force_reason, audit_hash) = match done.via() {
                DoneVia::Pass => (AllowReason::Pass, None, None),
                DoneVia::External => (AllowReason::External, None, None),
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
    let changes = to != from || (to.is_done() && !sealed);
    changes.then_some(LedgerEntry::Status(StatusRecord {
        from,
        to,
        gate,
        verdict_sha256,
        audit_hash,
        policy_sha256,
    }))
}

/// Drop the bytes after the last complete line.
fn cut_torn_tail(path: &Path, complete_len: u64) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true);
    let file = open_regular_as(path, options)?;
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
    use crate::store::chain_key::ChainKey;
    use crate::store::digest::sha256_hex;
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
            NewRecord::Status(StatusChange::To(Status::open(status).unwrap())),
            &ctx(),
        )
        .unwrap()
    }

    const SHA_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn written(f: &Fixture, sha256: &str, writer: VerdictWriter) -> Appended {
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let new = NewRecord::VerdictWritten(VerdictWritten {
            sha256: sha256.to_owned(),
            writer,
        });
        append(&lock, &f.state, new, &ctx()).unwrap()
    }

    fn verified(f: &Fixture) -> Appended {
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let new = NewRecord::Verified(Verified {
            verify_run: "verify-1".into(),
            fingerprint: SHA_A.replace('a', "b"),
            gates: vec![
                VerifiedGate {
                    id: "gate-tests".into(),
                    status: crate::verify::status::GateStatus::Pass,
                },
                VerifiedGate {
                    id: "evidence-command:AC1".into(),
                    status: crate::verify::status::GateStatus::Skip,
                },
            ],
            tree_changed_by: vec!["gate-fmt".into()],
            policy_sha256: None,
        });
        append(&lock, &f.state, new, &ctx()).unwrap()
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

    /// The fixture's key (the engine's unit tests keep it in the state directory).
    fn key(f: &Fixture) -> ChainKey {
        f.state.key_file().load().unwrap().unwrap()
    }

    /// `open` (a record's text without its closing brace) sealed as spur seals: what a
    /// forger who holds the key writes.
    fn sealed(f: &Fixture, open: &str) -> String {
        seal::seal(open, &key(f))
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
        let open = r#"{"v":3,"seq":0,"wbs":"T1","at":"2026-12-01T10:00:00.000Z","user":"ada","run":null,"kind":"status","from":"todo","to":"in-progress","gate":null,"verdictSha256":null,"auditHash":null,"prev":"""#;
        assert_eq!(lines[0], sealed(&f, open));
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        assert!(ledger.records.iter().all(LedgerRecord::is_keyed));
        assert_eq!(ledger.records[1].prev, chain_value(lines[0].as_bytes()));
        assert_eq!(
            Some(ledger.records[0].prev.as_str()),
            Some(""),
            "the first record starts the chain"
        );
        assert_eq!(
            ledger.records[1].status().unwrap().from.as_str(),
            "in-progress"
        );
        assert_eq!(ledger.status().as_str(), "review");
    }

    /// An edit of a ledger's lines.
    type Mutation<'a> = dyn Fn(&mut Vec<String>) + 'a;

    #[test]
    fn names_the_first_record_that_breaks_the_chain() {
        let cases: [(&str, &Mutation, u64, &str); 7] = [
            (
                "edited",
                // The user field only: "ada" can also occur in a hex MAC or prev.
                &|l| l[1] = l[1].replace(r#""user":"ada""#, r#""user":"eve""#),
                1,
                "seal is not the key's MAC",
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
                &|l| l[0] = l[0].replace(r#""v":3,"#, ""),
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
                NewRecord::Status(StatusChange::To(Status::open("todo").unwrap())),
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
            r#"{{"v":4,"seq":1,"prev":"{}","whatever":true}}"#,
            chain_value(l[0].as_bytes())
        ));
        write_lines(&f, &l);
        let ledger = read(&f.state, &f.wbs).unwrap();
        let err = ledger.intact().unwrap_err();
        assert!(matches!(err, LedgerError::UnknownVersion { found: 4, .. }));
        let text = err.to_string();
        assert!(text.contains("T1.jsonl"), "{text}");
        assert!(
            text.contains("written by a newer spur (format 4); this spur reads format 3"),
            "{text}"
        );
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_before_the_next_append() {
        let f = fixture();
        to(&f, "in-progress");
        let path = f.state.task_ledger_path(&f.wbs);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(br#"{"v":3,"seq":1,"wbs":"T1","kind":"sta"#);
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

    /// Two format-1 lines as spur 0.x wrote them (no `kind`): in-progress, then done.
    fn format_one_lines() -> Vec<String> {
        let first = r#"{"v":1,"seq":0,"wbs":"T1","from":"todo","to":"in-progress","at":"2026-11-01T10:00:00.000Z","user":"ada","run":null,"gate":null,"verdictSha256":null,"auditHash":null,"prev":""}"#.to_owned();
        let second = format!(
            r#"{{"v":1,"seq":1,"wbs":"T1","from":"in-progress","to":"done","at":"2026-11-01T11:00:00.000Z","user":"ada","run":"run-1","gate":{{"decision":"allow","reason":"pass"}},"verdictSha256":"{SHA_A}","auditHash":null,"prev":"{}"}}"#,
            sha256_hex(first.as_bytes())
        );
        vec![first, second]
    }

    #[test]
    fn a_format_one_ledger_reads_as_status_records_and_takes_format_two_appends() {
        let f = fixture();
        std::fs::create_dir_all(f.state.task_ledgers_dir()).unwrap();
        let old = format_one_lines();
        write_lines(&f, &old);
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.status().as_str(), "done");
        assert_eq!(ledger.records.len(), 2);
        assert!(ledger.records.iter().all(|r| r.entry.kind() == "status"));
        let done = ledger.records[1].status().unwrap();
        assert_eq!(done.gate.as_ref().unwrap().reason, AllowReason::Pass);
        assert_eq!(done.verdict_sha256.as_deref(), Some(SHA_A));
        assert_eq!(ledger.records[1].run.as_deref(), Some("run-1"));
        // Unkeyed: its done is history, not proof.
        assert_eq!(ledger.unkeyed(), 2);
        assert_eq!(ledger.certified_done(), None);
        // A sealed record follows an unkeyed one on the same chain, its prev the sha256.
        to(&f, "in-progress");
        let l = lines(&f);
        assert_eq!(&l[..2], &old[..]);
        assert!(l[2].starts_with(r#"{"v":3,"seq":2,"#), "{}", l[2]);
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.records[2].prev, sha256_hex(l[1].as_bytes()));
        assert_eq!(ledger.status().as_str(), "in-progress");
        // Format 1 is as strict as it always was: a field it never had breaks it.
        let mut l = old.clone();
        l[0] = l[0].replace(r#""run":null,"#, r#""run":null,"kind":"status","#);
        write_lines(&f, &l);
        let broken = broken(&f).unwrap();
        assert_eq!(broken.seq, 0);
        assert!(
            broken.problem.contains("unknown field `kind`"),
            "{broken:?}"
        );
    }

    #[test]
    fn record_kinds_share_one_chain_and_status_reads_status_records_only() {
        let f = fixture();
        to(&f, "in-progress");
        written(&f, SHA_A, VerdictWriter::TaskVerdict);
        verified(&f);
        written(&f, &SHA_A.replace('a', "c"), VerdictWriter::Verify);
        to(&f, "review");
        let l = lines(&f);
        assert_eq!(l.len(), 5);
        assert!(
            l[1].contains(r#""kind":"verdict-written","sha256":"aaaa"#),
            "{}",
            l[1]
        );
        assert!(l[1].contains(r#""writer":"task-verdict""#), "{}", l[1]);
        assert!(
            l[2].contains(r#""kind":"verified","verifyRun":"verify-1","fingerprint":"bbbb"#),
            "{}",
            l[2]
        );
        assert!(
            l[2].contains(r#""gates":[{"id":"gate-tests","status":"PASS"},{"id":"evidence-command:AC1","status":"SKIP"}],"treeChangedBy":["gate-fmt"]"#),
            "{}",
            l[2]
        );
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        for (line, record) in l.iter().zip(&ledger.records) {
            // Every kind reads back as what was written.
            assert_eq!(&serde_json::to_string(record).unwrap(), line);
        }
        // The status change after the other kinds continues from the last status record.
        let review = ledger.records[4].status().unwrap();
        assert_eq!(review.from.as_str(), "in-progress");
        assert_eq!(ledger.status().as_str(), "review");
        let (record, last) = ledger.last_verdict_written().unwrap();
        assert_eq!(record.seq, 3);
        assert_eq!(last.writer, VerdictWriter::Verify);
        assert!(last.sha256.starts_with("cccc"));
        let (record, v) = ledger.last_verified().unwrap();
        assert_eq!(record.seq, 2);
        assert_eq!(v.tree_changed_by, ["gate-fmt"]);
        // The view's history is the status records only.
        let task = crate::store::task_view::TaskRecord::from_ledger(&f.wbs, &ledger.records);
        assert_eq!(task.history.len(), 2);
        assert_eq!(task.status.as_str(), "review");
        // A status change to the current status still writes nothing.
        assert!(matches!(to(&f, "review"), Appended::Unchanged(_)));
    }

    #[test]
    fn an_edited_or_forged_verdict_written_record_breaks_the_chain() {
        let other = SHA_A.replace('a', "d");
        let f = fixture();
        // A forger holding the key: the record is sealed, so what breaks is what it says.
        let chained_after_first = |l: &[String], body: &str| {
            sealed(
                &f,
                &format!(
                    r#"{{"v":3,"seq":1,"wbs":"T1","at":"t","user":"eve","run":null,"kind":"verdict-written",{body},"prev":"{}""#,
                    chain_value(l[0].as_bytes())
                ),
            )
        };
        let cases: [(&str, &Mutation<'_>, u64, &str); 7] = [
            (
                "its sha256 edited",
                &|l| l[1] = l[1].replace(SHA_A, &other),
                1,
                "seal is not the key's MAC",
            ),
            (
                "its writer edited",
                &|l| l[1] = l[1].replace("task-verdict", "verify"),
                1,
                "seal is not the key's MAC",
            ),
            (
                "appended without the chain",
                &|l| {
                    l.push(l[1].replace(r#""seq":1"#, r#""seq":3"#));
                },
                3,
                "prev is not the chain value",
            ),
            (
                "written without the key, chained by sha256 as before",
                &|l| {
                    l[1] = format!(
                        r#"{{"v":2,"seq":1,"wbs":"T1","at":"t","user":"eve","run":null,"kind":"verdict-written","sha256":"{SHA_A}","writer":"verify","prev":"{}"}}"#,
                        sha256_hex(l[0].as_bytes())
                    )
                },
                1,
                "unkeyed (no seal) after sealed records",
            ),
            (
                "an unknown writer",
                &|l| {
                    l[1] =
                        chained_after_first(l, &format!(r#""sha256":"{SHA_A}","writer":"shell""#))
                },
                1,
                "unknown variant `shell`",
            ),
            (
                "a sha256 that is none",
                &|l| l[1] = chained_after_first(l, r#""sha256":"PASS","writer":"verify""#),
                1,
                "not 64 lowercase hex digits",
            ),
            (
                "a status field smuggled in",
                &|l| {
                    l[1] = chained_after_first(
                        l,
                        &format!(r#""sha256":"{SHA_A}","writer":"verify","to":"done""#),
                    )
                },
                1,
                "unknown field `to`",
            ),
        ];
        for (name, mutate, seq, fragment) in cases {
            std::fs::remove_file(f.state.task_ledger_path(&f.wbs)).ok();
            to(&f, "in-progress");
            written(&f, SHA_A, VerdictWriter::TaskVerdict);
            to(&f, "review");
            let mut l = lines(&f);
            mutate(&mut l);
            write_lines(&f, &l);
            let broken = broken(&f).unwrap_or_else(|| panic!("{name}: not caught"));
            assert_eq!(broken.seq, seq, "{name}: {broken:?}");
            assert!(broken.problem.contains(fragment), "{name}: {broken:?}");
        }
    }

    #[test]
    fn an_unknown_kind_breaks_the_chain() {
        let f = fixture();
        to(&f, "in-progress");
        let mut l = lines(&f);
        let open = format!(
            r#"{{"v":3,"seq":1,"wbs":"T1","at":"t","user":"eve","run":null,"kind":"certified","prev":"{}""#,
            chain_value(l[0].as_bytes())
        );
        l.push(sealed(&f, &open));
        write_lines(&f, &l);
        let broken = broken(&f).unwrap();
        assert_eq!(broken.seq, 1);
        assert!(
            broken.problem.contains("unknown variant `certified`"),
            "{broken:?}"
        );
    }

    /// The ledger rewritten whole as today's spur before keyed chains would write it:
    /// format 2, every `prev` the sha256 of the line before, the status ending done.
    fn rewritten_with_a_sha256_chain(f: &Fixture) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let statuses = [
            ("todo", "in-progress", "null"),
            (
                "in-progress",
                "done",
                r#"{"decision":"allow","reason":"pass"}"#,
            ),
        ];
        for (seq, (from, to, gate)) in statuses.iter().enumerate() {
            let prev = out
                .last()
                .map_or(String::new(), |l| sha256_hex(l.as_bytes()));
            out.push(format!(
                r#"{{"v":2,"seq":{seq},"wbs":"T1","at":"2026-12-01T10:00:00.000Z","user":"eve","run":null,"kind":"status","from":"{from}","to":"{to}","gate":{gate},"verdictSha256":null,"auditHash":null,"prev":"{prev}"}}"#
            ));
        }
        write_lines(f, &out);
        out
    }

    #[test]
    fn a_ledger_rewritten_whole_with_a_sha256_chain_is_unkeyed_and_not_done() {
        let f = fixture();
        to(&f, "in-progress");
        to(&f, "review");
        rewritten_with_a_sha256_chain(&f);
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(
            ledger.broken, None,
            "it reads, as a ledger of an older spur"
        );
        assert_eq!(ledger.status().as_str(), "done");
        assert_eq!(ledger.unkeyed(), 2);
        assert_eq!(ledger.certified_done(), None, "an unkeyed done is no proof");
        // The gate's done over it is written, sealed, though the status stays done.
        let done = crate::done_gate::Done::for_tests();
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let appended = append(
            &lock,
            &f.state,
            NewRecord::Status(StatusChange::Done(&done)),
            &ctx(),
        )
        .unwrap();
        assert!(matches!(appended, Appended::Written(_)));
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        assert_eq!(ledger.certified_done().map(|r| r.seq), Some(2));
        // A second done changes nothing.
        let again = append(
            &lock,
            &f.state,
            NewRecord::Status(StatusChange::Done(&done)),
            &ctx(),
        )
        .unwrap();
        assert!(matches!(again, Appended::Unchanged(_)));
    }

    #[test]
    fn without_its_key_a_ledger_is_unverifiable_and_takes_no_record() {
        let f = fixture();
        to(&f, "in-progress");
        to(&f, "review");
        let key_path = f.state.key_file().path().unwrap().to_path_buf();
        let kept = std::fs::read(&key_path).unwrap();
        std::fs::remove_file(&key_path).unwrap();
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert_eq!(ledger.broken, None);
        let unverifiable = ledger.unverifiable.clone().unwrap();
        assert_eq!(unverifiable.seq, 0);
        assert!(
            unverifiable.why.contains("there is no key file"),
            "{unverifiable:?}"
        );
        let err = ledger.intact().unwrap_err();
        assert!(
            matches!(err, LedgerError::Unverifiable { seq: 0, .. }),
            "{err}"
        );
        // No new key is made over sealed records, and nothing is appended.
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let open = NewRecord::Status(StatusChange::To(Status::open("todo").unwrap()));
        let err = append(&lock, &f.state, open, &ctx()).unwrap_err();
        assert!(
            matches!(err, LedgerError::Key(KeyError::Missing { .. })),
            "{err}"
        );
        assert!(!key_path.exists());
        // Another key: unverifiable too, and still nothing appended.
        crate::store::chain_key::KeyFile::at(&key_path)
            .create()
            .unwrap();
        let ledger = read(&f.state, &f.wbs).unwrap();
        assert!(ledger
            .unverifiable
            .unwrap()
            .why
            .contains("the key file holds key"));
        let open = NewRecord::Status(StatusChange::To(Status::open("todo").unwrap()));
        let err = append(&lock, &f.state, open, &ctx()).unwrap_err();
        assert!(matches!(err, LedgerError::Unverifiable { .. }), "{err}");
        assert_eq!(lines(&f).len(), 2);
        // The key back: verified again.
        std::fs::write(&key_path, kept).unwrap();
        assert!(read(&f.state, &f.wbs).unwrap().intact().is_ok());
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
