//! One run per task at a time: the store's exclusive lock on `.spur/locks/<wbs>.lock`,
//! holding the run id of its holder for the message a second run gets. The OS releases it
//! when the process ends, however it ends, so a crash never leaves a stale lock.

use std::io::{self, Write};
use std::path::Path;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::read_string;
use crate::store::file_lock::FileLock;

/// A run id is 23 bytes; anything longer in the lock file was not written by a run.
const HOLDER_CAP: u64 = 4096;

/// A held task lock; released on drop (or by the OS when the process dies).
#[derive(Debug)]
pub(crate) struct TaskLock {
    _lock: FileLock,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another run holds the task's lock.
    #[error("task {wbs} is already being run{}", holder.as_deref().map(|h| format!(" by run {h}")).unwrap_or_default())]
    Held {
        /// The task.
        wbs: String,
        /// The run holding it, when known.
        holder: Option<String>,
        /// Where the lock is (a file, or the engine's object).
        path: String,
    },
    /// The lock file could not be opened.
    #[error("cannot open the task lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

coded_diagnostic! {
    LockError {
        Self::Held { path, .. } => Code::RunLocked,
            help("one run per task at a time: wait for it to finish, or stop it; the lock is {path}");
        Self::Io { .. } => Code::RunLockIo;
    }
}

impl TaskLock {
    /// Take the lock for `wbs` at `path`, writing `run_id` into it for the error message of
    /// a second run.
    pub(crate) fn acquire(path: &Path, wbs: &str, run_id: &str) -> Result<Self, LockError> {
        let io_err = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let Some(mut lock) = FileLock::try_exclusive(path).map_err(io_err)? else {
            // Best effort: the holder may be between truncating the file and writing to it.
            let holder = read_string(path, HOLDER_CAP)
                .map(|text| text.trim().to_owned())
                .ok()
                .filter(|text| !text.is_empty());
            return Err(LockError::Held {
                wbs: wbs.to_owned(),
                holder,
                path: path.display().to_string(),
            });
        };
        // Opened for appending: after the truncation the run id lands at the start.
        let file = lock.file();
        file.set_len(0).map_err(io_err)?;
        file.write_all(run_id.as_bytes()).map_err(io_err)?;
        Ok(Self { _lock: lock })
    }
}

/// Who holds a task lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Holder {
    /// No one: no run of the task is going on.
    Free,
    /// A run, by the id it wrote into the lock.
    Run(String),
    /// A process whose lock names no run (yet).
    Unnamed,
}

/// Who holds the task lock at `path`, without taking it for longer than it takes to ask
/// (and without creating a lock file that is not there).
pub(crate) fn holder(path: &Path) -> Holder {
    if !path.exists() {
        return Holder::Free;
    }
    match FileLock::try_exclusive(path) {
        Ok(Some(_free)) => Holder::Free,
        Ok(None) => read_string(path, HOLDER_CAP)
            .map(|text| text.trim().to_owned())
            .ok()
            .filter(|text| !text.is_empty())
            .map_or(Holder::Unnamed, Holder::Run),
        Err(_) => Holder::Unnamed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_task_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locks/0592.lock");
        let first = TaskLock::acquire(&path, "0592", "run-a").unwrap();
        match TaskLock::acquire(&path, "0592", "run-b") {
            Err(LockError::Held { holder, .. }) => assert_eq!(holder.as_deref(), Some("run-a")),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert!(TaskLock::acquire(&path, "0592", "run-b").is_ok());
    }
}
