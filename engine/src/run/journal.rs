//! The run journal (ARCHITECTURE.md, *Durability*): `.spur/runs/<run-id>/journal.jsonl`, append-only JSON lines
//! with a gap-free `seq`. Records that guard a side effect are fsync'd before the effect
//! happens; the rest ride along with the next fsync (one file, appended in order, so a
//! crash can lose only a tail, never a middle line). Reading ignores a torn last line.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::event::{Event, PauseKind, Phase};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::timestamp::Timestamp;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub seq: u64,
    pub at: String,
    #[serde(flatten)]
    pub event: Event,
}

/// Whether durable records are fsync'd. `Unsafe` exists for benchmarks (and
/// `SPUR_JOURNAL_FSYNC=0`): a power loss may then lose committed transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    #[default]
    Fsync,
    Unsafe,
}

/// Reading a journal failed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot read journal {path}: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("journal {path} line {line} is not a journal record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("journal {path} has a gap: seq {found} follows seq {previous}")]
    SeqGap {
        path: PathBuf,
        previous: u64,
        found: u64,
    },
    #[error("journal {path} is empty or does not start with run-started")]
    NoStart { path: PathBuf },
}

coded_diagnostic! {
    JournalError {
        Self::Unreadable { .. } => Code::JournalUnreadable;
        Self::Corrupt { .. } => Code::JournalCorrupt,
            help("only a torn last line is tolerated; a damaged middle line means the file was edited");
        Self::SeqGap { .. } => Code::JournalSeqGap;
        Self::NoStart { .. } => Code::JournalNoStart;
    }
}

/// The parsed content of a journal file.
#[derive(Debug, Clone)]
pub struct JournalContent {
    pub records: Vec<Record>,
    /// Length in bytes of the complete lines; a torn tail starts here.
    pub valid_len: u64,
    /// A final line without its newline was found and ignored.
    pub torn_tail: bool,
}

/// The most of a journal that is read: far more than any run writes.
const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Read every complete record; a final line without `\n` is a torn write and is ignored.
pub fn read(path: &Path) -> Result<JournalContent, JournalError> {
    let bytes = crate::store::bounded_read::read_bounded(path, MAX_JOURNAL_BYTES).map_err(|e| {
        JournalError::Unreadable {
            path: path.to_path_buf(),
            source: e.into(),
        }
    })?;
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<JournalContent, JournalError> {
    let valid_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn_tail = valid_len < bytes.len();
    let complete = bytes.get(..valid_len).unwrap_or_default();
    let mut records = Vec::new();
    for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let record: Record = serde_json::from_slice(line).map_err(|e| JournalError::Corrupt {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        let expected = records.last().map_or(1, |r: &Record| r.seq + 1);
        if record.seq != expected {
            return Err(JournalError::SeqGap {
                path: path.to_path_buf(),
                previous: expected - 1,
                found: record.seq,
            });
        }
        records.push(record);
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
    })
}

/// An open journal, appending records with the next `seq`.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    next_seq: u64,
    durability: Durability,
    /// The state of the last state-entered / transition record (for `interrupted`).
    last_state: Option<String>,
    /// Test hook: SIGKILL this process right after writing this seq (debug builds only).
    kill_after: Option<u64>,
}

