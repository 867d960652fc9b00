//! The per-task data lock: one writer of a task's data at a time. Verify's merge into the
//! verdict artifact, a derivation writing it, the done gate's read-decide-record and every
//! task ledger append hold it, so no read-modify-write works from a state another writer
//! has since replaced.
//!
//! Short and blocking: held for a few file operations, never across a pipeline step or a
//! verify gate's command. Lock order: a run's task lock (if any), then this one; nothing
//! takes a run lock while holding it, so the two cannot deadlock.

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::file_lock::FileLock;
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// A held data lock of one task. Functions that write a task's data take `&DataLock`, so
/// they cannot be called without it.
#[derive(Debug)]
pub struct DataLock {
    _lock: FileLock,
    wbs: Wbs,
}

/// The data lock could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("cannot take the data lock of task {wbs} ({}): {source}", path.display())]
pub struct DataLockError {
    /// The task.
    pub(crate) wbs: String,
    /// The lock file.
    pub(crate) path: PathBuf,
    /// Why it could not be opened or locked.
    #[source]
    pub(crate) source: std::io::Error,
}

coded_diagnostic! {
    DataLockError {
        Self { .. } => Code::TaskDataLock,
            help("the lock file must be a regular file the user can open; nothing was written");
    }
}

impl DataLock {
    /// Block until the data lock of `wbs` is held.
    pub fn acquire(state_dir: &StateDir, wbs: &Wbs) -> Result<Self, DataLockError> {
        let path = state_dir.data_lock_path(wbs);
        match FileLock::exclusive(&path) {
            Ok(lock) => Ok(Self {
                _lock: lock,
                wbs: wbs.clone(),
            }),
            Err(source) => Err(DataLockError {
                wbs: wbs.to_string(),
                path,
                source,
            }),
        }
    }

    /// The task whose data this lock guards.
    pub(crate) fn wbs(&self) -> &Wbs {
        &self.wbs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_per_task_and_tasks_do_not_share() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let t1 = Wbs::parse("T1").unwrap();
        let held = DataLock::acquire(&state, &t1).unwrap();
        assert_eq!(held.wbs(), &t1);
        let path = state.data_lock_path(&t1);
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        let t2 = Wbs::parse("T2").unwrap();
        drop(DataLock::acquire(&state, &t2).unwrap());
        drop(held);
        assert!(FileLock::try_exclusive(&path).unwrap().is_some());
    }

    #[test]
    fn no_run_lock_name_is_a_data_lock_name() {
        let state = StateDir::at("/p/.spur");
        let x = Wbs::parse("x").unwrap();
        let x_data = Wbs::parse("x.data").unwrap();
        assert_ne!(state.data_lock_path(&x), state.lock_path(&x_data));
        assert_ne!(state.data_lock_path(&x), state.lock_path(&x));
    }
}
