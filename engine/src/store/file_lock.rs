//! An exclusive advisory lock (`flock`) held for the life of a value: serialises writers
//! of the same record file across processes. Released on drop or process exit.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// A held exclusive lock on an open file.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Open (creating) `path` for reading and appending, and block until it is locked.
    pub fn exclusive(path: &Path) -> io::Result<Self> {
        let file = open(path)?;
        loop {
            // SAFETY: flock on a file descriptor we own; no memory is shared.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(Self { file });
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// [`FileLock::exclusive`] without waiting: `None` when another holder has it.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = open(path)?;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(Some(Self { file }));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(err)
        }
    }

    /// The locked file (opened read + append).
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }
}

/// Open (creating it and its directory) the lock file for reading and appending.
fn open(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: as above; closing the descriptor would release it anyway.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
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
}
