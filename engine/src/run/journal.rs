//! The run journal (ARCHITECTURE.md, *Durability*): `<protected>/runs/<run-id>/journal.jsonl`, append-only JSON lines
//! with a gap-free `seq`, each carrying the format version, the chain value of the line
//! before it (`prev`) and a seal of its own text (`key`, `mac`: `store::seal`), so an
//! edited, inserted or removed line is found, and one written without the key is not
//! taken for spur's. Records that guard a side effect are fsync'd before the effect
//! happens; the rest ride along with the next fsync (one file, appended in order, so a
//! crash can lose only a tail, never a middle line). Reading ignores a torn last line.
//!
//! Journals of spurs before keyed chains (format 1: `hash`, a plain sha256, last; and
//! before that no version at all) still read for `spur trace` and `spur runs`, and are
//! never resumed: nothing shows a step did not rewrite them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::event::Event;

pub use super::event::PauseKind;

pub use super::event::Phase;
use super::secrets::RunSecrets;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{open_directory, open_regular_as};
use crate::store::chain_key::{ChainKey, KeyAtHand};
use crate::store::digest::sha256_hex;
use crate::store::format_version::{line_version, unknown_version, LineVersion};
use crate::store::seal::{self, chain_value, find_seal, SealCheck};
use crate::store::timestamp::Timestamp;

/// The journal format this spur writes and resumes: sealed lines.
pub(crate) const FORMAT: u64 = 2;

/// The format before keyed chains: lines chained by plain sha256 (`hash` last).
pub(crate) const FORMAT_UNSEALED: u64 = 1;

/// The last field of a format-1 line: the sha256 of the line's text before it.
const HASH_FIELD: &str = ",\"hash\":\"";

/// One record of the journal: what the run did. The line around it (format version and
/// chain hashes) is the journal file's business, not the record's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The record's position in the journal, from 1, without gaps.
    pub seq: u64,
    /// When it was written (RFC 3339, UTC).
    pub at: String,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// Whether durable records are fsync'd. `Unsafe` exists for benchmarks (and
/// `SPUR_JOURNAL_FSYNC=0`): a power loss may then lose committed transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every durable record is fsync'd before the run goes on.
    #[default]
    Fsync,
    /// Nothing is fsync'd (benchmarks, `SPUR_JOURNAL_FSYNC=0`).
    Unsafe,
}

/// Reading a journal failed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal file cannot be read.
    #[error("cannot read journal {path}: {source}")]
    Unreadable {
        /// The journal file.
        path: PathBuf,
        /// The read error.
        #[source]
        source: io::Error,
    },
    /// A line is not a journal record.
    #[error("journal {path} line {line} is not a journal record: {message}")]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A seq is missing or repeated.
    #[error("journal {path} has a gap: seq {found} follows seq {previous}")]
    SeqGap {
        /// The journal file.
        path: PathBuf,
        /// The seq of the line before.
        previous: u64,
        /// The seq found where `previous + 1` belongs.
        found: u64,
    },
    /// The journal is empty or does not start with `run-started`.
    #[error("journal {path} is empty or does not start with run-started")]
    NoStart {
        /// The journal file.
        path: PathBuf,
    },
    /// A line of a format-1 journal is not chained to the one before it: edited, inserted
    /// or removed.
    #[error("journal {path}: record seq {seq} is not the line spur wrote there: {what}")]
    ChainBroken {
        /// The journal file.
        path: PathBuf,
        /// The seq of the first line that is not chained to the one before it.
        seq: u64,
        /// What does not match.
        what: String,
    },
    /// A line carries a format version newer than `FORMAT`.
    #[error("journal {path}: {}", unknown_version(*found, FORMAT))]
    NewerFormat {
        /// The journal file.
        path: PathBuf,
        /// The format version a line carries.
        found: u64,
    },
    /// A sealed line cannot be verified with the key at hand.
    #[error("journal {path} cannot be verified from seq {seq}: {why}")]
    Unverifiable {
        /// The journal file.
        path: PathBuf,
        /// The seq of the first line that cannot be verified.
        seq: u64,
        /// Why (which key sealed it, and what the key file holds).
        why: String,
    },
}

