//! The usage ledger (`<state>/ledger/usage/<wbs>.jsonl`, beside the task ledger): what a
//! task's steps spent, over all its runs, one record per step that reported usage. Chained
//! and sealed like the task ledger (`store::seal`): each line names the chain value of the
//! line before it (`prev`) and ends with the key's id and an HMAC of its text, so a step
//! that edits, drops, reorders or forges a record breaks the chain, and a ledger that
//! breaks is refused whole (a budget is never held against a total nobody can trust).
//! A record is appended under the task's data lock and fsync'd before the step's
//! `action-finished` is journaled: a crash between the two leaves the spend on record.

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cost::{Usage, UsageTotal};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::append_line_durable;
use crate::store::bounded_read::{open_regular_as, read_bounded, ReadError};
use crate::store::chain_key::{key_for_reading, key_for_writing, KeyAtHand, KeyError};
use crate::store::data_lock::{DataLock, DataLockError};
use crate::store::seal::{self, chain_value, find_seal, SealCheck};
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// The format version this spur writes.
pub const FORMAT_VERSION: u64 = 1;

/// The most of a usage ledger that is read (a record is about 400 bytes).
const MAX_LEDGER_BYTES: u64 = 32 * 1024 * 1024;

/// One step's spend, as the usage ledger keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageRecord {
    /// The format version.
    pub v: u64,
    /// Its place in the ledger, from 0.
    pub seq: u64,
    /// When it was written (RFC 3339, UTC).
    pub at: String,
    /// The task.
    pub wbs: String,
    /// The run.
    pub run: String,
    /// The seq of the step's `action-started` record in the run's journal.
    pub action: u64,
    /// The state whose step it was.
    pub state: String,
    /// The step's kind.
    pub kind: String,
    /// What it spent.
    pub usage: Usage,
    /// The chain value of the record before (`""` for the first).
    pub prev: String,
    /// The id of the key that sealed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Its seal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

/// A new record: where the spend happened and what it was.
#[derive(Debug, Clone)]
pub(crate) struct Spend<'a> {
    pub(crate) run: &'a str,
    pub(crate) action: u64,
    pub(crate) state: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) usage: &'a Usage,
}

/// A usage ledger as read.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageLedger {
    /// Its records, when the chain is intact.
    pub records: Vec<UsageRecord>,
    /// A last line without its newline (a torn append) was ignored.
    pub torn_tail: bool,
    complete_len: u64,
    last_hash: String,
}

impl UsageLedger {
    /// The task's total.
    pub fn total(&self) -> UsageTotal {
        self.records.iter().map(|r| r.usage.clone()).collect()
    }

    /// The total of one run.
    pub fn run_total(&self, run: &str) -> UsageTotal {
        self.records
            .iter()
            .filter(|r| r.run == run)
            .map(|r| r.usage.clone())
            .collect()
    }
}

/// Why a usage ledger cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UsageLedgerError {
    /// It could not be read.
    #[error("cannot read the usage ledger {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Its chain breaks: it was edited after spur wrote it.
    #[error("the usage ledger {path} breaks at record {seq}: {problem}")]
    Broken {
        /// The file.
        path: String,
        /// The first record that does not fit.
        seq: u64,
        /// How.
        problem: String,
    },
    /// A seal cannot be checked with the key at hand.
    #[error("the usage ledger {path} cannot be verified from record {seq}: {why}")]
    Unverifiable {
        /// The file.
        path: String,
        /// The first record.
        seq: u64,
        /// Why.
        why: String,
    },
    /// The key could not be had for writing.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The data lock could not be taken.
    #[error(transparent)]
    Lock(#[from] DataLockError),
    /// It could not be written.
    #[error("cannot append to the usage ledger {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
}

