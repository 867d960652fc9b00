//! The path a child's program is started from: the program itself when it names a path,
//! else the first executable of that name on the child's PATH, searched as `execvp` would
//! (a relative entry from the child's working directory). `sh` on spur's own PATH is looked
//! up once per process: on a long PATH every lookup is a dozen failed `stat`s.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::executable_search::search_path;
use crate::spec::ProcessSpec;

/// Where to start `spec`'s program from; `ENOENT` when it is found nowhere. A relative
/// result is joined to the child's working directory, where `exec` would resolve it (duct
/// would take it from spur's).
pub(crate) fn resolve(spec: &ProcessSpec) -> io::Result<PathBuf> {
    let name = spec.program.as_os_str();
    let not_found = || io::Error::from_raw_os_error(libc::ENOENT);
    if name.is_empty() {
        return Err(not_found());
    }
    let found = if name.as_encoded_bytes().contains(&b'/') {
        PathBuf::from(name)
    } else {
        let changed = spec.env.iter().rev().find(|(n, _)| n == "PATH");
        let path: Option<OsString> = match changed {
            Some((_, value)) => Some(value.clone()),
            None if spec.env_remove.iter().any(|n| n == "PATH") => None,
            None if name == "sh" => {
                if let Some(shell) = cached_shell() {
                    return Ok(shell.clone());
                }
                std::env::var_os("PATH")
            }
            None => std::env::var_os("PATH"),
        };
        // No PATH at all: the default search path of `execvp`.
        let path = path.unwrap_or_else(|| "/bin:/usr/bin".into());
        search_path(name, &path, spec.cwd.as_deref()).ok_or_else(not_found)?
    };
    Ok(match &spec.cwd {
        Some(dir) if found.is_relative() => dir.join(found),
        _ => found,
    })
}

/// `sh` on the PATH spur was started with, when that lookup gives an absolute path.
pub(crate) fn cached_shell() -> Option<&'static PathBuf> {
    static SHELL: OnceLock<Option<PathBuf>> = OnceLock::new();
    SHELL
        .get_or_init(|| {
            let path = std::env::var_os("PATH")?;
            // A relative entry would be looked up from the child's working directory: only
            // an absolute result is safe to reuse.
            search_path(OsStr::new("sh"), &path, None).filter(|p| p.is_absolute())
        })
        .as_ref()
}