/// How a journal's lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalFormat {
    /// Written before format 1: no version, no chain. Still shown by `spur trace` and
    /// `spur runs`; never resumed, since nothing shows it was not edited.
    Unversioned,
    /// Format 1: chained by plain sha256, which anyone can recompute. Shown, checked, never
    /// resumed.
    Unkeyed,
    /// Format `FORMAT`: versioned, chained and sealed, every line checked on reading.
    Current,
}

coded_diagnostic! {
    JournalError {
        Self::Unreadable { .. } => Code::JournalUnreadable;
        Self::Corrupt { .. } => Code::JournalCorrupt,
            help("only a torn last line is tolerated; a damaged middle line means the file was edited");
        Self::SeqGap { .. } => Code::JournalSeqGap;
        Self::NoStart { .. } => Code::JournalNoStart;
        Self::ChainBroken { .. } => Code::JournalChainBroken,
            help("each journal line carries the chain value of the line before it (`prev`) and a seal \
                  of its own text made with the key (`key`, `mac`): this line was edited, inserted or \
                  removed after it was written, or a line before it was, or it was written without the \
                  key. spur does not go on from an edited journal: start a new run with `spur run`");
        Self::NewerFormat { .. } => Code::JournalNewerFormat,
            help("use the spur that wrote it, or a newer one");
        Self::Unverifiable { .. } => Code::JournalUnverifiable,
            help("spur does not go on from a journal it cannot verify: restore the key that sealed it \
                  (or point SPUR_KEY_FILE at it), or start a new run with `spur run` (book: Keys)");
    }
}

/// The parsed content of a journal file.
#[derive(Debug, Clone)]
pub struct JournalContent {
    /// The complete records, in order.
    pub records: Vec<Record>,
    /// Length in bytes of the complete lines; a torn tail starts here.
    pub(crate) valid_len: u64,
    /// A final line without its newline was found and ignored.
    pub torn_tail: bool,
    /// The format of the journal's lines (that of its first line).
    pub format: JournalFormat,
    /// The first sealed line whose key is not at hand, if any: the records are read, but
    /// nothing shows they were not rewritten.
    pub unverifiable: Option<Unverifiable>,
    /// Chain value of the last complete line: the `prev` of the next record.
    pub(crate) tip: String,
}

/// The first line of a journal whose seal cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverifiable {
    /// Its seq.
    pub seq: u64,
    /// Why.
    pub why: String,
}

impl JournalContent {
    /// Records kept elsewhere than in a file (a host of its own): nothing to chain.
    pub fn unchained(records: Vec<Record>) -> Self {
        Self {
            records,
            valid_len: 0,
            torn_tail: false,
            format: JournalFormat::Current,
            unverifiable: None,
            tip: String::new(),
        }
    }

    /// The content, or the error that its seals cannot be verified.
    pub(crate) fn verified(self, path: &Path) -> Result<Self, JournalError> {
        match &self.unverifiable {
            None => Ok(self),
            Some(u) => Err(JournalError::Unverifiable {
                path: path.to_path_buf(),
                seq: u.seq,
                why: u.why.clone(),
            }),
        }
    }
}

/// A line as written: the format version, the record, the chain.
#[derive(Serialize)]
struct LineOut<'a> {
    v: u64,
    seq: u64,
    at: &'a str,
    prev: &'a str,
    #[serde(flatten)]
    event: &'a Event,
}

/// A line as read (its version is read first, alone): the chain fields are missing in
/// journals of before format 1, the seal in those of before format 2.
#[derive(Deserialize)]
struct LineIn {
    seq: u64,
    at: String,
    #[serde(default)]
    prev: Option<String>,
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    mac: Option<String>,
    #[serde(flatten)]
    event: Event,
}

/// The most of a journal that is read: far more than any run writes.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Read every complete record, its seal checked with `key`; a final line without `\n` is a
/// torn write and is ignored. A seal whose key is not at hand does not stop the reading:
/// [`JournalContent::unverifiable`] says where it starts.
pub fn read(path: &Path, key: &KeyAtHand) -> Result<JournalContent, JournalError> {
    let bytes = crate::store::bounded_read::read_bounded(path, MAX_JOURNAL_BYTES).map_err(|e| {
        JournalError::Unreadable {
            path: path.to_path_buf(),
            source: e.into(),
        }
    })?;
    parse(path, &bytes, key)
}

