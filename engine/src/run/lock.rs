//! One run per task at a time: an exclusive `flock` on `.spur/locks/<wbs>.lock`. The OS
//! releases it when the process ends, however it ends, so a crash never leaves a stale lock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A held task lock; released on drop (or by the OS when the process dies).
#[derive(Debug)]
pub struct TaskLock {
    _file: File,
    path: PathBuf,
}

/// The lock could not be taken.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LockError {
    #[error("task {wbs} is already being run{}", holder.as_deref().map(|h| format!(" by run {h}")).unwrap_or_default())]
    #[diagnostic(
        code(spur::run::locked),
        help("one run per task at a time: wait for it to finish, or stop it; the lock is {path}")
    )]
    Held {
        wbs: String,
        holder: Option<String>,
        path: String,
    },
    #[error("cannot open the task lock {path}: {source}")]
    #[diagnostic(code(spur::run::lock_io))]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl TaskLock {
    /// Take the lock for `wbs` at `path`, writing `run_id` into it for the error message of
    /// a second run.
    pub fn acquire(path: &Path, wbs: &str, run_id: &str) -> Result<Self, LockError> {
        let io_err = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_err)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_err)?;
        // SAFETY: flock on a valid, open file descriptor.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim().to_owned();
                return Err(LockError::Held {
                    wbs: wbs.to_owned(),
                    holder: (!holder.is_empty()).then_some(holder),
                    path: path.display().to_string(),
                });
            }
            return Err(io_err(err));
        }
        file.set_len(0).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        file.write_all(run_id.as_bytes()).map_err(io_err)?;
        Ok(Self {
            _file: file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
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
