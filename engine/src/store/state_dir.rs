//! The state directory (`.spur/`): found like git finds `.git`, or given explicitly.
//! Knows the layout of the state directory so no other module builds these paths by hand.

use std::path::{Path, PathBuf};

use crate::store::chain_key::KeyFile;
use crate::wbs::Wbs;

/// The most of `.spur/config.yaml` its readers read: it is a few keys of hand-written YAML.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The root of spur's state (`.spur/`) and the paths inside it, and where the key of its
/// chains lives (outside it: see `store::chain_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
    key_file: KeyFile,
}

impl StateDir {
    /// `explicit` when given (`--state-dir`), else the nearest `.spur/` found walking up
    /// from `cwd`, else `cwd/.spur`.
    pub fn resolve(explicit: Option<&Path>, cwd: &Path) -> Self {
        if let Some(dir) = explicit {
            let root = if dir.is_absolute() {
                dir.to_path_buf()
            } else {
                cwd.join(dir)
            };
            return Self::at(root);
        }
        let found = cwd
            .ancestors()
            .map(|d| d.join(".spur"))
            .find(|candidate| candidate.is_dir());
        Self::at(found.unwrap_or_else(|| cwd.join(".spur")))
    }

    /// The state directory at `root` (`.spur/` of a project, usually), with the key file
    /// the environment names ([`KeyFile::from_env`]).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let key_file = default_key_file(&root);
        Self { root, key_file }
    }

    /// The same state directory with its chains keyed by the key in `key_file`.
    pub fn with_key_file(mut self, key_file: KeyFile) -> Self {
        self.key_file = key_file;
        self
    }

    /// Where the key of its chains lives.
    pub fn key_file(&self) -> &KeyFile {
        &self.key_file
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project root: the directory that holds `.spur/`.
    pub fn project_root(&self) -> &Path {
        self.root.parent().unwrap_or(Path::new("."))
    }

    /// `.spur/run/`: task artifacts the corpus expects (verdicts, status files).
    pub fn run_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// `.spur/run/<wbs>-verdict.json`.
    pub fn verdict_path(&self, wbs: &Wbs) -> PathBuf {
        self.run_dir().join(format!("{wbs}-verdict.json"))
    }

    /// `.spur/runs/`: one folder per run.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// `.spur/tasks/`: the task views (and task files that live in the state dir).
    pub(crate) fn tasks_dir(&self) -> PathBuf {
        self.root.join("tasks")
    }

    /// `.spur/tasks/<wbs>.json`: the task's status view, rewritten from its ledger.
    pub(crate) fn task_path(&self, wbs: &Wbs) -> PathBuf {
        self.tasks_dir().join(format!("{wbs}.json"))
    }

    /// `<state>/ledger/tasks/`: one task ledger per task.
    pub fn task_ledgers_dir(&self) -> PathBuf {
        self.root.join("ledger").join("tasks")
    }

    /// `<state>/ledger/tasks/<wbs>.jsonl`: the task ledger, the one record of its status.
    pub fn task_ledger_path(&self, wbs: &Wbs) -> PathBuf {
        self.task_ledgers_dir().join(format!("{wbs}.jsonl"))
    }

    /// `<state>/ledger/usage/`: one usage ledger per task, beside the task ledgers (and
    /// wherever they move).
    pub fn usage_ledgers_dir(&self) -> PathBuf {
        self.task_ledgers_dir().with_file_name("usage")
    }

    /// `<state>/ledger/usage/<wbs>.jsonl`: what the task's steps spent, over all its runs.
    pub fn usage_ledger_path(&self, wbs: &Wbs) -> PathBuf {
        self.usage_ledgers_dir().join(format!("{wbs}.jsonl"))
    }

    /// `.spur/audit.jsonl`.
    pub fn audit_path(&self) -> PathBuf {
        self.root.join("audit.jsonl")
    }

    /// `.spur/locks/<wbs>.lock`.
    pub(crate) fn lock_path(&self, wbs: &Wbs) -> PathBuf {
        self.root.join("locks").join(format!("{wbs}.lock"))
    }

    /// `.spur/locks/data/<wbs>.lock`: the short per-task data lock (see
    /// `store::data_lock`). In a folder of its own: no run lock (`<wbs>.lock`) or verify
    /// lock (`<scope>-verify.lock`) of any wbs can have its name.
    pub(crate) fn data_lock_path(&self, wbs: &Wbs) -> PathBuf {
        self.root
            .join("locks")
            .join("data")
            .join(format!("{wbs}.lock"))
    }

    /// `.spur/config.yaml`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.yaml")
    }

    /// `.spur/policies/`: snapshots of the gate's policy, each named by its sha256.
    pub fn policies_dir(&self) -> PathBuf {
        self.root.join("policies")
    }

    /// `.spur/policies/<sha256>.json`.
    pub(crate) fn policy_path(&self, sha256: &str) -> PathBuf {
        self.policies_dir().join(format!("{sha256}.json"))
    }
}

/// The environment's key file; in the engine's own unit tests a file in the state
/// directory, so that no test ever reads or makes the key of the user running it.
#[cfg(not(test))]
fn default_key_file(_root: &Path) -> KeyFile {
    KeyFile::from_env()
}

#[cfg(test)]
fn default_key_file(root: &Path) -> KeyFile {
    KeyFile::at(root.join("test-key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nearest_spur_dir_walking_up() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".spur")).unwrap();
        let deep = tmp.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            StateDir::resolve(None, &deep).root(),
            tmp.path().join(".spur")
        );
    }

    #[test]
    fn defaults_to_cwd_and_honours_explicit() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            StateDir::resolve(None, tmp.path()).root(),
            tmp.path().join(".spur")
        );
        assert_eq!(
            StateDir::resolve(Some(Path::new("st")), tmp.path()).root(),
            tmp.path().join("st")
        );
    }
}
