//! The done gate's state on a fleet (book: *Running a fleet*, *What lives where*). A run on
//! a durable-execution engine keeps its task's ledger, its verdict artifact and the audit
//! chain on the engine's server, not in the `.spur/` of the worker that runs a step: the
//! worker's local protected state is never read as evidence, and no step can write the
//! server's records (they are not files).
//!
//! The seam is [`FleetRecords`] (what the server holds for a task, read through the
//! run's journal, so a replay reads the same) and [`FleetWrite`] (what a writer of the
//! run appended, sent back to the server's handlers). Between them a [`Shadow`]: a private
//! directory made for one writer — a step's `spur task verdict|verify` call, or the gate —
//! seeded with the server's records, in which spur's own file code (the ledger, the gate,
//! the audit log) runs unchanged; what it appended there is read back and the directory
//! removed. Records keep the shapes and seals of the local ones.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::{Durability, Journal, Record};
use crate::policy::Policy;
use crate::store::chain_key::key_for_writing;
use crate::store::state_dir::{protected_dir_in, StateDir};
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;

/// What the server holds for one task: its ledger's lines (as the local ledger file holds
/// them), the verdict artifact spur last wrote for it, and the project's audit chain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetRecords {
    /// The task ledger, one JSON line each (sealed as written).
    pub ledger: Vec<String>,
    /// The text of the task's verdict artifact, when one was written in a run.
    pub artifact: Option<String>,
    /// The audit chain, one JSON line each.
    #[serde(default)]
    pub audit: Vec<String>,
}

/// What one writer appended, for the server's handlers: lines that follow the first
/// `after` lines of the ledger (and of the audit chain), refused by the server when its
/// records have moved on since.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetWrite {
    /// How many ledger lines the writer started from.
    pub after: usize,
    /// The ledger lines it appended.
    pub lines: Vec<String>,
    /// The artifact it wrote (the server keeps the last).
    pub artifact: Option<String>,
    /// How many audit lines the writer started from.
    #[serde(default)]
    pub audit_after: usize,
    /// The audit lines it appended.
    #[serde(default)]
    pub audit: Vec<String>,
}

impl FleetWrite {
    /// Whether there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.artifact.is_none() && self.audit.is_empty()
    }
}

impl FleetRecords {
    /// The records once `write` is applied (as the server applies it).
    pub(crate) fn apply(&mut self, write: &FleetWrite) {
        self.ledger.extend(write.lines.iter().cloned());
        if write.artifact.is_some() {
            self.artifact.clone_from(&write.artifact);
        }
        self.audit.extend(write.audit.iter().cloned());
    }
}

/// A private protected state for one writer, seeded with a task's server records.
pub(crate) struct Shadow {
    /// Removed on drop.
    _dir: tempfile::TempDir,
    /// The `XDG_STATE_HOME` of the writer (spur's calls from steps get it).
    home: PathBuf,
    /// The project's state directory with its protected state in the shadow.
    state: StateDir,
    wbs: Wbs,
    ledger_seeded: usize,
    audit_seeded: usize,
}

impl Shadow {
    /// A new shadow of `real` for task `wbs`, holding `records`, the run's `run-started`
    /// record (so a step's spur call finds the run's pinned policy) and the policy.
    pub(crate) fn new(
        real: &StateDir,
        wbs: &Wbs,
        records: &FleetRecords,
        run: Option<(&super::RunId, &Record)>,
        policy: Option<&Policy>,
    ) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("spur-fleet-").tempdir()?;
        let home = dir.path().join("state");
        let protected = protected_dir_in(Some(&home), real.root());
        let state = real.clone().with_protected_dir(&protected);
        std::fs::create_dir_all(state.task_ledgers_dir())?;
        write_lines(&state.task_ledger_path(wbs), &records.ledger)?;
        write_lines(&state.audit_path(), &records.audit)?;
        if let Some(policy) = policy {
            policy.store(&state).map_err(std::io::Error::other)?;
        }
        if let Some((run_id, started)) = run {
            let run_dir = run_id.dir_in(&state);
            std::fs::create_dir_all(&run_dir)?;
            let key = key_for_writing(&state).map_err(std::io::Error::other)?;
            let mut journal =
                Journal::create(&run_dir.join("journal.jsonl"), Durability::Unsafe, key)?;
            let at = Timestamp::parse(&started.at).unwrap_or_else(Timestamp::now);
            journal.append(started.event.clone(), at)?;
        }
        Ok(Self {
            _dir: dir,
            home,
            state,
            wbs: wbs.clone(),
            ledger_seeded: records.ledger.len(),
            audit_seeded: records.audit.len(),
        })
    }

    /// The state directory whose protected state is the shadow.
    pub(crate) fn state(&self) -> &StateDir {
        &self.state
    }

    /// The `XDG_STATE_HOME` that puts a spur process's protected state in the shadow.
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    /// What was appended since the shadow was made; the artifact when a `verdict-written`
    /// record was, read from the project's `.spur/run/` where spur wrote it.
    pub(crate) fn written(&self) -> std::io::Result<FleetWrite> {
        let ledger = read_lines(&self.state.task_ledger_path(&self.wbs))?;
        let audit = read_lines(&self.state.audit_path())?;
        let lines: Vec<String> = ledger.into_iter().skip(self.ledger_seeded).collect();
        let wrote_verdict = lines.iter().any(|l| {
            serde_json::from_str::<crate::store::ledger_record::LedgerRecord>(l)
                .is_ok_and(|r| r.verdict_written().is_some())
        });
        let artifact = if wrote_verdict {
            Some(std::fs::read_to_string(self.state.verdict_path(&self.wbs))?)
        } else {
            None
        };
        Ok(FleetWrite {
            after: self.ledger_seeded,
            lines,
            artifact,
            audit_after: self.audit_seeded,
            audit: audit.into_iter().skip(self.audit_seeded).collect(),
        })
    }
}

