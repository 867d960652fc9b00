//! Finding a program on PATH, as `sh` would: the first directory holding an executable
//! regular file of that name.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Look `name` up in `path` (a PATH value; the process's PATH when `None`).
pub fn find_executable(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let inherited;
    let path = match path {
        Some(p) => p,
        None => {
            inherited = std::env::var_os("PATH")?;
            &inherited
        }
    };
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_executable_files() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(dir.path().join("plain"), "").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_executable("tool", Some(&path)), Some(exe));
        assert_eq!(find_executable("plain", Some(&path)), None);
        assert_eq!(find_executable("missing", Some(&path)), None);
    }
}
