//! Protected state a spur before the sandbox kept inside `.spur/` (ledgers, journals, the
//! audit log, policy snapshots, lifecycle journals): `spur state adopt` moves it to the
//! protected place (`StateDir::protected_dir`). Never done on its own: a step can write
//! `.spur/`, so only a person decides that what lies there is spur's.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use crate::store::state_dir::StateDir;

/// The names, under `.spur/` then and the protected directory now.
const MOVED: &[&str] = &["ledger", "audit.jsonl", "runs", "policies", "lifecycles"];

/// One name's fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Adopted {
    /// Moved from `from` to `to`.
    Moved {
        /// Where it was.
        from: PathBuf,
        /// Where it is now.
        to: PathBuf,
    },
    /// Left where it was: the protected place already has one.
    Kept {
        /// The old place, left alone.
        from: PathBuf,
        /// What is there already.
        existing: PathBuf,
    },
}

/// Whether `.spur/` holds protected state of an older spur.
pub fn legacy_present(state_dir: &StateDir) -> bool {
    MOVED
        .iter()
        .any(|name| state_dir.root().join(name).exists())
}

/// Move every legacy name whose protected place is free (a rename: same filesystem, else
/// an error naming it). What is moved or kept is returned in order.
pub fn adopt(state_dir: &StateDir) -> io::Result<Vec<Adopted>> {
    let protected = state_dir.protected_dir();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(protected)?;
    let mut done = Vec::new();
    for name in MOVED {
        let from = state_dir.root().join(name);
        if std::fs::symlink_metadata(&from).is_err() {
            continue;
        }
        let to = protected.join(name);
        if std::fs::symlink_metadata(&to).is_ok() {
            done.push(Adopted::Kept { from, existing: to });
            continue;
        }
        std::fs::rename(&from, &to).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot move {} to {}: {e}", from.display(), to.display()),
            )
        })?;
        done.push(Adopted::Moved { from, to });
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_what_the_protected_place_lacks_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root().join("ledger/tasks")).unwrap();
        std::fs::write(state.root().join("ledger/tasks/T1.jsonl"), "x\n").unwrap();
        std::fs::write(state.root().join("audit.jsonl"), "old\n").unwrap();
        std::fs::create_dir_all(state.protected_dir()).unwrap();
        std::fs::write(state.protected_dir().join("audit.jsonl"), "new\n").unwrap();
        assert!(legacy_present(&state));
        let done = adopt(&state).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(
            std::fs::read_to_string(state.task_ledgers_dir().join("T1.jsonl")).unwrap(),
            "x\n"
        );
        assert_eq!(
            std::fs::read_to_string(state.audit_path()).unwrap(),
            "new\n"
        );
        assert!(matches!(done[1], Adopted::Kept { .. }));
    }
}
