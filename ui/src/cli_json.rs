//! The task list and the audit log as the CLI prints them with `--json`: the server runs
//! `spur task list --json`, `spur audit verify --json` and `spur audit list --json`, so the
//! API's shapes are the command line's by construction. All three only read.

use std::path::Path;
use std::process::{Command, Stdio};

use spur_engine::store::state_dir::StateDir;

/// The JSON `spur ARGS…` prints for the state directory. `spur audit verify` exits 1 or 3
/// when something is tampered or unverifiable and still prints its document: any exit with
/// a JSON document on standard output is an answer.
pub(crate) fn spur_json(
    spur: &Path,
    state_dir: &StateDir,
    args: &[&str],
) -> Result<serde_json::Value, String> {
    let output = Command::new(spur)
        .args(args)
        .env("SPUR_STATE_DIR", state_dir.root())
        .current_dir(state_dir.project_root())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", spur.display()))?;
    serde_json::from_slice(&output.stdout).map_err(|_| {
        format!(
            "spur {} said: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )
    })
}
