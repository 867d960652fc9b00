//! Answering a paused run from the page: exactly `spur continue RUN --answer A
//! --answered-by WHO`, run as a child of the server, so the answer takes the command line's
//! one code path (checks, journal, done gate) in a process of its own, and a long step
//! after the answer does not hold the server.
//!
//! How long the page waits for it:
//! - A local run goes on inside that `spur continue` process, to its end or its next
//!   pause, so its exit cannot be what the page waits for (a step may take an hour): the
//!   page waits for it at most [`WAIT`], then shows the run as it stands and follows it
//!   live. An answer refused later than that (it never has been: the checks come first)
//!   would show only as a run still paused.
//! - A run on the engine goes on on a worker: the server runs `spur continue --detach`,
//!   which exits as soon as the server has taken the answer or refused it, and the page
//!   waits for exactly that exit. [`STUCK`] bounds only a `spur continue` that neither
//!   exits nor is refused (a server that accepts the connection and never answers).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use spur_engine::store::state_dir::StateDir;

use crate::source::Engine;

/// How long the page waits for the resumed run before showing it as it stands (the page
/// then follows it live).
const WAIT: Duration = Duration::from_secs(10);

/// The most a page waits for `spur continue --detach` on the engine to exit.
const STUCK: Duration = Duration::from_secs(120);

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
    engine: &Engine,
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
    let wait = match engine {
        Engine::Local => WAIT,
        Engine::Restate { ingress } => {
            command
                .args(["--engine", "restate", "--ingress"])
                .arg(ingress)
                .arg("--detach");
            STUCK
        }
    };
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
    match (finished.recv_timeout(wait), engine) {
        (Ok((Ok(status), said)), _) if status.code().is_some_and(|c| REFUSED.contains(&c)) => {
            Err(String::from_utf8_lossy(&said).trim().to_owned())
        }
        (Ok((Err(e), _)), _) => Err(format!("spur continue: {e}")),
        (Err(_), Engine::Restate { ingress }) => Err(format!(
            "spur continue has not heard from the engine at {ingress} in {} s",
            STUCK.as_secs()
        )),
        _ => Ok(()),
    }
}