coded_diagnostic! {
    UsageLedgerError {
        Self::Read { .. } => Code::CostLedger,
            help("check that the file is a readable regular file");
        Self::Broken { .. } => Code::CostLedger,
            help("each record names the chain value of the one before and is sealed with the key: \
                  this one was edited, inserted or removed after spur wrote it. spur holds no budget \
                  against a total it cannot trust; restore the file (or move it aside to start the \
                  task's total again, which loses what it recorded)");
        Self::Unverifiable { .. } => Code::CostLedger,
            help("restore the key that sealed it, or point SPUR_KEY_FILE at it (book: Keys)");
        Self::Key(..) => Code::CostLedger,
            help("spur seals usage records with the key of its chains (book: Keys)");
        Self::Lock(..) => Code::CostLedger,
            help("check that the state directory is writable");
        Self::Write { .. } => Code::CostLedger,
            help("check that the state directory is writable and not full");
    }
}

/// Read and check the usage ledger of `wbs` (none yet: no records).
pub fn read(state_dir: &StateDir, wbs: &Wbs) -> Result<UsageLedger, UsageLedgerError> {
    read_path(
        &state_dir.usage_ledger_path(wbs),
        wbs,
        &key_for_reading(state_dir),
    )
}

fn read_path(path: &Path, wbs: &Wbs, key: &KeyAtHand) -> Result<UsageLedger, UsageLedgerError> {
    let shown = path.display().to_string();
    let bytes = match read_bounded(path, MAX_LEDGER_BYTES) {
        Ok(bytes) => bytes,
        Err(ReadError::Missing) => Vec::new(),
        Err(e) => {
            return Err(UsageLedgerError::Read {
                path: shown,
                reason: e.to_string(),
            })
        }
    };
    let complete_len = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let (complete, tail) = bytes.split_at(complete_len);
    let mut ledger = UsageLedger {
        records: Vec::new(),
        torn_tail: !tail.is_empty(),
        complete_len: u64::try_from(complete_len).unwrap_or(u64::MAX),
        last_hash: String::new(),
    };
    let body = complete.strip_suffix(b"\n").unwrap_or(complete);
    if body.is_empty() {
        return Ok(ledger);
    }
    for (seq, line) in (0u64..).zip(body.split(|b| *b == b'\n')) {
        let broken = |problem: String| UsageLedgerError::Broken {
            path: shown.clone(),
            seq,
            problem,
        };
        let record: UsageRecord = serde_json::from_slice(line)
            .map_err(|e| broken(format!("the line is not a usage record: {e}")))?;
        if record.v != FORMAT_VERSION {
            return Err(broken(format!(
                "format {} (this spur reads format {FORMAT_VERSION})",
                record.v
            )));
        }
        if record.seq != seq {
            return Err(broken(format!("its seq is {}, not {seq}", record.seq)));
        }
        if record.wbs != wbs.as_str() {
            return Err(broken(format!("it is task {}'s record", record.wbs)));
        }
        if record.prev != ledger.last_hash {
            return Err(broken(
                "it does not name the record before it (`prev`)".to_owned(),
            ));
        }
        let Some(found) = find_seal(line) else {
            return Err(broken("it carries no seal (key, mac)".to_owned()));
        };
        match seal::check(&found, key) {
            SealCheck::Valid => {}
            SealCheck::Forged => {
                return Err(broken(
                    "its seal is not the key's: it was edited, or written without the key"
                        .to_owned(),
                ))
            }
            SealCheck::Unverifiable(why) => {
                return Err(UsageLedgerError::Unverifiable {
                    path: shown,
                    seq,
                    why,
                })
            }
        }
        ledger.last_hash = chain_value(line);
        ledger.records.push(record);
    }
    Ok(ledger)
}

