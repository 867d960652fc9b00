//! `spur run --worktree`: the run works in a git worktree of its own, on a branch of its
//! own (`spur/<run-id>`), so that two runs of two tasks in one checkout neither see nor
//! invalidate the evidence of each other's changes. The worktree is
//! `.spur/worktrees/<run-id>/`: inside the project, so the sandbox's grant of the project
//! already lets steps write it and no directory appears beside the project; in a folder
//! whose `.gitignore` ignores everything, so the main checkout's `git status` stays clean;
//! and inside `.spur/`, which the main checkout's tree fingerprint leaves out, so a run
//! in a worktree never changes the evidence of a run in the main checkout. Only the tree
//! moves: config, `run/` artifacts, locks and the protected state (ledgers, journals,
//! audit, certificates) stay the project's, so the done gate certifies from one place.
//!
//! `run: {worktree: true}` in `.spur/config.yaml` makes it the default.

use std::path::{Path, PathBuf};

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::run::RunId;
use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, Loader, NodeValue, UnknownKeys};
use spur_process::ProcessSpec;

/// A run's worktree as `run-started` records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeRecord {
    /// The worktree's directory (absolute; on a fleet, relative to each worker's checkout).
    pub path: String,
    /// The run's branch (`spur/<run-id>`).
    pub branch: String,
    /// The run's tree inside the worktree: the worktree itself, or the folder of it that
    /// holds the project when `.spur/` is not at the repository's top.
    pub tree: String,
    /// On a fleet: the git remote that holds the run's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// On a fleet: the commit the run started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// On a fleet, in a run's reply: the commit its last step left (`run-started` has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl WorktreeRecord {
    /// The run's tree.
    pub fn tree_path(&self) -> &Path {
        Path::new(&self.tree)
    }
}

/// Why a worktree cannot be made, reopened or read from the config.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The project is not in a git repository (or git is not installed).
    #[error("`--worktree` needs a git repository: {} is not in one ({reason})", project.display())]
    NotARepository {
        /// The project root.
        project: PathBuf,
        /// What git said.
        reason: String,
    },
    /// The run's branch already exists.
    #[error("the branch `{branch}` already exists: not making the run's worktree")]
    BranchTaken {
        /// The branch.
        branch: String,
    },
    /// `git worktree add` refused.
    #[error("git refused to make the run's worktree {}: {reason}", path.display())]
    GitRefused {
        /// The worktree's directory.
        path: PathBuf,
        /// What git said.
        reason: String,
    },
    /// The remote would not take the fleet run's branch.
    #[error("cannot push the run's branch `{branch}` to the git remote `{remote}`: {reason}")]
    RemoteRefused {
        /// The remote's name.
        remote: String,
        /// The run's branch.
        branch: String,
        /// What git said.
        reason: String,
    },
    /// A run's recorded worktree is gone or is not where spur makes worktrees.
    #[error("the run's worktree {path} cannot be used: {reason}")]
    Unusable {
        /// The recorded path.
        path: String,
        /// Why.
        reason: String,
    },
    /// `run:` of `.spur/config.yaml` cannot be read.
    #[error("cannot read {}: {reason}", path.display())]
    ConfigUnreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `run:` has errors.
    #[error("`run:` in {} cannot be used", path.display())]
    ConfigInvalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    WorktreeError {
        Self::NotARepository { .. } => Code::RunWorktree,
            help("run `git init` and commit, or run without `--worktree` (and without `run.worktree: true` in the config)");
        Self::BranchTaken { .. } => Code::RunWorktree,
            help("delete or rename the branch (`git branch -m`), then run again");
        Self::GitRefused { .. } => Code::RunWorktree,
            help("the worktree is made from HEAD: the repository needs a commit, and git must be able to write `.spur/worktrees/`");
        Self::RemoteRefused { .. } => Code::RunWorktree,
            help("on a fleet the run's tree travels through a git remote every worker has: add it (`git remote add origin URL`) or name another with `engine.remote` in .spur/config.yaml");
        Self::Unusable { .. } => Code::RunWorktree,
            help("a run's worktree is kept until removed; `git worktree list` shows what is there");
        Self::ConfigUnreadable { .. } => Code::RunWorktreeConfig,
            help("check that the file is a readable regular file");
        Self::ConfigInvalid { errors, .. } => Code::RunWorktreeConfig,
            help("`run:` takes `worktree: true|false`"),
            related(errors);
    }
}