impl Journal {
    /// Create a new journal (the file must not exist yet).
    pub fn create(path: &Path, durability: Durability) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)?;
        if durability == Durability::Fsync {
            if let Some(dir) = path.parent() {
                File::open(dir)?.sync_all()?;
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            next_seq: 1,
            durability,
            last_state: None,
            kill_after: kill_hook(),
        })
    }

    /// Reopen a journal to continue it: a torn tail is cut off first, so the next record
    /// starts on a fresh line and no half-written line is ever followed by a good one.
    pub fn reopen(
        path: &Path,
        content: &JournalContent,
        durability: Durability,
    ) -> io::Result<Self> {
        let file = OpenOptions::new().append(true).open(path)?;
        if content.torn_tail {
            file.set_len(content.valid_len)?;
            file.sync_all()?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            next_seq: content.records.last().map_or(1, |r| r.seq + 1),
            durability,
            last_state: content.records.iter().rev().find_map(|r| match &r.event {
                Event::StateEntered { state, .. } => Some(state.clone()),
                Event::Transition { to, .. } => Some(to.clone()),
                _ => None,
            }),
            kill_after: kill_hook(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state most recently entered.
    pub fn last_state(&self) -> Option<String> {
        self.last_state.clone()
    }

    /// The seq the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Append `event`, stamped `at`, with the next seq; durable events are fsync'd before
    /// returning.
    pub fn append(&mut self, event: Event, at: Timestamp) -> io::Result<Record> {
        let record = Record {
            seq: self.next_seq,
            at: at.rfc3339(),
            event,
        };
        let line = encode(&record)?;
        // One write per line: a crash tears at most this line.
        self.file.write_all(&line)?;
        if record.event.is_durable() && self.durability == Durability::Fsync {
            self.file.sync_data()?;
        }
        self.next_seq += 1;
        if let Event::StateEntered { state, .. } | Event::Transition { to: state, .. } =
            &record.event
        {
            self.last_state = Some(state.clone());
        }
        if self.kill_after == Some(record.seq) {
            kill_self();
        }
        Ok(record)
    }
}

/// One JSON line: `{"seq":…,"at":…,"event":…,` then the event's own fields.
fn encode(record: &Record) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
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
    // SAFETY: kill(2) on our own pid with a valid signal number has no memory effects.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn started() -> Event {
        Event::RunStarted {
            pipeline: "p.yaml".into(),
            pipeline_name: "p".into(),
            pipeline_sha256: "00".into(),
            vars: BTreeMap::new(),
            wbs: None,
            force_done_reason: None,
        }
    }

    #[test]
    fn appends_gap_free_seq_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path, Durability::Fsync).unwrap();
        j.append(started(), Timestamp::now()).unwrap();
        j.append(
            Event::StateEntered {
                state: "a".into(),
                iteration: 0,
            },
            Timestamp::now(),
        )
        .unwrap();
        let content = read(&path).unwrap();
        let seqs: Vec<u64> = content.records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![1, 2]);
        assert!(!content.torn_tail);
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
    fn a_line_is_seq_and_at_then_the_event_and_its_fields() {
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
        let line = encode(&record).unwrap();
        assert_eq!(
            String::from_utf8(line.clone()).unwrap(),
            "{\"seq\":7,\"at\":\"2026-01-01T00:00:00.000Z\",\"event\":\"transition\",\"transition\":2,\"from\":\"a\\\"b\",\"to\":\"c\",\"iteration\":3}\n"
        );
        let back: Record = serde_json::from_slice(&line).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn ignores_a_torn_last_line_and_cuts_it_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = Journal::create(&path, Durability::Unsafe).unwrap();
        j.append(started(), Timestamp::now()).unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"seq":2,"at":"x","event":"state-ent"#)
            .unwrap();
        drop(f);
        let content = read(&path).unwrap();
        assert_eq!(content.records.len(), 1);
        assert!(content.torn_tail);
        let mut j = Journal::reopen(&path, &content, Durability::Unsafe).unwrap();
        let r = j
            .append(Event::Interrupted { state: "a".into() }, Timestamp::now())
            .unwrap();
        assert_eq!(r.seq, 2);
        let again = read(&path).unwrap();
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
            read(&path),
            Err(JournalError::Corrupt { line: 2, .. })
        ));
        let line3 = line1.replace(r#""seq":1"#, r#""seq":3"#);
        fs::write(&path, format!("{line1}\n{line3}\n")).unwrap();
        assert!(matches!(
            read(&path),
            Err(JournalError::SeqGap { found: 3, .. })
        ));
    }
}
