//! The state directory (`.spur/`): found like git finds `.git`, or given explicitly.
//! Knows the layout of spur's state so no other module builds these paths by hand.
//!
//! Two places: `.spur/` in the project holds what steps and people are meant to write
//! (`run/`'s artifacts, the task views, `config.yaml`, locks); the **protected state** —
//! task ledgers, run and lifecycle journals, the audit log, policy snapshots and the
//! approved policy — lives outside the project, in
//! `$XDG_STATE_HOME/spur/projects/<name>-<hash>/` (else `~/.local/state/…`), beside the
//! key, so that a sandbox granting steps the project tree keeps them out of it (Landlock
//! grants whole hierarchies; ARCHITECTURE.md, *Sandbox*).

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
    protected: PathBuf,
    key_file: KeyFile,
    /// The tree a run works in when it is not the one holding `.spur/`: a run's git
    /// worktree (`spur run --worktree`; see `run::git_worktree`).
    tree: Option<PathBuf>,
}

/// Set by a run's socket for the spur calls of its steps when the run works in a git
/// worktree: the tree those calls read (task files, fingerprint), the state staying
/// the project's.
pub const RUN_TREE_VAR: &str = "SPUR_RUN_TREE";

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
            return Self::at(root).with_tree_from_env();
        }
        let found = cwd
            .ancestors()
            .map(|d| d.join(".spur"))
            .find(|candidate| candidate.is_dir());
        Self::at(found.unwrap_or_else(|| cwd.join(".spur"))).with_tree_from_env()
    }

    /// [`RUN_TREE_VAR`], when set to an absolute directory.
    fn with_tree_from_env(self) -> Self {
        match std::env::var_os(RUN_TREE_VAR).map(PathBuf::from) {
            Some(tree) if tree.is_absolute() && tree.is_dir() => self.with_tree(tree),
            _ => self,
        }
    }

    /// The same state with the run's tree at `tree` (its git worktree): steps' cwd, task
    /// and feature files, the fingerprint are there; config, artifacts and the protected
    /// state stay where they are.
    pub fn with_tree(mut self, tree: impl Into<PathBuf>) -> Self {
        self.tree = Some(tree.into());
        self
    }

    /// The tree set by [`Self::with_tree`], if any.
    pub fn tree(&self) -> Option<&Path> {
        self.tree.as_deref()
    }

    /// The state directory at `root` (`.spur/` of a project, usually), with the key file
    /// the environment names ([`KeyFile::from_env`]).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let key_file = default_key_file(&root);
        let protected = default_protected_dir(&root);
        Self {
            root,
            protected,
            key_file,
            tree: None,
        }
    }

    /// The same state directory with its protected state in `dir` (a test's temp dir).
    pub fn with_protected_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.protected = dir.into();
        self
    }

    /// Where the protected state lives: `<state home>/spur/projects/<name>-<hash>/`.
    pub fn protected_dir(&self) -> &Path {
        &self.protected
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

    /// The project root: the directory that holds `.spur/`, or the run's worktree when
    /// it works in one ([`Self::with_tree`]).
    pub fn project_root(&self) -> &Path {
        match &self.tree {
            Some(tree) => tree,
            None => self.checkout_root(),
        }
    }

    /// The directory that holds `.spur/`, whatever tree a run works in.
    pub fn checkout_root(&self) -> &Path {
        self.root.parent().unwrap_or(Path::new("."))
    }

    /// `.spur/worktrees/`: the git worktrees of `spur run --worktree` (ignored by git).
    pub fn worktrees_dir(&self) -> PathBuf {
        self.root.join("worktrees")
    }

    /// `.spur/run/`: task artifacts the corpus expects (verdicts, status files).
    pub fn run_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// `.spur/run/<wbs>-verdict.json`.
    pub fn verdict_path(&self, wbs: &Wbs) -> PathBuf {
        self.run_dir().join(format!("{wbs}-verdict.json"))
    }

    /// `<protected>/runs/`: one folder per run (journal, action logs).
    pub fn runs_dir(&self) -> PathBuf {
        self.protected.join("runs")
    }

    /// `<protected>/lifecycles/`: the journals of lifecycle instances.
    pub(crate) fn lifecycles_dir(&self) -> PathBuf {
        self.protected.join("lifecycles")
    }

    /// `.spur/tasks/`: the task views (and task files that live in the state dir).
    pub(crate) fn tasks_dir(&self) -> PathBuf {
        self.root.join("tasks")
    }

    /// `.spur/tasks/<wbs>.json`: the task's status view, rewritten from its ledger.
    pub(crate) fn task_path(&self, wbs: &Wbs) -> PathBuf {
        self.tasks_dir().join(format!("{wbs}.json"))
    }

    /// `<protected>/ledger/tasks/`: one task ledger per task.
    pub fn task_ledgers_dir(&self) -> PathBuf {
        self.protected.join("ledger").join("tasks")
    }

    /// `<protected>/ledger/tasks/<wbs>.jsonl`: the task ledger, the one record of its status.
    pub fn task_ledger_path(&self, wbs: &Wbs) -> PathBuf {
        self.task_ledgers_dir().join(format!("{wbs}.jsonl"))
    }

    /// `<protected>/ledger/usage/`: one usage ledger per task, beside the task ledgers (and
    /// wherever they move).
    pub fn usage_ledgers_dir(&self) -> PathBuf {
        self.task_ledgers_dir().with_file_name("usage")
    }

    /// `<protected>/ledger/usage/<wbs>.jsonl`: what the task's steps spent, over all its runs.
    pub fn usage_ledger_path(&self, wbs: &Wbs) -> PathBuf {
        self.usage_ledgers_dir().join(format!("{wbs}.jsonl"))
    }

    /// `<protected>/audit.jsonl`.
    pub fn audit_path(&self) -> PathBuf {
        self.protected.join("audit.jsonl")
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

    /// `<protected>/policies/`: snapshots of the gate's policy, each named by its sha256.
    pub fn policies_dir(&self) -> PathBuf {
        self.protected.join("policies")
    }

    /// `<protected>/policies/<sha256>.json`.
    pub(crate) fn policy_path(&self, sha256: &str) -> PathBuf {
        self.policies_dir().join(format!("{sha256}.json"))
    }

    /// `<protected>/approved-policy.json`: the gate's policy a person approved (one sealed
    /// line; `policy::approval`).
    pub fn approved_policy_path(&self) -> PathBuf {
        self.protected.join("approved-policy.json")
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

/// The protected state of the state directory at `root`: under the state home the
/// environment names ([`state_home_from_vars`]); in the engine's own unit tests a folder
/// of the state directory, so that no test writes into the home of the user running it.
#[cfg(not(test))]
fn default_protected_dir(root: &Path) -> PathBuf {
    protected_dir_in(
        state_home_from_vars(|name| std::env::var_os(name)).as_deref(),
        root,
    )
}

#[cfg(test)]
fn default_protected_dir(root: &Path) -> PathBuf {
    root.join("test-protected")
}

/// `$XDG_STATE_HOME` (absolute only, as the XDG spec says), else `$HOME/.local/state`;
/// `None` when neither is set. The key's default place is `<this>/spur/key`.
pub fn state_home_from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("XDG_STATE_HOME").filter(|d| d.is_absolute()) {
        return Some(dir);
    }
    set("HOME").map(|home| home.join(".local").join("state"))
}

/// `<home>/spur/projects/<name>-<hash>` for the state directory at `root`: `name` is the
/// project directory's name (letters, digits, `.`, `_`, `-` kept, the rest `_`), `hash`
/// the first 16 hex digits of the sha256 of the state directory's absolute path (its
/// parent's links resolved), so two projects of one name never share. With no state home
/// (neither variable set), `<root>/protected`: inside the project, which the sandbox
/// reports it cannot protect.
pub fn protected_dir_in(home: Option<&Path>, root: &Path) -> PathBuf {
    let Some(home) = home else {
        return root.join("protected");
    };
    let absolute = match (root.parent(), root.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| root.to_path_buf()),
        _ => root.to_path_buf(),
    };
    let project_name: String = absolute
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .take(40)
        .collect();
    let digest = crate::store::digest::sha256_hex(absolute.as_os_str().as_encoded_bytes());
    let hash = digest.get(..16).unwrap_or(&digest);
    let id = if project_name.is_empty() {
        hash.to_owned()
    } else {
        format!("{project_name}-{hash}")
    };
    home.join("spur").join("projects").join(id)
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
    fn protected_state_lives_under_the_state_home_per_project() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let home = Path::new("/state");
        let pa = protected_dir_in(Some(home), &a.join(".spur"));
        let pb = protected_dir_in(Some(home), &b.join(".spur"));
        assert!(pa.starts_with("/state/spur/projects"), "{pa:?}");
        assert_ne!(pa, pb);
        assert!(pa.file_name().unwrap().to_string_lossy().starts_with("a-"));
        assert_eq!(pa, protected_dir_in(Some(home), &a.join(".spur")));
        assert_eq!(
            protected_dir_in(None, &a.join(".spur")),
            a.join(".spur/protected")
        );
    }

    #[test]
    fn the_state_home_is_xdg_state_home_when_absolute_else_home() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            state_home_from_vars(vars(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(
            state_home_from_vars(vars(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/state"))
        );
        assert_eq!(state_home_from_vars(vars(&[])), None);
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
