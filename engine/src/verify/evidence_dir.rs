//! Where a verify run writes evidence, and how the evidence becomes visible.
//!
//! A full run stages its evidence in a hidden directory beside the published one
//! (`.spur/run/.<scope>-evidence.next/`) and publishes it at the end by exchanging the two
//! directories in one `renameat2(RENAME_EXCHANGE)`. Readers of `<scope>-evidence/` see
//! the previous run's complete evidence until the new run's complete evidence replaces
//! it; a run that crashes publishes nothing. After the exchange the staging directory holds
//! the previous run's evidence, and the next run overwrites those files in place: on ext4,
//! creating and deleting hundreds of small files per run costs more than running trivial
//! gates (inode allocation skips recently freed inodes), and renaming each file takes the
//! directory's lock. In steady state a gate's evidence costs an `open`, a `write` and a
//! `close` per file.
//!
//! A run of one gate (`--gate NAME`) writes straight into the published directory, each
//! file replaced through a temporary file and a rename, and leaves the other gates' evidence
//! in place.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A directory the run could not prepare, and why.
#[derive(Debug)]
pub(crate) struct EvidenceDirError {
    pub(crate) path: PathBuf,
    pub(crate) source: std::io::Error,
}

/// The evidence directory of one verify run.
#[derive(Debug)]
pub(crate) struct EvidenceDir {
    published: PathBuf,
    /// Where this run writes: the staging directory, or `published` itself.
    writing: PathBuf,
    staged: bool,
}

impl EvidenceDir {
    /// A full run: stage in `.<name>.next` beside `published`. Whatever the staging
    /// directory holds except the evidence files of `gates` (which are overwritten in
    /// place) is deleted first, so a removed gate's evidence, a stale findings file or a
    /// file a gate wrote in an earlier run cannot be published by this one.
    pub(crate) fn staged<'a>(
        published: PathBuf,
        gates: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, EvidenceDirError> {
        let name = published
            .file_name()
            .map_or_else(|| "evidence".into(), |n| n.to_string_lossy().into_owned());
        let writing = published.with_file_name(format!(".{name}.next"));
        prepare_staging(&writing, gates).map_err(|source| EvidenceDirError {
            path: writing.clone(),
            source,
        })?;
        Ok(Self {
            published,
            writing,
            staged: true,
        })
    }

    /// A run of one gate: write into `published` directly.
    pub(crate) fn direct(published: PathBuf) -> Result<Self, EvidenceDirError> {
        std::fs::create_dir_all(&published).map_err(|source| EvidenceDirError {
            path: published.clone(),
            source,
        })?;
        Ok(Self {
            writing: published.clone(),
            published,
            staged: false,
        })
    }

    /// The directory gates see as `SPUR_EVIDENCE_DIR` while they run.
    pub(crate) fn writing(&self) -> &Path {
        &self.writing
    }

    /// The directory readers see, and where evidence paths point.
    pub(crate) fn published(&self) -> &Path {
        &self.published
    }

    /// The names of the regular files in the published directory, in one listing (none
    /// when it cannot be read, so a check against it fails closed).
    pub(crate) fn published_files(&self) -> HashSet<OsString> {
        let Ok(entries) = std::fs::read_dir(&self.published) else {
            return HashSet::new();
        };
        entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
            .map(|entry| entry.file_name())
            .collect()
    }

    /// Write the file `name` of this run's evidence. Staged: overwritten in place (the
    /// staging directory is not visible until it is complete). Direct: replaced through a
    /// temporary file, never partial.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.writing.join(name);
        if self.staged {
            overwrite(&path, bytes)
        } else {
            write_replacing(&path, bytes)
        }
    }

    /// Remove the file `name` (e.g. after a failed write, so no older copy survives).
    pub(crate) fn discard(&self, name: &str) {
        let _ = std::fs::remove_file(self.writing.join(name));
    }

    /// Make a staged run's evidence the published evidence (nothing to do for a direct
    /// run).
    pub(crate) fn publish(&self) -> std::io::Result<()> {
        if !self.staged {
            return Ok(());
        }
        match exchange(&self.writing, &self.published) {
            Ok(()) => Ok(()),
            // Nothing published yet: the staging directory becomes it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::rename(&self.writing, &self.published)
            }
            // A filesystem without RENAME_EXCHANGE: three renames, and for a moment no
            // published directory (never a mixed one).
            Err(e) if exchange_unsupported(&e) => {
                let aside = self.writing.with_extension("prev");
                let _ = std::fs::remove_dir_all(&aside);
                std::fs::rename(&self.published, &aside)?;
                std::fs::rename(&self.writing, &self.published)?;
                std::fs::rename(&aside, &self.writing)
            }
            Err(e) => Err(e),
        }
    }
}

