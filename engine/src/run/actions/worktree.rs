//! The fingerprint `agent.run requireDiff` and `proof.fingerprint` compare: the tree
//! fingerprint ([`crate::tree`]) — every file git would see, walked without trusting the
//! index, with permission bits and link targets — with nothing left out but `.git` and the
//! state directory. Plus the content digest of one file, read through the bounded reader.

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::store::bounded_read::{open_regular, ReadError};
use crate::tree::{self, Excludes};

/// Fingerprint of the tree under `root`, excluding `state_dir`.
pub(crate) fn fingerprint(root: &Path, state_dir: &Path) -> io::Result<String> {
    tree::fingerprint(root, state_dir, &Excludes::none())
        .map(|f| f.hex)
        .map_err(|e| io::Error::other(e.to_string()))
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

#[cfg(test)]
mod tests {
    use std::fs;
    use std::process::Command;

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
    fn a_git_ignored_file_does_not_count_but_editing_the_gitignore_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join(".gitignore"), "out.txt\nbuild/\n").unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("build/a.o"), "1").unwrap();
        let state = root.join(".spur");
        let before = fingerprint(root, &state).unwrap();
        fs::write(root.join("build/a.o"), "2").unwrap();
        fs::write(root.join("out.txt"), "agent output").unwrap();
        assert_eq!(before, fingerprint(root, &state).unwrap(), "ignored");
        fs::write(root.join(".gitignore"), "build/\n").unwrap();
        assert_ne!(before, fingerprint(root, &state).unwrap());
    }
}
