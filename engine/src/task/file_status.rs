//! The task file's frontmatter `status:` as a view of the task ledger — the second view,
//! beside `.spur/tasks/<wbs>.json`. The ledger is the status; the file says what a person
//! or an agent last wrote there, and spur reads that claim the reference's way ("file
//! wins", its DD-04) with one exception: a claim of `done` is never believed.
//!
//! - the file says what the ledger says: nothing to do;
//! - the file says another status than done: it wins — the next spur command that touches
//!   the task records it in the ledger ([`reconcile`]);
//! - the file says done and the ledger does not: the task is *uncertified* until the done
//!   gate certifies it; nothing is recorded;
//! - the file says something that is not a status, or nothing: the ledger's status stands.
//!
//! After every status change the ledger records, spur rewrites the file's `status:` from
//! it by span ([`write_view`]), so a certified `done` appears in the file too.

use std::path::PathBuf;

use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_status::{self, ChangeContext, Status, StatusChange, TaskError};
use crate::store::task_view::TaskRecord;
use crate::task_file::{locate_task_file, TaskDocument, TaskFileError};
use crate::wbs::Wbs;

use super::status_name::canonical_status;

/// What the task file's `status:` claims, next to the ledger's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileClaim {
    /// No task file, no frontmatter or no `status:` key.
    Silent,
    /// The file says what the ledger says.
    Agrees,
    /// The file says another status than done: it wins at the next touch.
    Wins(&'static str),
    /// The file says done; the ledger does not. Never believed.
    UncertifiedDone,
    /// The file's `status:` is not a task status (as written).
    NotAStatus(String),
}

/// Read the claim of `file_status` (as written in the file) against the ledger's status.
pub fn claim(ledger: &Status, file_status: Option<&str>) -> FileClaim {
    let Some(written) = file_status else {
        return FileClaim::Silent;
    };
    let Some(file) = canonical_status(written) else {
        return FileClaim::NotAStatus(written.to_owned());
    };
    let ledger_status = canonical_status(ledger.as_str()).unwrap_or(ledger.as_str());
    if file == ledger_status {
        FileClaim::Agrees
    } else if file == "done" {
        FileClaim::UncertifiedDone
    } else {
        FileClaim::Wins(file)
    }
}

/// The status to show for a task: the ledger's, or the file's where the file wins.
pub fn shown_status(ledger: &Status, claim: &FileClaim) -> String {
    match claim {
        FileClaim::Wins(status) => (*status).to_owned(),
        _ => ledger.to_string(),
    }
}

/// Record in the ledger a status the task file claims and wins with (see the module doc).
/// Returns the new record, or `None` when there was nothing to record.
pub fn reconcile(
    lock: &DataLock,
    state_dir: &StateDir,
    document: &TaskDocument,
    context: &ChangeContext<'_>,
) -> Result<Option<TaskRecord>, TaskError> {
    let current = task_status::current_status(state_dir, lock.wbs())?;
    let FileClaim::Wins(status) = claim(&current, document.status_text().as_deref()) else {
        return Ok(None);
    };
    let Ok(open) = Status::open(status) else {
        return Ok(None);
    };
    task_status::record_change(lock, state_dir, StatusChange::To(open), context).map(Some)
}

/// Rewrite the `status:` of the task file of `wbs` to `status` (the ledger's), by span,
/// with `updated_at:` when the file has one. Nothing happens when the task has no task
/// file, the file has no `status:` key, or it already says this status. Returns the file
/// written.
pub(crate) fn write_view(
    state_dir: &StateDir,
    wbs: &Wbs,
    status: &Status,
) -> Result<Option<PathBuf>, ViewError> {
    let path = match locate_task_file(wbs, None, state_dir.project_root(), state_dir) {
        Ok(path) => path,
        Err(TaskFileError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(ViewError::new(PathBuf::new(), e.to_string())),
    };
    let document =
        TaskDocument::read(&path).map_err(|e| ViewError::new(path.clone(), e.to_string()))?;
    let Some(written) = document.status_text() else {
        return Ok(None);
    };
    if written == status.as_str() {
        return Ok(None);
    }
    let (mut document, _) = document
        .set_field("status", status.as_str())
        .map_err(|e| ViewError::new(path.clone(), e.to_string()))?;
    if document
        .frontmatter()
        .is_some_and(|f| f.scalar("updated_at").is_some())
    {
        let now = crate::store::timestamp::now();
        document = document
            .set_field("updated_at", &now)
            .map_err(|e| ViewError::new(path.clone(), e.to_string()))?
            .0;
    }
    document
        .write()
        .map_err(|e| ViewError::new(path.clone(), e.to_string()))?;
    Ok(Some(path))
}

/// The task file's status could not be rewritten.
#[derive(Debug)]
pub(crate) struct ViewError {
    pub(crate) path: PathBuf,
    pub(crate) message: String,
}

impl ViewError {
    fn new(path: PathBuf, message: String) -> Self {
        Self { path, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(s: &str) -> Status {
        Status::try_from(s.to_owned()).unwrap()
    }

    #[test]
    fn the_file_wins_except_with_done() {
        assert_eq!(claim(&status("todo"), None), FileClaim::Silent);
        assert_eq!(claim(&status("todo"), Some("Todo")), FileClaim::Agrees);
        assert_eq!(
            claim(&status("todo"), Some("in-progress")),
            FileClaim::Wins("wip")
        );
        assert_eq!(claim(&status("done"), Some("wip")), FileClaim::Wins("wip"));
        assert_eq!(
            claim(&status("testing"), Some("DONE")),
            FileClaim::UncertifiedDone
        );
        assert_eq!(
            claim(&status("in-progress"), Some("wip")),
            FileClaim::Agrees
        );
        assert_eq!(
            claim(&status("todo"), Some("shipped")),
            FileClaim::NotAStatus("shipped".to_owned())
        );
        assert_eq!(
            shown_status(&status("todo"), &FileClaim::Wins("wip")),
            "wip"
        );
        assert_eq!(
            shown_status(&status("testing"), &FileClaim::UncertifiedDone),
            "testing"
        );
    }
}