/// Create the staging directory (replacing anything that is not a directory: the name is
/// spur's, and an exchange with a published path that was a file leaves a file here) and
/// delete what it holds except the evidence files of `gates`.
fn prepare_staging<'a>(
    writing: &Path,
    gates: impl IntoIterator<Item = &'a str>,
) -> std::io::Result<()> {
    match std::fs::symlink_metadata(writing) {
        Ok(meta) if !meta.is_dir() => std::fs::remove_file(writing)?,
        _ => {}
    }
    std::fs::create_dir_all(writing)?;
    let keep: std::collections::HashSet<String> = gates
        .into_iter()
        .flat_map(|gate| [format!("{gate}.json"), format!("{gate}.md")])
        .collect();
    for entry in std::fs::read_dir(writing)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_file() && keep.contains(entry.file_name().to_string_lossy().as_ref()) {
            continue;
        }
        let path = entry.path();
        if kind.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Replace `path` with `bytes` through a temporary file and a rename: readers never see a
/// partial file (they may briefly see none). No fsync: evidence and reports are regenerated
/// by the next verify run, and on this project's disks an fsync costs ~10 ms. The ledger
/// and the verdict artifact, which are records, are written durably.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let result = std::fs::write(&tmp, bytes)
        .or_else(|e| {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(e);
            }
            std::fs::create_dir_all(dir)?;
            std::fs::write(&tmp, bytes)
        })
        .and_then(|()| {
            // Renaming over an existing file makes ext4 flush the new data first (its
            // replace-by-rename safeguard), which costs as much as an fsync; removing the
            // old file first avoids that.
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write `bytes` at the start of `path` (created if missing) and cut it to their length.
/// Not `O_TRUNC`: truncating a file to zero makes ext4 flush it on close. Only a regular
/// file with no other link is written: a gate may have put a symbolic link (not followed),
/// a hard link, a FIFO (not waited on) or a directory under the name, and then the write
/// fails.
fn overwrite(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    // A second link would be another file's content, overwritten.
    if !meta.is_file() || meta.nlink() > 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file of its own", path.display()),
        ));
    }
    file.write_all(bytes)?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if meta.len() > len {
        file.set_len(len)?;
    }
    Ok(())
}

/// Swap two directories atomically (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

fn exchange_unsupported(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Unsupported
        || matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn staged_evidence_appears_only_when_published_and_replaces_the_old_whole() {
        let root = tempfile::tempdir().unwrap();
        let published = root.path().join("_project-evidence");
        let first = EvidenceDir::staged(published.clone(), ["a", "b"]).unwrap();
        first.write("a.json", b"first a, a long line\n").unwrap();
        first.write("b.json", b"first b\n").unwrap();
        assert!(!published.exists(), "nothing is visible before publishing");
        first.publish().unwrap();
        assert_eq!(names(&published), ["a.json", "b.json"]);

        // The second run knows only gate `a`: `b`'s evidence must not survive it, and a
        // shorter rewrite of a reused file leaves nothing of the old content.
        let second = EvidenceDir::staged(published.clone(), ["a"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(published.join("a.json")).unwrap(),
            "first a, a long line\n",
            "the published evidence is untouched while the run stages"
        );
        second.write("a.json", b"second\n").unwrap();
        second.publish().unwrap();
        assert_eq!(names(&published), ["a.json"]);
        assert_eq!(
            std::fs::read_to_string(published.join("a.json")).unwrap(),
            "second\n"
        );
        // The third run reuses the first run's files and deletes what it does not need.
        let third = EvidenceDir::staged(published.clone(), ["a"]).unwrap();
        assert_eq!(names(third.writing()), ["a.json"]);
    }

    #[test]
    fn a_direct_run_replaces_one_file_and_leaves_the_rest() {
        let root = tempfile::tempdir().unwrap();
        let published = root.path().join("T1-evidence");
        std::fs::create_dir_all(&published).unwrap();
        std::fs::write(published.join("other.md"), "kept").unwrap();
        std::fs::write(published.join("a.md"), "a much longer previous content").unwrap();
        let dir = EvidenceDir::direct(published.clone()).unwrap();
        dir.write("a.md", b"new").unwrap();
        dir.publish().unwrap();
        assert_eq!(
            std::fs::read_to_string(published.join("a.md")).unwrap(),
            "new"
        );
        assert_eq!(
            names(&published),
            ["a.md", "other.md"],
            "no temporary file left"
        );
    }
}
