//! The tasks of a feature: every task file of `docs/tasks*/` whose frontmatter
//! `feature_id` (or the reference's older `feature-id`) names it, with its status as spur
//! shows it and whether its done is the done gate's (a certified ledger record).

use std::path::PathBuf;

use crate::store::certification::{self, Certification};
use crate::store::state_dir::StateDir;
use crate::task::file_status::{claim, shown_status};
use crate::task_file::{list_task_files, TaskDocument};
use crate::wbs::Wbs;

/// One task of a feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedTask {
    /// The task.
    pub wbs: Wbs,
    /// Its file.
    pub path: PathBuf,
    /// Its name (`name:`), or the wbs.
    pub name: String,
    /// Its status as `spur task show` shows it (the ledger's, or the file's where the
    /// file wins — never a done the ledger has not recorded).
    pub status: String,
    /// Whether its task ledger certifies it done (the done gate's record).
    pub certified_done: bool,
    /// What the ledger check found (`certified`, `uncertified`, `tampered`…).
    pub certification: Certification,
    /// Its task file's `status:` says done (a claim: only the ledger's record counts).
    pub file_says_done: bool,
}

impl LinkedTask {
    /// Whether it no longer counts: abandoned.
    pub fn is_cancelled(&self) -> bool {
        self.status == "cancelled"
    }
}

/// The tasks whose files name feature `id`, sorted by wbs.
pub fn linked_tasks(state_dir: &StateDir, id: &str) -> Vec<LinkedTask> {
    let mut found = Vec::new();
    for listed in list_task_files(state_dir.project_root(), None) {
        let Ok(document) = TaskDocument::read(&listed.path) else {
            continue;
        };
        let feature = document
            .feature_id()
            .or_else(|| document.frontmatter().and_then(|f| f.scalar("feature-id")));
        if feature.as_deref() != Some(id) {
            continue;
        }
        let check = certification::check(state_dir, &listed.wbs);
        let ledger = &check.record.status;
        let file_status = document.status_text();
        let status = shown_status(ledger, &claim(ledger, file_status.as_deref()));
        let file_says_done = file_status
            .as_deref()
            .and_then(crate::task::status_name::canonical_status)
            == Some("done");
        found.push(LinkedTask {
            name: document.name().unwrap_or_else(|| listed.wbs.to_string()),
            wbs: listed.wbs,
            path: listed.path,
            certified_done: check.certification == Certification::Certified,
            certification: check.certification,
            file_says_done,
            status,
        });
    }
    found
}
