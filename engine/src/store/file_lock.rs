//! The one advisory lock: an exclusive `flock` (std's `File::lock`) held for the life of a
//! value, serialising writers of one record across processes. It is per open file
//! description, so two holders in one process conflict as two processes do. Released on
//! drop, or by the OS when the process ends however it ends: a crash leaves no stale lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use crate::store::bounded_read::ensure_regular;

/// A held exclusive lock on an open file.
#[derive(Debug)]
pub(crate) struct FileLock {
    file: File,
}

impl FileLock {
    /// Open (creating) `path` for reading and appending, and block until it is locked.
    pub(crate) fn exclusive(path: &Path) -> io::Result<Self> {
        let file = open(path)?;
        loop {
            match file.lock() {
                Ok(()) => return Ok(Self { file }),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// [`FileLock::exclusive`] without waiting: `None` when another holder has it.
    pub(crate) fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// The locked file (opened read + append).
    pub(crate) fn file(&mut self) -> &mut File {
        &mut self.file
    }
}

/// Open (creating it and its directory) the lock file for reading and appending. Some
/// locked files are also read (the audit log, a ledger): a FIFO or a device put at the path
/// is refused here, before a read could hang or never end.
fn open(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    ensure_regular(&file)?;
    Ok(file)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the descriptor releases it too, unless a child inherited a copy.
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locks/x.lock");
        let first = FileLock::try_exclusive(&path).unwrap();
        assert!(first.is_some(), "a free lock is taken");
        // flock conflicts between two open descriptions, even in one process.
        assert!(FileLock::try_exclusive(&path).unwrap().is_none());
        drop(first);
        assert!(FileLock::try_exclusive(&path).unwrap().is_some());
    }

    #[test]
    fn a_fifo_or_device_at_the_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = FileLock::exclusive(&fifo).unwrap_err();
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(FileLock::try_exclusive(&zero).is_err());
    }
}
