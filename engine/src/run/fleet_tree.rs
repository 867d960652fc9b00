//! A fleet run's working tree (`spur run --engine restate --worktree`): named by the run,
//! not by the worker that happens to run it. The client pushes its `HEAD` to the branch
//! `spur/<run-id>` of a git remote every fleet member has (`origin` unless `engine.remote`
//! says otherwise) and sends the commit with the run. A worker works in its own
//! `.spur/worktrees/<run-id>/`, which it brings to the commit the run's journal names
//! last before the first step it runs itself (a replay runs nothing, so it needs no
//! tree). After each action and after the done gate the worker commits the tree as the
//! step left it and pushes it to the branch; the commit is part of the step's journaled
//! value. So a worker that takes over a run — after a kill -9, on another machine — goes
//! on from exactly the tree the last journaled step left, never from whatever the branch
//! or its own checkout says meanwhile.
//!
//! git here runs like a step (in the sandbox, when there is one), with hooks and the
//! file-system monitor off: the project's `.git` is writable by steps, and what a step
//! writes there must not run with spur's rights nor change spur's commits.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::git_worktree::{branch_of, git, WorktreeError, WorktreeRecord};
use super::run_id::RunId;
use crate::store::state_dir::StateDir;

/// The remote a fleet run's branch goes to when `engine.remote` names none.
pub const DEFAULT_REMOTE: &str = "origin";

/// Where a fleet run's tree starts, as the client sends it with the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeSpec {
    /// The git remote every fleet member has, by name.
    pub remote: String,
    /// The run's branch there (`spur/<run-id>`).
    pub branch: String,
    /// The commit the run starts from (the client's `HEAD`).
    pub base: String,
}

/// Name the tree of fleet run `run_id`: push the checkout's `HEAD` to `spur/<run-id>` of
/// `remote`. Uncommitted changes are not part of the run (as with a local `--worktree`).
pub fn publish(
    state_dir: &StateDir,
    run_id: &RunId,
    remote: &str,
) -> Result<TreeSpec, WorktreeError> {
    let project = state_dir.checkout_root();
    let base = git(project, &["rev-parse", "--verify", "HEAD^{commit}"])
        .map(|out| out.trim().to_owned())
        .map_err(|reason| WorktreeError::NotARepository {
            project: project.to_path_buf(),
            reason,
        })?;
    let branch = branch_of(run_id);
    git(
        project,
        &[
            "push",
            "--quiet",
            remote,
            &format!("{base}:refs/heads/{branch}"),
        ],
    )
    .map_err(|reason| WorktreeError::RemoteRefused {
        remote: remote.to_owned(),
        branch: branch.clone(),
        reason,
    })?;
    Ok(TreeSpec {
        remote: remote.to_owned(),
        branch,
        base,
    })
}

/// A worker's copy of a fleet run's tree, and the commit the run's journal names last.
#[derive(Debug)]
pub struct FleetTree {
    spec: TreeSpec,
    /// The worker's checkout (the directory holding `.spur/`).
    project: PathBuf,
    /// Its repository's common git directory (relative to `project`, or absolute).
    common: PathBuf,
    /// `.spur/worktrees/<run-id>` of the worker's checkout.
    path: PathBuf,
    /// The run's tree: `path`, or its folder that holds the project.
    tree: PathBuf,
    /// The commit the journal names last.
    current: String,
    /// The worktree is at `current` in this attempt.
    synced: bool,
}

impl FleetTree {
    /// The tree of fleet run `run_id` in this worker's checkout (nothing is made yet).
    pub fn new(
        state_dir: &StateDir,
        run_id: &RunId,
        spec: TreeSpec,
    ) -> Result<Self, WorktreeError> {
        let project = state_dir.checkout_root().to_path_buf();
        let top = git(&project, &["rev-parse", "--show-toplevel"])
            .map(|out| PathBuf::from(out.trim_end_matches('\n')))
            .map_err(|reason| WorktreeError::NotARepository {
                project: project.clone(),
                reason,
            })?;
        // The project's place in the repository, kept in the worktree.
        let inside = std::fs::canonicalize(&project)
            .ok()
            .zip(std::fs::canonicalize(&top).ok())
            .and_then(|(p, t)| p.strip_prefix(&t).ok().map(Path::to_path_buf))
            .unwrap_or_default();
        let common = git(&project, &["rev-parse", "--git-common-dir"])
            .map(|out| PathBuf::from(out.trim_end_matches('\n')))
            .map_err(|reason| WorktreeError::NotARepository {
                project: project.clone(),
                reason,
            })?;
        let path = state_dir.worktrees_dir().join(run_id.as_str());
        let tree = path.join(inside);
        let current = spec.base.clone();
        Ok(Self {
            spec,
            common,
            project,
            path,
            tree,
            current,
            synced: false,
        })
    }