fn parse(path: &Path, bytes: &[u8], key: &KeyAtHand) -> Result<JournalContent, JournalError> {
    let valid_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn_tail = valid_len < bytes.len();
    let complete = bytes.get(..valid_len).unwrap_or_default();
    let mut records = Vec::new();
    let mut format = None;
    let mut tip = String::new();
    let mut unverifiable = None;
    for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let corrupt = |message: String| JournalError::Corrupt {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        // The version before the rest: a newer format may have changed the rest.
        let version = line_version(line, FORMAT).map_err(|e| corrupt(e.to_string()))?;
        let line_format = match version {
            LineVersion::Absent => JournalFormat::Unversioned,
            LineVersion::Supported => JournalFormat::Current,
            LineVersion::Unknown(FORMAT_UNSEALED) => JournalFormat::Unkeyed,
            LineVersion::Unknown(found) if found > FORMAT => {
                return Err(JournalError::NewerFormat {
                    path: path.to_path_buf(),
                    found,
                })
            }
            LineVersion::Unknown(found) => return Err(corrupt(unknown_version(found, FORMAT))),
        };
        let parsed: LineIn = serde_json::from_slice(line).map_err(|e| corrupt(e.to_string()))?;
        let format = *format.get_or_insert(line_format);
        let expected = records.last().map_or(1, |r: &Record| r.seq + 1);
        if parsed.seq != expected {
            return Err(JournalError::SeqGap {
                path: path.to_path_buf(),
                previous: expected - 1,
                found: parsed.seq,
            });
        }
        let checked = match format {
            JournalFormat::Unversioned => Ok(None),
            JournalFormat::Unkeyed => chained(line, line_format, &parsed, &tip).map(|()| None),
            JournalFormat::Current => sealed(line, line_format, &parsed, &tip, key),
        };
        match checked {
            Err(what) => {
                return Err(JournalError::ChainBroken {
                    path: path.to_path_buf(),
                    seq: parsed.seq,
                    what,
                })
            }
            Ok(Some(why)) if unverifiable.is_none() => {
                unverifiable = Some(Unverifiable {
                    seq: parsed.seq,
                    why,
                });
            }
            Ok(_) => {}
        }
        tip = chain_value(line);
        records.push(Record {
            seq: parsed.seq,
            at: parsed.at,
            event: parsed.event,
        });
    }
    if !matches!(
        records.first(),
        Some(Record {
            event: Event::RunStarted { .. },
            ..
        })
    ) {
        return Err(JournalError::NoStart {
            path: path.to_path_buf(),
        });
    }
    Ok(JournalContent {
        records,
        valid_len: valid_len as u64,
        torn_tail,
        format: format.unwrap_or(JournalFormat::Current),
        unverifiable,
        tip,
    })
}

/// A line whose version is not its journal's (that of the journal's first line).
fn other_format(found: JournalFormat, journal: JournalFormat) -> Result<(), String> {
    if found == journal {
        return Ok(());
    }
    Err(match found {
        JournalFormat::Unversioned => "it has no format version".to_owned(),
        JournalFormat::Unkeyed => format!(
            "it is an unkeyed line (format {FORMAT_UNSEALED}) in a journal of format {FORMAT}: it was written without the key"
        ),
        JournalFormat::Current => format!(
            "it is a line of format {FORMAT} in a journal of format {FORMAT_UNSEALED}"
        ),
    })
}

/// Whether `line` names `tip` (the chain value of the line before) as its `prev`.
fn follows(parsed: &LineIn, tip: &str) -> Result<(), String> {
    match parsed.prev.as_deref() {
        None => Err("it has no `prev`".to_owned()),
        Some(prev) if prev != tip => Err(if tip.is_empty() {
            format!("its `prev` is {prev:?}, and the first record's is empty")
        } else {
            format!("its `prev` is {prev:?}, the line before it chains to {tip:?}")
        }),
        Some(_) => Ok(()),
    }
}

/// Whether `line` of a keyed journal is the line spur wrote after the line whose chain
/// value is `tip`: of this format, naming `tip` as `prev`, sealed with the key.
/// `Ok(Some(why))` when its seal's key is not at hand.
fn sealed(
    line: &[u8],
    found: JournalFormat,
    parsed: &LineIn,
    tip: &str,
    key: &KeyAtHand,
) -> Result<Option<String>, String> {
    other_format(found, JournalFormat::Current)?;
    follows(parsed, tip)?;
    let seal = find_seal(line)
        .filter(|seal| {
            parsed.key.as_deref() == Some(seal.key_id)
                && parsed.mac.as_deref() == Some(seal.mac)
                && parsed.hash.is_none()
        })
        .ok_or("it is not sealed: its last fields are not its key and its mac")?;
    match seal::check(&seal, key) {
        SealCheck::Valid => Ok(None),
        SealCheck::Unverifiable(why) => Ok(Some(why)),
        SealCheck::Forged => Err(
            "its seal is not the key's MAC of its text: it was edited, or written without the key"
                .to_owned(),
        ),
    }
}