const CODES: Codes = Codes {
    wrong_type: Code::RunWorktreeConfig,
    missing_key: Code::RunWorktreeConfig,
    unknown_key: Code::RunWorktreeConfig,
    duplicate_key: Code::RunWorktreeConfig,
};

/// `run.worktree` of `.spur/config.yaml`: whether `spur run` works in a worktree by
/// default (no file, no `run:`: no).
pub fn worktree_by_default(state_dir: &StateDir) -> Result<bool, WorktreeError> {
    let path = state_dir.config_path();
    let text = match read_string(&path, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_missing() => return Ok(false),
        Err(e) => {
            return Err(WorktreeError::ConfigUnreadable {
                path,
                reason: e.to_string(),
            })
        }
    };
    let source = SourceFile::new(&path, text.as_str());
    let mut cx = Loader::new(&source, CODES);
    let mut on = false;
    // A file that is not YAML is reported by the readers of its other sections.
    if let Ok(Some(root)) = parse_config(&text) {
        on = cx
            .fields_with(
                &root,
                "the configuration file",
                &["run"],
                UnknownKeys::Ignore,
            )
            .and_then(|top| top.get("run").filter(|n| n.value != NodeValue::Null))
            .and_then(|run| cx.fields(run, "`run`", &["worktree"]))
            .and_then(|run| run.get("worktree"))
            .and_then(|w| cx.read::<bool>(w, "`run.worktree`"))
            .unwrap_or(false);
    }
    if cx.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(WorktreeError::ConfigInvalid {
            path,
            errors: cx.diagnostics,
        });
    }
    Ok(on)
}

/// The branch of run `run_id`.
pub fn branch_of(run_id: &RunId) -> String {
    format!("spur/{run_id}")
}

/// Make run `run_id`'s worktree: `git worktree add -b spur/<run-id>
/// .spur/worktrees/<run-id> HEAD`. On any refusal nothing is left (no directory, no
/// branch, no worktree entry).
pub fn create(state_dir: &StateDir, run_id: &RunId) -> Result<WorktreeRecord, WorktreeError> {
    let project = state_dir.checkout_root().to_path_buf();
    let top = git(&project, &["rev-parse", "--show-toplevel"])
        .map(|out| PathBuf::from(out.trim_end_matches('\n')))
        .map_err(|reason| WorktreeError::NotARepository {
            project: project.clone(),
            reason,
        })?;
    let branch = branch_of(run_id);
    if git(
        &project,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok()
    {
        return Err(WorktreeError::BranchTaken { branch });
    }
    let dir = state_dir.worktrees_dir();
    let path = dir.join(run_id.as_str());
    let refused = |reason: String| WorktreeError::GitRefused {
        path: path.clone(),
        reason,
    };
    std::fs::create_dir_all(&dir).map_err(|e| refused(e.to_string()))?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "# spur run --worktree: the runs' worktrees\n*\n")
            .map_err(|e| refused(e.to_string()))?;
    }
    let path_text = path.display().to_string();
    if let Err(reason) = git(
        &project,
        &[
            "worktree", "add", "--quiet", "-b", &branch, &path_text, "HEAD",
        ],
    ) {
        // Whatever git made before refusing goes: the directory, the entry, the branch.
        let _ = std::fs::remove_dir_all(&path);
        let _ = git(&project, &["worktree", "prune"]);
        let _ = git(&project, &["branch", "-D", &branch]);
        return Err(refused(reason));
    }
    let absolute = std::fs::canonicalize(&path).unwrap_or(path.clone());
    // The project's place in the repository, kept in the worktree.
    let inside = std::fs::canonicalize(&project)
        .ok()
        .zip(std::fs::canonicalize(&top).ok())
        .and_then(|(p, t)| p.strip_prefix(&t).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    let tree = absolute.join(inside);
    Ok(WorktreeRecord {
        path: absolute.display().to_string(),
        branch,
        tree: tree.display().to_string(),
        ..WorktreeRecord::default()
    })
}

/// Remove a worktree `create` made and nothing came of (the run did not start): its
/// directory, its entry and its branch, which has no commit of its own.
pub fn discard(state_dir: &StateDir, record: &WorktreeRecord) {
    let project = state_dir.checkout_root();
    let _ = git(project, &["worktree", "remove", "--force", &record.path]);
    let _ = git(project, &["branch", "-D", &record.branch]);
}

