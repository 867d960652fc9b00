//! What a status change of a task with a task file must pass before anything is written:
//! the lifecycle graph (`transition::lifecycle_allows`, unless `--no-lifecycle`), then,
//! for `testing` and `done`, the structural check of the task file as that status
//! (`spur task check --as STATUS`). The done gate comes after, for `done`, whatever
//! happened here: `--no-lifecycle` never reaches it.
//!
//! A task "has the lifecycle" when its task file has frontmatter with a `status:` key —
//! the reference's shape. A task with no task file, or a checklist-shape file without
//! frontmatter, is a bare task: its status is free and only the done gate guards done.

use std::path::Path;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::state_dir::StateDir;
use crate::store::task_status::Status;
use crate::task_file::{locate_task_file, TaskDocument, TaskFileError};
use crate::wbs::Wbs;

use super::check::{check_task, CheckOptions};
use super::transition::{lifecycle_allows, TransitionDenied};

/// The task file of `wbs` when the task has the lifecycle; `None` for a bare task.
pub fn lifecycle_document(
    state_dir: &StateDir,
    wbs: &Wbs,
) -> Result<Option<TaskDocument>, TaskFileError> {
    let path = match locate_task_file(wbs, None, state_dir.project_root(), state_dir) {
        Ok(path) => path,
        Err(TaskFileError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let document = TaskDocument::read(&path)?;
    let has_status = document
        .frontmatter()
        .is_some_and(|f| f.get("status").is_some());
    Ok(has_status.then_some(document))
}

/// A status change refused before anything was written.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The lifecycle graph has no such transition.
    #[error(transparent)]
    Transition(#[from] TransitionDenied),
    /// The task file does not pass the structural check as the new status.
    #[error(
        "task {wbs} stays {from}: `spur task check {wbs} --as {target}` does not pass — {summary}"
    )]
    Check {
        /// The task.
        wbs: String,
        /// Its status now.
        from: String,
        /// The status asked for.
        target: String,
        /// The error findings, one after another.
        summary: String,
    },
}

coded_diagnostic! {
    Refused {
        forward { Transition }
        Self::Check { .. } => Code::TaskCheckFailed,
            help("run `spur task check WBS --as STATUS` to see each finding in place, fix them, and change the status again");
    }
}

/// Whether the task whose file is `document` may go from `from` to `to` (canonical).
pub fn admit(
    document: &TaskDocument,
    wbs: &Wbs,
    from: &Status,
    to: &'static str,
    no_lifecycle: bool,
    project_root: &Path,
) -> Result<(), Refused> {
    if !no_lifecycle {
        lifecycle_allows(from.as_str(), to)?;
    }
    if matches!(to, "testing" | "done") {
        let shown = document
            .path()
            .strip_prefix(project_root)
            .unwrap_or(document.path());
        let report = check_task(
            document,
            wbs.as_str(),
            shown,
            &CheckOptions {
                as_status: Some(to),
                strict: false,
                project_root: Some(project_root),
            },
        );
        if !report.pass() {
            return Err(Refused::Check {
                wbs: wbs.to_string(),
                from: from.to_string(),
                target: to.to_owned(),
                summary: report.error_summary(),
            });
        }
    }
    Ok(())
}