/// Whether `line` of a format-1 journal is the line spur wrote after the line whose hash is
/// `tip`: it has the version, names `tip` as `prev`, and its text has its own `hash`.
fn chained(line: &[u8], found: JournalFormat, parsed: &LineIn, tip: &str) -> Result<(), String> {
    other_format(found, JournalFormat::Unkeyed)?;
    follows(parsed, tip)?;
    let text = std::str::from_utf8(line).map_err(|e| e.to_string())?;
    let own = text
        .rfind(HASH_FIELD)
        .and_then(|at| Some((text.get(..at)?, text.get(at + HASH_FIELD.len()..)?)))
        .and_then(|(body, rest)| Some((body, rest.strip_suffix("\"}")?)));
    match (own, parsed.hash.as_deref()) {
        (Some((body, hash)), Some(field)) if hash == field => {
            let actual = sha256_hex(body.as_bytes());
            if actual == hash {
                Ok(())
            } else {
                Err(format!(
                    "its text hashes to {actual:?}, its `hash` says {hash:?}"
                ))
            }
        }
        _ => Err("it does not end with its own `hash`".to_owned()),
    }
}

/// An open journal, appending records with the next `seq`.
#[derive(Debug)]
pub(crate) struct Journal {
    file: File,
    next_seq: u64,
    durability: Durability,
    /// sha256 of the last line: the next record's `prev`.
    tip: String,
    /// The state of the last state-entered / transition record (for `interrupted`).
    last_state: Option<String>,
    /// An action started and has not finished (a resume would find it ambiguous).
    open_action: bool,
    /// Test hook: SIGKILL this process right after writing this seq (debug builds only).
    kill_after: Option<u64>,
    /// The run's secrets: every event is redacted with them before it is written.
    secrets: RunSecrets,
    /// The key every line is sealed with.
    key: ChainKey,
}

impl Journal {
    /// Create a new journal (the file must not exist yet), its lines sealed with `key`.
    pub(crate) fn create(path: &Path, durability: Durability, key: ChainKey) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)?;
        if durability == Durability::Fsync {
            if let Some(dir) = path.parent() {
                open_directory(dir)?.sync_all()?;
            }
        }
        Ok(Self {
            file,
            next_seq: 1,
            durability,
            tip: String::new(),
            last_state: None,
            open_action: false,
            kill_after: kill_hook(),
            secrets: RunSecrets::default(),
            key,
        })
    }

    /// Reopen a journal to continue it: a torn tail is cut off first, so the next record
    /// starts on a fresh line and no half-written line is ever followed by a good one.
    /// `content` was read and verified with `key`.
    pub(crate) fn reopen(
        path: &Path,
        content: &JournalContent,
        durability: Durability,
        key: ChainKey,
    ) -> io::Result<Self> {
        // Read a moment ago through the bounded reader; a FIFO swapped in since is refused,
        // not waited on.
        let mut options = OpenOptions::new();
        options.append(true);
        let file = open_regular_as(path, options)?;
        if content.torn_tail {
            file.set_len(content.valid_len)?;
            file.sync_all()?;
        }
        Ok(Self {
            file,
            next_seq: content.records.last().map_or(1, |r| r.seq + 1),
            durability,
            tip: content.tip.clone(),
            last_state: content.records.iter().rev().find_map(|r| match &r.event {
                Event::StateEntered { state, .. } => Some(state.clone()),
                Event::Transition { to, .. } => Some(to.clone()),
                _ => None,
            }),
            open_action: content
                .records
                .iter()
                .rev()
                .find_map(|r| match &r.event {
                    Event::ActionStarted { .. } => Some(true),
                    Event::ActionFinished { .. } => Some(false),
                    _ => None,
                })
                .unwrap_or(false),
            kill_after: kill_hook(),
            secrets: RunSecrets::default(),
            key,
        })
    }

    /// Redact every record written from now on with `secrets` (book: *Secrets*).
    pub(crate) fn keep_secrets(&mut self, secrets: RunSecrets) {
        self.secrets = secrets;
    }

    /// The run's secrets, with the values learnt from the records so far.
    pub(crate) fn secrets(&self) -> &RunSecrets {
        &self.secrets
    }

    /// The state most recently entered.
    pub(crate) fn last_state(&self) -> Option<String> {
        self.last_state.clone()
    }

    /// Whether an action started and has not finished.
    pub(crate) fn in_action(&self) -> bool {
        self.open_action
    }

    /// The seq the next record will get.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Append `event`, stamped `at`, with the next seq; durable events are fsync'd before
    /// returning.
    pub(crate) fn append(&mut self, event: Event, at: Timestamp) -> io::Result<Record> {
        let event = self.secrets.event(event);
        let record = Record {
            seq: self.next_seq,
            at: at.rfc3339(),
            event,
        };
        let line = encode(&record, &self.tip, &self.key)?;
        // One write per line: a crash tears at most this line.
        self.file.write_all(&line)?;
        self.tip = chain_value(line.strip_suffix(b"\n").unwrap_or(&line));
        if record.event.is_durable() && self.durability == Durability::Fsync {
            self.file.sync_data()?;
        }
        self.next_seq += 1;
        if let Event::StateEntered { state, .. } | Event::Transition { to: state, .. } =
            &record.event
        {
            self.last_state = Some(state.clone());
        }
        match &record.event {
            Event::ActionStarted { .. } => self.open_action = true,
            Event::ActionFinished { .. } => self.open_action = false,
            _ => {}
        }
        if self.kill_after == Some(record.seq) {
            kill_self();
        }
        Ok(record)
    }
}