    /// The run's tree on this worker (steps' cwd, task files, the gate's fingerprint).
    pub fn tree(&self) -> &Path {
        &self.tree
    }

    /// The commit the run's journal names last.
    pub fn current(&self) -> &str {
        &self.current
    }

    /// The run's worktree as its records and replies tell it: paths relative to a
    /// worker's checkout (each worker has its own), the remote, the base, the last commit.
    pub fn record(&self) -> WorktreeRecord {
        let relative = |p: &Path| {
            p.strip_prefix(&self.project)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        WorktreeRecord {
            path: relative(&self.path),
            branch: self.spec.branch.clone(),
            tree: relative(&self.tree),
            remote: Some(self.spec.remote.clone()),
            base: Some(self.spec.base.clone()),
            commit: Some(self.current.clone()),
        }
    }

    /// A replayed step left the tree at `commit`.
    pub fn follow(&mut self, commit: &str) {
        if commit != self.current {
            self.current = commit.to_owned();
            self.synced = false;
        }
    }

    /// The run waited (a pause): whatever changed the worktree meanwhile is not the
    /// run's, so the next step brings it back to the journal's commit, as a worker that
    /// takes the run over would.
    pub fn waited(&mut self) {
        self.synced = false;
    }

    /// Bring the worktree to the journal's commit, once per attempt: made from the
    /// remote's branch if this worker has none, else reset there (what an earlier attempt
    /// or anything else left in it goes). An error (the remote unreachable, the commit not
    /// on its branch) stops the run before the step it was for: nothing of that step ran.
    pub fn sync(&mut self) -> Result<(), String> {
        if self.synced {
            return Ok(());
        }
        let commit = self.current.clone();
        let has_commit =
            |dir: &Path| git(dir, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok();
        if !has_commit(&self.project) {
            git(
                &self.project,
                &[
                    "fetch",
                    "--quiet",
                    &self.spec.remote,
                    &format!("refs/heads/{}", self.spec.branch),
                ],
            )
            .map_err(|why| {
                format!(
                    "cannot fetch the run's branch {} from remote `{}`: {why}",
                    self.spec.branch, self.spec.remote
                )
            })?;
            if !has_commit(&self.project) {
                return Err(format!(
                    "the run's commit {commit} is not on branch {} of remote `{}` (was the branch rewritten?)",
                    self.spec.branch, self.spec.remote
                ));
            }
        }
        let path_text = self.path.display().to_string();
        if std::fs::symlink_metadata(&self.path).is_ok() {
            self.check_own()?;
            git(
                &self.path,
                &[
                    "checkout",
                    "--quiet",
                    "--force",
                    "-B",
                    &self.spec.branch,
                    &commit,
                ],
            )?;
        } else {
            let dir = self.path.parent().unwrap_or(&self.project);
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            let ignore = dir.join(".gitignore");
            if !ignore.exists() {
                std::fs::write(&ignore, "# spur run --worktree: the runs' worktrees\n*\n")
                    .map_err(|e| format!("cannot write {}: {e}", ignore.display()))?;
            }
            let _ = git(&self.project, &["worktree", "prune"]);
            git(
                &self.project,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    "--force",
                    "-B",
                    &self.spec.branch,
                    &path_text,
                    &commit,
                ],
            )?;
        }
        git(&self.path, &["clean", "--quiet", "-ffdx"])?;
        self.synced = true;
        Ok(())
    }

    /// Commit the tree as the step left it (the step's own commits included) and push it
    /// to the run's branch: the commit the step's journaled value names. The branch is
    /// the run's alone, so it is overwritten: a commit a dead attempt pushed and never
    /// journaled is not part of the run.
    pub fn commit(&mut self, message: &str) -> Result<String, String> {
        self.check_own()?;
        git(&self.path, &["add", "--all"])?;
        if git(&self.path, &["diff", "--cached", "--quiet"]).is_err() {
            git(
                &self.path,
                &[
                    "commit",
                    "--quiet",
                    "--no-verify",
                    "--no-gpg-sign",
                    "-m",
                    message,
                ],
            )?;
        }
        let head = git(&self.path, &["rev-parse", "--verify", "HEAD^{commit}"])?
            .trim()
            .to_owned();
        if head != self.current {
            git(
                &self.path,
                &[
                    "push",
                    "--quiet",
                    "--force",
                    &self.spec.remote,
                    &format!("HEAD:refs/heads/{}", self.spec.branch),
                ],
            )
            .map_err(|why| {
                format!(
                    "cannot push the run's branch {} to remote `{}`: {why}",
                    self.spec.branch, self.spec.remote
                )
            })?;
        }
        self.current = head.clone();
        Ok(head)
    }
}

impl FleetTree {
    /// The worktree is the one spur made for the run: a folder (not a link) that is the
    /// top of a worktree of this checkout's repository. Steps can write `.spur/`: a
    /// worktree replaced by a link to the checkout, or by a plain folder (in which git
    /// finds the checkout's repository), would have spur's reset, clean and commit land in
    /// the checkout itself.
    fn check_own(&self) -> Result<(), String> {
        let refuse = |why: &str| {
            Err(format!(
                "{} is not the run's worktree ({why}): spur leaves it alone",
                self.path.display()
            ))
        };
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return refuse("a link or a file where the worktree was"),
            Err(e) => return refuse(&e.to_string()),
        }
        let said = git(
            &self.path,
            &["rev-parse", "--show-toplevel", "--git-common-dir"],
        )?;
        let mut lines = said.lines();
        let (Some(top), Some(common)) = (lines.next(), lines.next()) else {
            return refuse("git cannot tell its top");
        };
        let canonical = |p: &Path| std::fs::canonicalize(p).ok();
        if canonical(Path::new(top)) != canonical(&self.path) {
            return refuse("a folder of another tree");
        }
        if canonical(&self.path.join(common)) != canonical(&self.project.join(&self.common)) {
            return refuse("a repository of its own");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_ok(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .output()
            .expect("git is needed by these tests (install git)");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn only_the_worktree_spur_made_is_reset_or_committed() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::write(project.join("a.txt"), "a\n").unwrap();
        std::fs::write(project.join(".gitignore"), ".spur/\n").unwrap();
        git_ok(project, &["init", "-q", "-b", "main"]);
        git_ok(project, &["add", "-A"]);
        git_ok(project, &["commit", "-q", "-m", "one"]);
        let base = git_ok(project, &["rev-parse", "HEAD"]);
        let state_dir = StateDir::at(project.join(".spur"));
        let run_id = RunId::parse("20261202T000000Z-abcdef").unwrap();
        let spec = TreeSpec {
            remote: DEFAULT_REMOTE.into(),
            branch: branch_of(&run_id),
            base: base.clone(),
        };
        let mut tree = FleetTree::new(&state_dir, &run_id, spec).unwrap();
        // The commit is in the checkout: no fetch; the worktree is made at it.
        tree.sync().unwrap();
        let path = state_dir.worktrees_dir().join(run_id.as_str());
        assert_eq!(git_ok(&path, &["rev-parse", "HEAD"]), base);
        assert!(tree.check_own().is_ok());
        let refused = |tree: &FleetTree, why: &str| {
            let err = tree.check_own().unwrap_err();
            assert!(err.contains(why), "{err}");
        };
        // A link to the checkout where the worktree was.
        std::fs::remove_dir_all(&path).unwrap();
        std::os::unix::fs::symlink(project, &path).unwrap();
        refused(&tree, "a link or a file");
        // A plain folder: git would find the checkout's repository from there.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        refused(&tree, "a folder of another tree");
        // A repository of its own.
        git_ok(&path, &["init", "-q"]);
        refused(&tree, "a repository of its own");
        // Neither a reset nor a commit touches any of them, nor the checkout.
        tree.waited();
        assert!(tree.sync().is_err());
        assert!(tree.commit("m").is_err());
        assert_eq!(git_ok(project, &["rev-parse", "HEAD"]), base);
        assert_eq!(git_ok(project, &["branch", "--show-current"]), "main");
    }
}