/// Put the server's artifact where the gate reads it (`.spur/run/<wbs>-verdict.json`),
/// or remove the file there when the server holds none: on a fleet the worker's own file
/// is never evidence.
pub(crate) fn restore_artifact(
    state: &StateDir,
    wbs: &Wbs,
    artifact: Option<&str>,
) -> std::io::Result<()> {
    let path = state.verdict_path(wbs);
    match artifact {
        Some(text) => {
            std::fs::create_dir_all(state.run_dir())?;
            crate::store::atomic_file::write_atomic(&path, text.as_bytes())
        }
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// The worker's task view (`.spur/tasks/<wbs>.json`) as it was before the gate, which
/// rewrites it from the ledger it reads (the server's): put back after, so the worker's
/// checkout keeps the view of its own ledger.
pub(crate) struct KeptView {
    path: PathBuf,
    bytes: Option<Vec<u8>>,
}

impl KeptView {
    pub(crate) fn keep(state: &StateDir, wbs: &Wbs) -> Self {
        let path = state.task_path(wbs);
        let bytes = std::fs::read(&path).ok();
        Self { path, bytes }
    }

    /// Best effort: a view that disagrees with its ledger is reported by `spur audit
    /// verify` and rewritten at the next change, never read as a status.
    pub(crate) fn put_back(self) {
        let _ = match &self.bytes {
            Some(bytes) => crate::store::atomic_file::write_atomic(&self.path, bytes),
            None => std::fs::remove_file(&self.path),
        };
    }
}

/// Lay out a chain's `lines` (a ledger, the audit log) as spur keeps them, one per line;
/// nothing when there are none. Also used where the CLI reads a fleet's records
/// (`spur task show|audit verify --engine restate`).
pub fn write_lines(path: &Path, lines: &[String]) -> std::io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text)
}

fn read_lines(path: &Path) -> std::io::Result<Vec<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .map(|l| l.trim_end_matches('\n').to_owned())
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(path: &Path, line: &str) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap();
        writeln!(file, "{line}").unwrap();
    }

    #[test]
    fn a_shadow_holds_the_servers_records_and_gives_back_only_what_was_appended() {
        let dir = tempfile::tempdir().unwrap();
        let real = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        let records = FleetRecords {
            ledger: vec![r#"{"seq":0}"#.to_owned()],
            artifact: Some("{}".to_owned()),
            audit: vec![r#"{"a":0}"#.to_owned()],
        };
        let shadow = Shadow::new(&real, &wbs, &records, None, None).unwrap();
        assert!(
            !real.task_ledger_path(&wbs).exists(),
            "the worker's own state"
        );
        let ledger = shadow.state().task_ledger_path(&wbs);
        assert!(ledger.starts_with(shadow.home()));
        assert_eq!(read_lines(&ledger).unwrap(), records.ledger);
        assert_eq!(
            shadow.written().unwrap(),
            FleetWrite {
                after: 1,
                audit_after: 1,
                ..FleetWrite::default()
            }
        );
        append(&ledger, r#"{"seq":1}"#);
        append(&shadow.state().audit_path(), r#"{"a":1}"#);
        let written = shadow.written().unwrap();
        assert_eq!(written.lines, vec![r#"{"seq":1}"#.to_owned()]);
        assert_eq!(written.audit, vec![r#"{"a":1}"#.to_owned()]);
        // No verdict-written record: the project's artifact is not sent.
        assert_eq!(written.artifact, None);
        let mut applied = records.clone();
        applied.apply(&written);
        assert_eq!(applied.ledger.len(), 2);
        assert_eq!(applied.artifact, records.artifact, "kept when none is sent");
        let home = shadow.home().to_path_buf();
        drop(shadow);
        assert!(!home.exists(), "the shadow is removed");
    }

    #[test]
    fn the_servers_artifact_replaces_the_workers_and_none_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(real.run_dir()).unwrap();
        std::fs::write(real.verdict_path(&wbs), "forged").unwrap();
        restore_artifact(&real, &wbs, Some("the server's")).unwrap();
        assert_eq!(
            std::fs::read_to_string(real.verdict_path(&wbs)).unwrap(),
            "the server's"
        );
        restore_artifact(&real, &wbs, None).unwrap();
        assert!(!real.verdict_path(&wbs).exists());
        restore_artifact(&real, &wbs, None).unwrap();
    }

    #[test]
    fn a_kept_view_is_put_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let real = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(real.tasks_dir()).unwrap();
        let missing = KeptView::keep(&real, &wbs);
        std::fs::write(real.task_path(&wbs), "rewritten").unwrap();
        missing.put_back();
        assert!(!real.task_path(&wbs).exists());
        std::fs::write(real.task_path(&wbs), "mine").unwrap();
        let kept = KeptView::keep(&real, &wbs);
        std::fs::write(real.task_path(&wbs), "rewritten").unwrap();
        kept.put_back();
        assert_eq!(
            std::fs::read_to_string(real.task_path(&wbs)).unwrap(),
            "mine"
        );
    }
}