/// The worktree of a run going on (`continue`, `retry`): it must be under
/// `.spur/worktrees/` of this project and still be a directory.
pub fn reopen(state_dir: &StateDir, record: &WorktreeRecord) -> Result<PathBuf, WorktreeError> {
    let unusable = |reason: &str| WorktreeError::Unusable {
        path: record.path.clone(),
        reason: reason.to_owned(),
    };
    let dir = std::fs::canonicalize(state_dir.worktrees_dir())
        .map_err(|_| unusable("the project has no `.spur/worktrees/`"))?;
    let path = std::fs::canonicalize(&record.path)
        .map_err(|_| unusable("it is gone (removed by hand or by `git worktree remove`)"))?;
    let tree = std::fs::canonicalize(&record.tree).map_err(|_| unusable("its tree is gone"))?;
    if path.parent() != Some(dir.as_path()) || !tree.starts_with(&path) {
        return Err(unusable(
            "it is not a worktree spur made for this project (under `.spur/worktrees/`)",
        ));
    }
    Ok(tree)
}

/// What `--worktree-cleanup` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// The worktree was removed (its branch kept).
    Removed,
    /// The worktree was kept, and why.
    Kept(String),
}

/// Remove the worktree (never its branch) when it has no uncommitted change.
pub fn remove_if_clean(state_dir: &StateDir, record: &WorktreeRecord) -> Cleanup {
    let path = Path::new(&record.path);
    match git(path, &["status", "--porcelain"]) {
        Err(reason) => Cleanup::Kept(format!("git status failed: {reason}")),
        Ok(status) if !status.trim().is_empty() => {
            Cleanup::Kept("it has uncommitted changes (commit them on its branch, or remove it with `git worktree remove --force`)".into())
        }
        Ok(_) => match git(
            state_dir.checkout_root(),
            &["worktree", "remove", &record.path],
        ) {
            Ok(_) => Cleanup::Removed,
            Err(reason) => Cleanup::Kept(format!("git worktree remove failed: {reason}")),
        },
    }
}

/// How long one git command may take (a fetch or push over a slow network included).
const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// `git -C dir args…` as spur runs it for a run's tree: its stdout, or why it failed (its
/// stderr). Through `spur_process`, so in the sandbox once the run has set it up; with
/// hooks and the file-system monitor off. Steps can write the repository's `.git` (and
/// the home's git config): a hook or filter a step configured must not run with spur's
/// rights, and a hook must not change what spur does.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut all = vec![
        "-C".to_owned(),
        dir.display().to_string(),
        "-c".to_owned(),
        "core.hooksPath=/dev/null".to_owned(),
        "-c".to_owned(),
        "core.fsmonitor=false".to_owned(),
    ];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let outcome = ProcessSpec::new("git", &all)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "spur")
        .env("GIT_AUTHOR_EMAIL", "spur@localhost")
        .env("GIT_COMMITTER_NAME", "spur")
        .env("GIT_COMMITTER_EMAIL", "spur@localhost")
        .timeout(GIT_TIMEOUT)
        .run();
    if outcome.success() {
        return Ok(String::from_utf8_lossy(&outcome.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&outcome.stderr).trim().to_owned();
    Err(if stderr.is_empty() {
        format!("`git {}` failed: {:?}", args.join(" "), outcome.status)
    } else {
        stderr
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopen_takes_only_a_worktree_under_the_projects_worktrees_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let state_dir = StateDir::at(tmp.path().join(".spur"));
        let inside = state_dir.worktrees_dir().join("20261202T000000Z-abcdef");
        std::fs::create_dir_all(&inside).unwrap();
        let record = |path: &Path, tree: &Path| WorktreeRecord {
            path: path.display().to_string(),
            branch: "spur/x".into(),
            tree: tree.display().to_string(),
            ..WorktreeRecord::default()
        };
        assert!(reopen(&state_dir, &record(&inside, &inside)).is_ok());
        // The main checkout, a folder of a worktree, a tree outside its worktree: refused.
        for (path, tree) in [
            (tmp.path().to_path_buf(), tmp.path().to_path_buf()),
            (state_dir.worktrees_dir(), state_dir.worktrees_dir()),
            (inside.clone(), tmp.path().to_path_buf()),
        ] {
            let err = reopen(&state_dir, &record(&path, &tree)).unwrap_err();
            assert!(matches!(err, WorktreeError::Unusable { .. }), "{path:?}");
        }
        // Gone: refused.
        std::fs::remove_dir(&inside).unwrap();
        assert!(reopen(&state_dir, &record(&inside, &inside)).is_err());
    }
}