/// Append one step's spend to the usage ledger of `wbs`, under its data lock, chained,
/// sealed and fsync'd. A broken or unverifiable ledger takes nothing.
pub(crate) fn append(
    state_dir: &StateDir,
    wbs: &Wbs,
    spend: &Spend<'_>,
) -> Result<UsageLedger, UsageLedgerError> {
    let _lock = DataLock::acquire(state_dir, wbs)?;
    let path = state_dir.usage_ledger_path(wbs);
    let key = key_for_writing(state_dir)?;
    let mut ledger = read_path(&path, wbs, &KeyAtHand::Key(key.clone()))?;
    let write_err = |source| UsageLedgerError::Write {
        path: path.display().to_string(),
        source,
    };
    let record = UsageRecord {
        v: FORMAT_VERSION,
        seq: u64::try_from(ledger.records.len()).unwrap_or(u64::MAX),
        at: crate::store::timestamp::now(),
        wbs: wbs.to_string(),
        run: spend.run.to_owned(),
        action: spend.action,
        state: spend.state.to_owned(),
        kind: spend.kind.to_owned(),
        usage: spend.usage.clone(),
        prev: ledger.last_hash.clone(),
        key: None,
        mac: None,
    };
    let open = serde_json::to_string(&record).map_err(|e| write_err(io::Error::other(e)))?;
    let line = seal::seal(open.strip_suffix('}').unwrap_or(&open), &key);
    let sealed: UsageRecord =
        serde_json::from_str(&line).map_err(|e| write_err(io::Error::other(e)))?;
    if ledger.torn_tail {
        cut(&path, ledger.complete_len).map_err(write_err)?;
    }
    append_line_durable(&path, &line).map_err(write_err)?;
    ledger.last_hash = chain_value(line.as_bytes());
    ledger.records.push(sealed);
    ledger.torn_tail = false;
    Ok(ledger)
}

/// Drop the bytes after the last complete line.
fn cut(path: &Path, len: u64) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    let file = open_regular_as(path, options)?;
    file.set_len(len)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (tempfile::TempDir, StateDir, Wbs) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        (dir, state, Wbs::parse("0042").unwrap())
    }

    fn spend(state: &StateDir, wbs: &Wbs, run: &str, tokens: u64) -> UsageLedger {
        let usage = Usage {
            input_tokens: tokens,
            output_tokens: 1,
            cost_usd: Some(0.25),
            ..Usage::default()
        };
        append(
            state,
            wbs,
            &Spend {
                run,
                action: 3,
                state: "fix",
                kind: "agent.run",
                usage: &usage,
            },
        )
        .unwrap()
    }

    #[test]
    fn totals_chain_over_runs_and_an_edit_is_refused() {
        let (_dir, state, wbs) = fixture();
        spend(&state, &wbs, "r1", 10);
        spend(&state, &wbs, "r2", 20);
        let ledger = read(&state, &wbs).unwrap();
        assert_eq!(ledger.total().tokens(), 32);
        assert_eq!(ledger.total().cost_usd, 0.5);
        assert_eq!(ledger.run_total("r2").tokens(), 21);

        let path = state.usage_ledger_path(&wbs);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replacen("\"inputTokens\":20", "\"inputTokens\":2", 1),
        )
        .unwrap();
        let err = read(&state, &wbs).unwrap_err();
        assert!(
            matches!(err, UsageLedgerError::Broken { seq: 1, .. }),
            "{err}"
        );

        let first_only: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, first_only).unwrap();
        assert!(matches!(
            read(&state, &wbs).unwrap_err(),
            UsageLedgerError::Broken { seq: 0, .. }
        ));
    }

    #[test]
    fn a_torn_tail_is_ignored_and_cut_before_the_next_record() {
        let (_dir, state, wbs) = fixture();
        spend(&state, &wbs, "r1", 10);
        let path = state.usage_ledger_path(&wbs);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"v\":1,\"seq\":1,");
        std::fs::write(&path, text).unwrap();
        let ledger = read(&state, &wbs).unwrap();
        assert!(ledger.torn_tail);
        assert_eq!(ledger.records.len(), 1);
        let after = spend(&state, &wbs, "r2", 5);
        assert_eq!(after.records.len(), 2);
        assert_eq!(read(&state, &wbs).unwrap().total().steps, 2);
    }
}
