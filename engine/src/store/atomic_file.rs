//! Atomic file writes: a temporary file in the same directory (`tempfile`), fsync, rename
//! over the target, fsync the directory. A reader sees the old content or the new content,
//! never a partial file, and a failed write leaves no temporary file behind.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::store::bounded_read::{open_directory, open_regular_as};

/// Write `bytes` to `path` atomically, creating parent directories as needed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically(path, bytes, Replace::Yes)
}

/// [`write_atomic`] for a file that must not exist yet (not even as a dangling symlink): the
/// complete file appears at once or not at all, and a file already at `path` (however it got
/// there) is left alone: the write fails with `AlreadyExists`.
pub(crate) fn write_new_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically(path, bytes, Replace::No)
}

#[derive(PartialEq)]
enum Replace {
    Yes,
    No,
}

fn write_atomically(path: &Path, bytes: &[u8], replace: Replace) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let stem = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    // A dot name: directory listings that skip hidden files never see a half-written one.
    // 0o666 less the umask, as a file created in place would be (tempfile's default is
    // owner-only). Dropping `tmp` on any error below removes it.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{stem}.tmp-"))
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if replace == Replace::Yes {
        tmp.persist(path).map_err(|e| e.error)?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    }
    sync_dir(dir)
}

/// Append one line (a `\n` is added) to `path` and fsync it before returning.
pub(crate) fn append_line_durable(path: &Path, line: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let existed = path.exists();
    // Not waiting on a FIFO a step put at the path, nor appending to a device.
    let mut options = fs::OpenOptions::new();
    options.create(true).append(true);
    let mut file = open_regular_as(path, options)?;
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    file.write_all(&buf)?;
    file.sync_all()?;
    if !existed {
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(dir)?;
        }
    }
    Ok(())
}

/// Fsync the directory `dir` (after a rename or a creation in it), best-effort: nothing
/// but a directory is opened, and a FIFO put in its place is not waited on.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    match open_directory(dir) {
        Ok(d) => d.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_never_written_over_anything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/new.txt");
        write_new_atomic(&path, b"one").unwrap();
        let again = write_new_atomic(&path, b"two").unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&path).unwrap(), "one");
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        assert!(write_new_atomic(&link, b"x").is_err());
        assert!(!dir.path().join("nowhere").exists());
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["new.txt"]);
    }

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("b.json")]);
        // Readable by others as a file created in place would be, not owner-only.
        let plain = dir.path().join("plain");
        fs::write(&plain, "").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&plain));
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory where the file should go: the rename fails.
        let path = dir.path().join("taken");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), "kept").unwrap();
        assert!(write_atomic(&path, b"new").is_err());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
        assert_eq!(fs::read_to_string(path.join("inside")).unwrap(), "kept");
    }

    #[test]
    fn appends_lines_to_a_regular_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        append_line_durable(&path, "a").unwrap();
        append_line_durable(&path, "b").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "a\nb\n");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let err = append_line_durable(&fifo, "c").unwrap_err();
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
    }
}
