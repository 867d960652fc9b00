//! A small harness for integration tests: a temp project directory with files in it, and
//! the `spur` binary run inside it with a clean, colourless environment.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("create temp dir"),
        }
    }

    /// Write `contents` to `rel` (parents created).
    pub fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&path, contents).expect("write file");
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.join(rel)).expect("read file")
    }

    /// `spur` with the project as its working directory.
    pub fn spur(&self) -> Command {
        let mut cmd = Command::cargo_bin("spur").expect("spur binary");
        cmd.current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("FORCE_COLOR");
        cmd
    }
}

/// Replace the temp dir path in `text` with `[PROJECT]` so snapshots are stable.
pub fn redact(project: &Project, text: &str) -> String {
    let root = project.path().to_string_lossy().into_owned();
    let canonical = project
        .path()
        .canonicalize()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| root.clone());
    text.replace(&canonical, "[PROJECT]")
        .replace(&root, "[PROJECT]")
}

/// Path of a file in the repository (for fixtures in `examples/`, `pipelines/`).
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Whether process `pid` is still running and not already being killed: false when it is
/// gone, a zombie, or has SIGKILL or SIGTERM pending (it dies as soon as it is scheduled).
pub fn process_is_running(pid: &str) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let state = field("State:");
    if state.starts_with('Z') || state.starts_with('X') {
        return false;
    }
    let doomed = |mask: String| {
        u64::from_str_radix(&mask, 16).is_ok_and(|m| m & ((1 << 8) | (1 << 14)) != 0)
    };
    !(doomed(field("SigPnd:")) || doomed(field("ShdPnd:")))
}
