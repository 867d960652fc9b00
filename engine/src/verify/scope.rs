//! Where a verify run writes: per task (`<wbs>-…`) or, with no task, for the project
//! (`_project-…`; a wbs cannot start with `_`, so the two never collide).

use std::path::PathBuf;

use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// The files of one task's (or the project's) verify runs under `.spur/run/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyScope {
    run_dir: PathBuf,
    locks_dir: PathBuf,
    prefix: String,
}

/// The prefix of project-wide verify files.
pub(crate) const PROJECT_PREFIX: &str = "_project";

impl VerifyScope {
    /// The files of `wbs`'s verify runs in `state_dir`, or the project's when `None`.
    pub fn new(state_dir: &StateDir, wbs: Option<&Wbs>) -> Self {
        Self {
            run_dir: state_dir.run_dir(),
            locks_dir: state_dir.root().join("locks"),
            prefix: wbs.map_or_else(|| PROJECT_PREFIX.to_owned(), Wbs::to_string),
        }
    }

    /// `.spur/run/<scope>-evidence/`: one `<gate>.md` and `<gate>.json` per gate.
    pub(crate) fn evidence_dir(&self) -> PathBuf {
        self.run_dir.join(format!("{}-evidence", self.prefix))
    }

    /// `task 0592` or `the project`, for messages.
    pub(crate) fn describe(&self) -> String {
        if self.prefix == PROJECT_PREFIX {
            "the project".to_owned()
        } else {
            format!("task {}", self.prefix)
        }
    }

    /// `.spur/locks/<scope>-verify.lock`: one verify run per scope at a time (not the
    /// task's run lock, which a run holds while its `verify.run` action verifies).
    pub(crate) fn lock_path(&self) -> PathBuf {
        self.locks_dir.join(format!("{}-verify.lock", self.prefix))
    }

    /// `.spur/run/<scope>-verdicts.jsonl`: the verdict ledger.
    pub fn ledger_path(&self) -> PathBuf {
        self.run_dir.join(format!("{}-verdicts.jsonl", self.prefix))
    }

    /// `.spur/run/<scope>-verify-report.md`.
    pub(crate) fn report_path(&self) -> PathBuf {
        self.run_dir
            .join(format!("{}-verify-report.md", self.prefix))
    }
}
