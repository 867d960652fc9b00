//! Answering a paused run from the page: exactly `spur continue RUN --answer A
//! --answered-by WHO`, run as a child of the server, so the answer takes the command line's
//! one code path (checks, journal, done gate) in a process of its own, and a long step
//! after the answer does not hold the server.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use spur_engine::store::state_dir::StateDir;

/// How long the page waits for the resumed run before showing it as it stands (the page
/// then follows it live).
const WAIT: Duration = Duration::from_secs(10);

/// Most bytes of `spur continue`'s standard error kept to show.
const STDERR_CAP: u64 = 16 * 1024;

/// `spur continue`'s exit codes that mean it could not go on (usage, cannot start); the
/// others (done, failed, paused again) mean the answer was taken.
const REFUSED: [i32; 2] = [2, 4];

/// Run `spur continue` for `run_id` with `answer` (none: a `pause: true` state). `Err`
/// holds what it said when it refused.
pub(crate) fn give(
    spur: &Path,
    state_dir: &StateDir,
    run_id: &str,
    answer: Option<&str>,
    who: &str,
) -> Result<(), String> {
    let mut command = Command::new(spur);
    command
        .arg("continue")
        .arg(run_id)
        .arg("--state-dir")
        .arg(state_dir.root())
        .arg("--answered-by")
        .arg(who);
    if let Some(a) = answer {
        command.arg("--answer").arg(a);
    }
    let mut child = command
        .current_dir(state_dir.project_root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", spur.display()))?;
    let stderr = child.stderr.take();
    let (done, finished) = mpsc::channel();
    // One thread reads what it says and reaps it, however long the run goes on.
    std::thread::spawn(move || {
        let mut said = Vec::new();
        if let Some(s) = stderr {
            let _ = s.take(STDERR_CAP).read_to_end(&mut said);
        }
        let status = child.wait();
        let _ = done.send((status, said));
    });
    match finished.recv_timeout(WAIT) {
        Ok((Ok(status), said)) if status.code().is_some_and(|c| REFUSED.contains(&c)) => {
            Err(String::from_utf8_lossy(&said).trim().to_owned())
        }
        Ok((Err(e), _)) => Err(format!("spur continue: {e}")),
        _ => Ok(()),
    }
}