/// One JSON line: `{"v":2,"seq":…,"at":…,"prev":…,"event":…,` then the event's own
/// fields, then the seal, `"key"` and `"mac"` (so even the last line cannot be edited
/// without the key).
fn encode(record: &Record, prev: &str, key: &ChainKey) -> io::Result<Vec<u8>> {
    let body = serde_json::to_string(&LineOut {
        v: FORMAT,
        seq: record.seq,
        at: &record.at,
        prev,
        event: &record.event,
    })
    .map_err(io::Error::other)?;
    // A JSON object: drop its closing brace, then close it with the seal.
    let open = body
        .strip_suffix('}')
        .ok_or_else(|| io::Error::other("a journal record is not a JSON object"))?;
    let mut line = seal::seal(open, key).into_bytes();
    line.push(b'\n');
    Ok(line)
}

#[cfg(debug_assertions)]
fn kill_hook() -> Option<u64> {
    std::env::var("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ")
        .ok()
        .and_then(|v| v.parse().ok())
}

#[cfg(not(debug_assertions))]
fn kill_hook() -> Option<u64> {
    None
}

fn kill_self() {
    // SIGKILL, like a crash: no destructors, no flushing, no lock release by us.
    use rustix::process::{getpid, kill_process, Signal};
    let _ = kill_process(getpid(), Signal::KILL);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn key() -> ChainKey {
        ChainKey::fixed(7)
    }

    fn at_hand() -> KeyAtHand {
        KeyAtHand::Key(key())
    }

    fn started() -> Event {
        Event::RunStarted {
            pipeline: "p.yaml".into(),
            pipeline_name: "p".into(),
            pipeline_sha256: "00".into(),
            vars: BTreeMap::new(),
            wbs: None,
            force_done_reason: None,
            policy_sha256: None,
        }
    }

    #[test]
    fn appends_gap_free_seq_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path, Durability::Fsync, key()).unwrap();
        j.append(started(), Timestamp::now()).unwrap();
        j.append(
            Event::StateEntered {
                state: "a".into(),
                iteration: 0,
            },
            Timestamp::now(),
        )
        .unwrap();
        let content = read(&path, &at_hand()).unwrap();
        let seqs: Vec<u64> = content.records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![1, 2]);
        assert!(!content.torn_tail);
        assert_eq!(content.unverifiable, None);
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .contains(r#""event":"run-started""#),
            "{text}"
        );
    }

    #[test]
    fn a_line_is_the_version_seq_at_prev_then_the_event_and_its_fields_then_its_seal() {
        let record = Record {
            seq: 7,
            at: "2026-01-01T00:00:00.000Z".into(),
            event: Event::Transition {
                transition: 2,
                from: "a\"b".into(),
                to: "c".into(),
                iteration: 3,
            },
        };
        let prev = "ab".repeat(32);
        let line = String::from_utf8(encode(&record, &prev, &key()).unwrap()).unwrap();
        let body = format!(
            "{{\"v\":2,\"seq\":7,\"at\":\"2026-01-01T00:00:00.000Z\",\"prev\":\"{prev}\",\"event\":\"transition\",\"transition\":2,\"from\":\"a\\\"b\",\"to\":\"c\",\"iteration\":3,\"key\":\"{}\"",
            key().id()
        );
        let mac = key().mac_hex(body.as_bytes());
        assert_eq!(line, format!("{body},\"mac\":\"{mac}\"}}\n"));
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, record);
    }

    /// A journal of three records, as written.
    fn written() -> (tempfile::TempDir, PathBuf, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path, Durability::Unsafe, key()).unwrap();
        j.append(started(), Timestamp::now()).unwrap();
        for state in ["a", "b"] {
            let entered = Event::StateEntered {
                state: state.into(),
                iteration: 0,
            };
            j.append(entered, Timestamp::now()).unwrap();
        }
        let lines = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        (dir, path, lines)
    }

    fn write_lines(path: &Path, lines: &[String]) {
        fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    #[test]
    fn each_line_is_chained_to_the_mac_of_the_one_before_it() {
        let (_dir, path, lines) = written();
        let content = read(&path, &at_hand()).unwrap();
        assert_eq!(content.format, JournalFormat::Current);
        assert_eq!(content.tip, chain_value(lines[2].as_bytes()));
        assert!(lines[0].contains(r#""prev":"""#), "{}", lines[0]);
        let prev = format!(r#""prev":"{}""#, chain_value(lines[0].as_bytes()));
        assert!(lines[1].contains(&prev), "{}", lines[1]);
    }

    #[test]
    fn an_edited_removed_or_inserted_line_breaks_the_chain_at_its_seq() {
        let (_dir, path, lines) = written();
        let broken = |lines: &[String]| {
            write_lines(&path, lines);
            match read(&path, &at_hand()) {
                Err(JournalError::ChainBroken { seq, what, .. }) => (seq, what),
                other => panic!("expected a broken chain, got {other:?}"),
            }
        };
        // The last line edited: its seal no longer matches.
        let mut edited = lines.clone();
        edited[2] = edited[2].replace(r#""state":"b""#, r#""state":"x""#);
        let (seq, what) = broken(&edited);
        assert_eq!(seq, 3);
        assert!(what.contains("seal is not the key's MAC"), "{what}");
        // A middle line edited and sealed again: the next line's prev no longer matches.
        let mut resealed = lines.clone();
        let record: Record = serde_json::from_str(&lines[1]).unwrap();
        let prev = chain_value(lines[0].as_bytes());
        let mut forged = record.clone();
        forged.event = Event::StateEntered {
            state: "x".into(),
            iteration: 0,
        };
        resealed[1] = String::from_utf8(encode(&forged, &prev, &key()).unwrap())
            .unwrap()
            .trim_end()
            .to_owned();
        assert_eq!(broken(&resealed).0, 3);
        // A line removed: a seq gap; one inserted without the chain: no prev.
        write_lines(&path, &[lines[0].clone(), lines[2].clone()]);
        assert!(matches!(
            read(&path, &at_hand()),
            Err(JournalError::SeqGap { .. })
        ));
        let plain = r#"{"seq":4,"at":"t","event":"state-entered","state":"z","iteration":0}"#;
        let mut inserted = lines.clone();
        inserted.push(plain.to_owned());
        let (seq, what) = broken(&inserted);
        assert_eq!(seq, 4);
        assert!(what.contains("format version"), "{what}");
    }

    /// The journal rewritten whole as a spur before keyed chains wrote it: every line
    /// chained by plain sha256, `hash` last (format 1).
    fn as_format_one(lines: &[String]) -> Vec<String> {
        let mut tip = String::new();
        lines
            .iter()
            .map(|line| {
                let record: Record = serde_json::from_str(line).unwrap();
                let mut body = serde_json::to_string(&LineOut {
                    v: FORMAT_UNSEALED,
                    seq: record.seq,
                    at: &record.at,
                    prev: &tip,
                    event: &record.event,
                })
                .unwrap();
                body.pop();
                let hash = sha256_hex(body.as_bytes());
                let out = format!("{body}{HASH_FIELD}{hash}\"}}");
                tip = sha256_hex(out.as_bytes());
                out
            })
            .collect()
    }

    #[test]
    fn a_journal_rewritten_whole_with_a_sha256_chain_reads_as_unkeyed() {
        let (_dir, path, lines) = written();
        let rewritten = as_format_one(&lines);
        write_lines(&path, &rewritten);
        let content = read(&path, &at_hand()).unwrap();
        assert_eq!(content.format, JournalFormat::Unkeyed);
        assert_eq!(content.records.len(), 3);
        // Mixed into a keyed journal, an unkeyed line breaks it.
        let mut mixed = lines.clone();
        mixed[2] = as_format_one(&lines)[2].clone();
        write_lines(&path, &mixed);
        match read(&path, &at_hand()) {
            Err(JournalError::ChainBroken { seq: 3, what, .. }) => {
                assert!(what.contains("unkeyed line"), "{what}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_the_key_a_journal_reads_and_is_unverifiable() {
        let (_dir, path, _lines) = written();
        for key in [
            KeyAtHand::Missing { file: "/k".into() },
            KeyAtHand::Key(ChainKey::fixed(8)),
        ] {
            let content = read(&path, &key).unwrap();
            assert_eq!(content.records.len(), 3);
            let u = content.unverifiable.clone().unwrap();
            assert_eq!(u.seq, 1);
            assert!(matches!(
                content.verified(&path),
                Err(JournalError::Unverifiable { seq: 1, .. })
            ));
        }
    }

    #[test]
    fn a_newer_format_is_named_not_misread() {
        let (_dir, path, mut lines) = written();
        lines[1] = r#"{"v":3,"seq":2,"at":"t","event":"something-new"}"#.to_owned();
        write_lines(&path, &lines);
        assert!(matches!(
            read(&path, &at_hand()),
            Err(JournalError::NewerFormat { found: 3, .. })
        ));
        lines[1] = lines[1].replace(r#""v":3"#, r#""v":0"#);
        write_lines(&path, &lines);
        match read(&path, &at_hand()) {
            Err(JournalError::Corrupt {
                line: 2, message, ..
            }) => {
                assert!(message.contains("not one spur writes"), "{message}")
            }
            other => panic!("expected a corrupt line, got {other:?}"),
        }
    }

    #[test]
    fn a_journal_without_versions_reads_as_unversioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let line = serde_json::to_string(&Record {
            seq: 1,
            at: "t".into(),
            event: started(),
        })
        .unwrap();
        fs::write(&path, format!("{line}\n")).unwrap();
        let content = read(&path, &at_hand()).unwrap();
        assert_eq!(content.format, JournalFormat::Unversioned);
        assert_eq!(content.records.len(), 1);
    }

    #[test]
    fn ignores_a_torn_last_line_and_cuts_it_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path, Durability::Unsafe, key()).unwrap();
        j.append(started(), Timestamp::now()).unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"seq":2,"at":"x","event":"state-ent"#)
            .unwrap();
        drop(f);
        let content = read(&path, &at_hand()).unwrap();
        assert_eq!(content.records.len(), 1);
        assert!(content.torn_tail);
        let mut j = Journal::reopen(&path, &content, Durability::Unsafe, key()).unwrap();
        let r = j
            .append(Event::Interrupted { state: "a".into() }, Timestamp::now())
            .unwrap();
        assert_eq!(r.seq, 2);
        let again = read(&path, &at_hand()).unwrap();
        assert_eq!(again.records.len(), 2);
        assert!(!again.torn_tail);
    }

    #[test]
    fn rejects_a_damaged_middle_line_and_a_gap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let line1 = serde_json::to_string(&Record {
            seq: 1,
            at: "t".into(),
            event: started(),
        })
        .unwrap();
        fs::write(&path, format!("{line1}\nnot json\n")).unwrap();
        assert!(matches!(
            read(&path, &at_hand()),
            Err(JournalError::Corrupt { line: 2, .. })
        ));
        let line3 = line1.replace(r#""seq":1"#, r#""seq":3"#);
        fs::write(&path, format!("{line1}\n{line3}\n")).unwrap();
        assert!(matches!(
            read(&path, &at_hand()),
            Err(JournalError::SeqGap { found: 3, .. })
        ));
    }
}
