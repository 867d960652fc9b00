//! Atomic file writes: temp file in the same directory, fsync, rename, fsync the directory.
//! A reader sees the old content or the new content, never a partial file.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Write `bytes` to `path` atomically, creating parent directories as needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile_in(dir, path)?;
    let result = (|| {
        tmp.1.write_all(bytes)?;
        tmp.1.sync_all()?;
        fs::rename(&tmp.0, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp.0);
    }
    result
}

/// Append one line (a `\n` is added) to `path` and fsync it before returning.
pub fn append_line_durable(path: &Path, line: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let existed = path.exists();
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
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

fn tempfile_in(dir: &Path, target: &Path) -> io::Result<(std::path::PathBuf, fs::File)> {
    let stem = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    for attempt in 0..100u32 {
        let name = format!(".{stem}.tmp-{}-{attempt}", std::process::id());
        let candidate = dir.join(name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a temporary file",
    ))
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    // Directories can be opened read-only and fsync'd on Unix; elsewhere this is best-effort.
    match fs::File::open(dir) {
        Ok(d) => d.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn appends_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        append_line_durable(&path, "a").unwrap();
        append_line_durable(&path, "b").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "a\nb\n");
    }
}
