//! Finding a program on PATH: the first directory holding an executable regular file of
//! that name. One search serves both the spawner (which resolves a child's program the way
//! `execvp` would) and spur's own look-ups (plugins, the system jq).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Look `name` up in `path` (a PATH value; the process's PATH when `None`) for spur's own
/// use (plugins, the system jq, `spur agent doctor`). Empty entries are skipped: spur never picks a program from whatever directory it
/// happens to run in.
pub fn find_executable(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let inherited;
    let path = match path {
        Some(p) => p,
        None => {
            inherited = std::env::var_os("PATH")?;
            &inherited
        }
    };
    let dirs = std::env::split_paths(path).filter(|dir| !dir.as_os_str().is_empty());
    first_executable(OsStr::new(name), dirs, None)
}

/// `name` in the directories of `path` as `execvp` searches them for a child: an empty
/// entry means the working directory, and a relative entry is taken from `cwd` (the
/// child's working directory, where `exec` resolves it; spur's own when `None`).
pub(crate) fn search_path(name: &OsStr, path: &OsStr, cwd: Option<&Path>) -> Option<PathBuf> {
    let dirs = std::env::split_paths(path).map(|dir| {
        if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        }
    });
    first_executable(name, dirs, cwd)
}

/// The first `dir/name` that is an executable regular file; a relative candidate is
/// probed from `cwd` but returned as it was formed.
fn first_executable(
    name: &OsStr,
    dirs: impl Iterator<Item = PathBuf>,
    cwd: Option<&Path>,
) -> Option<PathBuf> {
    dirs.map(|dir| dir.join(name)).find(|candidate| {
        let probe = match cwd {
            Some(dir) if candidate.is_relative() => dir.join(candidate),
            _ => candidate.clone(),
        };
        std::fs::metadata(probe).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_dir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(dir.path().join("plain"), "").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, exe)
    }

    #[test]
    fn finds_only_executable_files() {
        let (dir, exe) = tool_dir();
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_executable("tool", Some(&path)), Some(exe));
        assert_eq!(find_executable("plain", Some(&path)), None);
        assert_eq!(find_executable("missing", Some(&path)), None);
    }

    #[test]
    fn a_child_search_reads_empty_and_relative_entries_from_its_working_directory() {
        let (dir, _) = tool_dir();
        let cwd = Some(dir.path());
        assert_eq!(
            search_path(OsStr::new("tool"), OsStr::new(":/nonexistent"), cwd),
            Some(PathBuf::from("./tool"))
        );
        assert_eq!(
            search_path(OsStr::new("tool"), OsStr::new("/nonexistent:."), cwd),
            Some(PathBuf::from("./tool"))
        );
    }
}
