//! The `file-exists` guard: passes when `options.path` exists (file, directory, or a
//! symlink whose target exists).

use std::path::Path;
use std::time::Instant;

use crate::guard_result::GuardResult;

/// The `file-exists` guard: passes when `path` exists; an error checking it fails the guard.
pub fn file_exists_guard(path: &Path) -> GuardResult {
    let started = Instant::now();
    match path.try_exists() {
        Ok(true) => GuardResult::pass(format!("{} exists", path.display()), started.elapsed()),
        Ok(false) => GuardResult::fail(
            format!("{} does not exist", path.display()),
            started.elapsed(),
        ),
        Err(e) => GuardResult::fail(
            format!("cannot check {}: {e}", path.display()),
            started.elapsed(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_for_files_and_dirs_fails_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        assert!(file_exists_guard(&dir.path().join("a")).passed);
        assert!(file_exists_guard(dir.path()).passed);
        let missing = file_exists_guard(&dir.path().join("b"));
        assert!(!missing.passed);
        assert!(missing.detail.ends_with("does not exist"));
    }
}
