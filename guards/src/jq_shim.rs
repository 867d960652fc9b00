//! Shell steps get `jq` even on machines without one: a shim directory holds a `jq`
//! symlink to the spur executable, and spur behaves as jq when started under that name.
//! The runner prepends the directory to PATH according to `--jq auto|embedded|system`.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use spur_process::find_executable;

/// Which jq shell steps see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JqMode {
    /// The system jq when PATH has one, else the embedded one (the default).
    #[default]
    Auto,
    /// Always the embedded jq, first on PATH.
    Embedded,
    /// Never add the shim: shell steps see whatever PATH has (possibly no jq).
    System,
}

impl FromStr for JqMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(JqMode::Auto),
            "embedded" => Ok(JqMode::Embedded),
            "system" => Ok(JqMode::System),
            other => Err(format!(
                "unknown jq mode `{other}` (expected auto, embedded or system)"
            )),
        }
    }
}

/// Make `dir/jq` a symlink to `spur_exe` (created or replaced atomically); returns `dir`.
pub fn ensure_shim_dir(dir: &Path, spur_exe: &Path) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let link = dir.join("jq");
    if std::fs::read_link(&link).is_ok_and(|target| target == spur_exe) {
        return Ok(dir.to_path_buf());
    }
    let temp = dir.join(format!(".jq.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(spur_exe, &temp)?;
    std::fs::rename(&temp, &link).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })?;
    Ok(dir.to_path_buf())
}

/// The directory to prepend to PATH for shell steps, if any, judged against the
/// process's PATH.
pub fn jq_mode_path(mode: JqMode, shim_dir: &Path) -> Option<PathBuf> {
    jq_mode_path_for(mode, shim_dir, std::env::var_os("PATH").as_deref())
}

/// As [`jq_mode_path`], for the PATH value `path` that the child will see.
pub(crate) fn jq_mode_path_for(
    mode: JqMode,
    shim_dir: &Path,
    path: Option<&OsStr>,
) -> Option<PathBuf> {
    match mode {
        JqMode::Embedded => Some(shim_dir.to_path_buf()),
        JqMode::System => None,
        JqMode::Auto => match path.and_then(|p| find_executable("jq", Some(p))) {
            Some(_) => None,
            None => Some(shim_dir.to_path_buf()),
        },
    }
}

/// `dir` followed by `path` (or just `dir`), as a PATH value.
pub fn prepend_path(dir: &Path, path: Option<&OsStr>) -> io::Result<OsString> {
    let rest = path.map(|p| std::env::split_paths(p).collect::<Vec<_>>());
    let all = std::iter::once(dir.to_path_buf()).chain(rest.into_iter().flatten());
    std::env::join_paths(all).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_and_repoints_the_jq_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("shim");
        let made = ensure_shim_dir(&shim, Path::new("/usr/bin/spur-a")).unwrap();
        assert_eq!(made, shim);
        assert_eq!(
            std::fs::read_link(shim.join("jq")).unwrap(),
            Path::new("/usr/bin/spur-a")
        );
        ensure_shim_dir(&shim, Path::new("/usr/bin/spur-b")).unwrap();
        assert_eq!(
            std::fs::read_link(shim.join("jq")).unwrap(),
            Path::new("/usr/bin/spur-b")
        );
        assert_eq!(std::fs::read_dir(&shim).unwrap().count(), 1);
    }

    #[test]
    fn auto_adds_the_shim_only_when_path_has_no_jq() {
        let dir = tempfile::tempdir().unwrap();
        let shim = Path::new("/shim");
        let empty = dir.path().join("empty");
        let with_jq = dir.path().join("with");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(&with_jq).unwrap();
        std::fs::write(with_jq.join("jq"), "").unwrap();
        std::fs::set_permissions(with_jq.join("jq"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let no_jq = Some(empty.as_os_str());
        let has_jq = Some(with_jq.as_os_str());
        assert_eq!(
            jq_mode_path_for(JqMode::Auto, shim, no_jq),
            Some(shim.into())
        );
        assert_eq!(jq_mode_path_for(JqMode::Auto, shim, has_jq), None);
        assert_eq!(
            jq_mode_path_for(JqMode::Embedded, shim, has_jq),
            Some(shim.into())
        );
        assert_eq!(jq_mode_path_for(JqMode::System, shim, no_jq), None);
        assert_eq!("embedded".parse(), Ok(JqMode::Embedded));
        assert!("nope".parse::<JqMode>().is_err());
    }

    #[test]
    fn prepends_to_path() {
        let joined = prepend_path(Path::new("/shim"), Some(OsStr::new("/a:/b"))).unwrap();
        assert_eq!(joined, OsString::from("/shim:/a:/b"));
        assert_eq!(
            prepend_path(Path::new("/shim"), None).unwrap(),
            OsString::from("/shim")
        );
    }
}
