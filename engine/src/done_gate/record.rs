//! What follows the gate's allow, in one place for every caller (`spur task certify`,
//! `spur task update W done`, the runner's gate): the `done` record in the task ledger, the
//! view rewritten, then — when the project opts in — the signed done certificate. A
//! certificate that cannot be written is reported, never un-certifies: the ledger is the
//! status.

use crate::done_certificate::{self, Issued};
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_status::{self, ChangeContext, StatusChange, TaskError};
use crate::store::task_view::TaskRecord;

use super::Done;

/// The `done` record made, and what became of the rest.
#[derive(Debug)]
pub struct RecordedDone {
    /// The task's record as the ledger now says it; `None` when the view could not be
    /// rewritten (then `view_error` says why).
    pub record: Option<TaskRecord>,
    /// The ledger has the record, but the view could not be rewritten from it.
    pub view_error: Option<TaskError>,
    /// The done certificate.
    pub certificate: Issued,
}

/// Append the `done` record the gate's `done` allows to the locked task's ledger, rewrite
/// the view, and write the certificate. An error means the ledger append failed: the task
/// is not done.
pub fn record_done(
    lock: &DataLock,
    state_dir: &StateDir,
    done: &Done,
    context: &ChangeContext<'_>,
) -> Result<RecordedDone, TaskError> {
    let (record, view_error) =
        match task_status::record_change(lock, state_dir, StatusChange::Done(done), context) {
            Ok(record) => (Some(record), None),
            Err(e @ TaskError::ViewWrite { .. }) => (None, Some(e)),
            Err(e) => return Err(e),
        };
    let certificate = done_certificate::issue(lock, state_dir, done, context);
    Ok(RecordedDone {
        record,
        view_error,
        certificate,
    })
}
