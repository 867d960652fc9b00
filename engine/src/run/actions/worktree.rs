//! A content fingerprint of the project's working tree: sha256 over the sorted paths and
//! contents of the files in a git work tree (tracked, untracked, and ignored *files* — an
//! ignored directory such as `target/` counts by name only, so it stays cheap), or of every
//! file under the root when it is not a git repository. The state directory is never part
//! of it (the run's own journal changes all the time). Used by `agent.run requireDiff` and
//! `proof.fingerprint`. Files are read through the shared bounded reader's regular-file
//! check and streamed into the hash, so a FIFO or a link to a device counts as unreadable
//! and a large file costs no memory.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::store::bounded_read::{open_regular, ReadError};

/// Fingerprint of the files under `root`, excluding `state_dir`.
pub(crate) fn fingerprint(root: &Path, state_dir: &Path) -> io::Result<String> {
    let mut files = match git_files(root) {
        Some(files) => files,
        None => {
            let mut files = Vec::new();
            walk(root, root, &mut files)?;
            files
        }
    };
    let state_rel = state_dir
        .strip_prefix(root)
        .ok()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".spur"));
    files.retain(|f| !f.starts_with(&state_rel) && !f.starts_with(".spur"));
    files.sort();
    files.dedup();
    let mut hasher = Sha256::new();
    for rel in files {
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0]);
        // An ignored directory is listed by name: it too is "<missing>".
        match file_sha256(&root.join(&rel)) {
            Ok(digest) => hasher.update(digest),
            Err(_) => hasher.update(b"<missing>"),
        }
        hasher.update([0]);
    }
    Ok(crate::store::digest::hex(&hasher.finalize()))
}

/// The sha256 of a regular file's content, read in chunks.
pub(crate) fn file_sha256(path: &Path) -> Result<[u8; 32], ReadError> {
    let mut file = open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut buffer) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            read => read?,
        };
        let Some(chunk) = buffer.get(..n).filter(|c| !c.is_empty()) else {
            break;
        };
        hasher.update(chunk);
    }
    Ok(hasher.finalize().into())
}

fn git_files(root: &Path) -> Option<Vec<PathBuf>> {
    let mut files = git_ls(root, &["--cached", "--others", "--exclude-standard"])?;
    // Ignored files count too (an agent's output may be ignored); ignored directories are
    // listed once, not walked.
    let ignored = git_ls(
        root,
        &["--others", "--ignored", "--exclude-standard", "--directory"],
    )?;
    files.extend(ignored);
    Some(files)
}

fn git_ls(root: &Path, args: &[&str]) -> Option<Vec<PathBuf>> {
    let out = Command::new("git")
        .arg("ls-files")
        .arg("-z")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        out.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect(),
    )
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" || name == ".spur" {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file() {
            if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_when_a_file_changes_but_not_for_the_state_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "one").unwrap();
        let state = root.join(".spur");
        let before = fingerprint(root, &state).unwrap();
        fs::create_dir_all(state.join("runs")).unwrap();
        fs::write(state.join("runs/j"), "x").unwrap();
        assert_eq!(before, fingerprint(root, &state).unwrap());
        fs::write(root.join("a.txt"), "two").unwrap();
        assert_ne!(before, fingerprint(root, &state).unwrap());
    }

    #[test]
    fn a_file_digest_is_the_sha256_of_its_content_and_a_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let content = vec![7u8; 200_000];
        fs::write(&path, &content).unwrap();
        let digest: [u8; 32] = Sha256::digest(&content).into();
        assert_eq!(file_sha256(&path).unwrap(), digest);
        let fifo = dir.path().join("fifo");
        if Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(matches!(
                file_sha256(&fifo),
                Err(ReadError::NotRegular { .. })
            ));
        }
    }

    #[test]
    fn in_a_git_repository_an_ignored_file_counts_but_an_ignored_directory_is_not_walked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(root)
                .output()
                .unwrap()
        };
        if !git(&["init", "-q"]).status.success() {
            return; // no git on this machine: the walk fallback is tested above
        }
        fs::write(root.join(".gitignore"), "out.txt\nbuild/\n").unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("build/a.o"), "1").unwrap();
        let state = root.join(".spur");
        let before = fingerprint(root, &state).unwrap();
        fs::write(root.join("build/a.o"), "2").unwrap();
        assert_eq!(
            before,
            fingerprint(root, &state).unwrap(),
            "build/ is not walked"
        );
        fs::write(root.join("out.txt"), "agent output").unwrap();
        assert_ne!(
            before,
            fingerprint(root, &state).unwrap(),
            "an ignored file counts"
        );
    }
}
