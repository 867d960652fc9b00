//! What the sandbox of steps lets them write (ARCHITECTURE.md, *Sandbox*): the project,
//! the state directory's own folder (`.spur/`: artifacts, views, config, locks), the
//! temporary directories, the home and a few devices — and never the protected state
//! (ledgers, journals, audit log, policy snapshots: `StateDir::protected_dir`) nor the key
//! of the chains. The ruleset itself is `spur_process::sandbox`'s; this module chooses
//! the paths and says when the sandbox is off and why, so a run can say so once.

use std::fmt;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use spur_process::sandbox::{confine_children, Confinement, Unconfined};

use crate::store::state_dir::StateDir;

/// The environment variable that turns the sandbox off (`SPUR_SANDBOX=off`), for a
/// person who needs a step to write outside what the sandbox grants, and for tests of
/// the fallback.
pub const SANDBOX_VAR: &str = "SPUR_SANDBOX";

/// Devices a step may write (or open for writing) whatever the rest says.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Whether the children of this process are sandboxed, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Children cannot write the protected state.
    Enforced {
        /// The kernel enforces only part of the write rights (Landlock ABI before 3).
        partial: bool,
    },
    /// Children run with the user's rights: forgery is detected, not prevented.
    Off(SandboxOff),
}

/// Why the sandbox is off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxOff {
    /// `SPUR_SANDBOX=off`.
    Disabled,
    /// The kernel cannot, or the paths do not allow it.
    Unavailable(Unconfined),
}

impl fmt::Display for SandboxOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxOff::Disabled => write!(f, "{SANDBOX_VAR}=off"),
            SandboxOff::Unavailable(why) => write!(f, "{why}"),
        }
    }
}

impl SandboxStatus {
    /// The one line a run prints when steps are not sandboxed; `None` when they are.
    pub fn fallback_notice(&self) -> Option<String> {
        match self {
            SandboxStatus::Enforced { .. } => None,
            SandboxStatus::Off(why) => Some(format!(
                "sandbox off ({why}): steps can write spur's protected state; forged records \
                 are detected (keyed chains, views checked against the ledger), not prevented"
            )),
        }
    }
}

/// Sandbox every child this process starts from now on, for the project of `state_dir`
/// (see the module docs). The protected directory is made (0700) first so that its
/// place is known. Once per process: a later call reports the first one's status.
pub fn confine_steps(state_dir: &StateDir) -> SandboxStatus {
    confine_with(state_dir, |name| std::env::var_os(name))
}

fn confine_with(
    state_dir: &StateDir,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> SandboxStatus {
    if var(SANDBOX_VAR).is_some_and(|v| v == "off" || v == "0") {
        return SandboxStatus::Off(SandboxOff::Disabled);
    }
    if let Some(current) = spur_process::sandbox::current() {
        return SandboxStatus::Enforced {
            partial: current.partial(),
        };
    }
    let protected_dir = state_dir.protected_dir();
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(protected_dir)
    {
        return SandboxStatus::Off(SandboxOff::Unavailable(Unconfined::Failed(format!(
            "cannot make {}: {e}",
            protected_dir.display()
        ))));
    }
    let mut protected = vec![protected_dir.to_path_buf()];
    if let Some(key) = state_dir.key_file().path() {
        // A key not made yet: its folder, so no step can make one there.
        match key.exists() {
            true => protected.push(key.to_path_buf()),
            false => protected.extend(key.parent().map(PathBuf::from)),
        }
    }
    let mut writable = vec![
        state_dir.project_root().to_path_buf(),
        state_dir.root().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        std::env::temp_dir(),
    ];
    writable.extend(var("TMPDIR").map(PathBuf::from));
    writable.extend(var("HOME").map(PathBuf::from));
    writable.extend(WRITABLE_DEVICES.iter().map(PathBuf::from));
    match Confinement::new(&writable, &protected) {
        Ok(confinement) => {
            let partial = confinement.partial();
            confine_children(confinement);
            SandboxStatus::Enforced { partial }
        }
        Err(why) => SandboxStatus::Off(SandboxOff::Unavailable(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spur_sandbox_off_disables_it_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let status = confine_with(&state, |name| {
            (name == SANDBOX_VAR).then(|| std::ffi::OsString::from("off"))
        });
        assert_eq!(status, SandboxStatus::Off(SandboxOff::Disabled));
        let notice = status.fallback_notice().unwrap();
        assert!(
            notice.starts_with("sandbox off (SPUR_SANDBOX=off)"),
            "{notice}"
        );
    }
}
