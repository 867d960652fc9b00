//! What a status change of a task with a task file must pass besides its lifecycle's
//! edges and guards: for `testing` and `done`, the structural check of the task file as
//! that status (`spur task check --as STATUS`). `spur task update` brings it to the
//! lifecycle request (tried once the edge exists) and, under `--no-lifecycle`, runs it
//! alone; the done gate comes after it for `done` either way.
//!
//! A task "has the lifecycle" when its task file has frontmatter with a `status:` key —
//! the reference's shape. A task with no task file, or a checklist-shape file without
//! frontmatter, is a bare task: its status is free and only the done gate guards done.

use std::path::Path;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::state_dir::StateDir;
use crate::task_file::{locate_task_file, TaskDocument, TaskFileError};
use crate::wbs::Wbs;

use super::check::{check_task, CheckOptions};
use super::status_name::canonical_status;

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

/// The task file does not pass the structural check as the status asked for.
#[derive(Debug, thiserror::Error)]
#[error("task {wbs} stays {from}: `spur task check {wbs} --as {target}` does not pass — {summary}")]
pub struct CheckRefused {
    /// The task.
    pub wbs: String,
    /// Its status now.
    pub from: String,
    /// The status asked for.
    pub target: String,
    /// The error findings, one after another.
    pub summary: String,
}

coded_diagnostic! {
    CheckRefused {
        Self { .. } => Code::TaskCheckFailed,
            help("run `spur task check WBS --as STATUS` to see each finding in place, fix them, and change the status again");
    }
}

/// Whether the task whose file is `document` may become `to` (canonical) as far as its
/// structure goes: `spur task check --as` for testing and done, nothing for the others.
pub fn structural_check(
    document: &TaskDocument,
    wbs: &Wbs,
    from: &str,
    to: &str,
    project_root: &Path,
) -> Result<(), CheckRefused> {
    let Some(target) = canonical_status(to).filter(|t| matches!(*t, "testing" | "done")) else {
        return Ok(());
    };
    let shown = document
        .path()
        .strip_prefix(project_root)
        .unwrap_or(document.path());
    let report = check_task(
        document,
        wbs.as_str(),
        shown,
        &CheckOptions {
            as_status: Some(target),
            strict: false,
            project_root: Some(project_root),
        },
    );
    if report.pass() {
        return Ok(());
    }
    Err(CheckRefused {
        wbs: wbs.to_string(),
        from: from.to_owned(),
        target: target.to_owned(),
        summary: report.error_summary(),
    })
}
