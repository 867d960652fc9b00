//! `spur` calls from a run's steps (ARCHITECTURE.md, *Sandbox*): a sandboxed step cannot
//! write spur's protected state, so the calls that write it (`spur task
//! verdict|update|certify`, `feature update`, `verify`, `run`, `continue`, `retry`) reach
//! the run's own process through a Unix socket named in the step's environment
//! ([`RUN_SOCKET_VAR`]). The run checks each request ([`check`]: the verbs it takes, no
//! `--state-dir`, no `--force-done`, no `spur policy approve`) and answers it by running its own `spur` binary
//! outside the sandbox, in the run's state directory and under the run's own id (bound by
//! the runner, [`RunSocket::serve_run`]; not the one a step sends) — so the call takes the
//! run's pinned policy (`PolicySource::for_invocation`).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use spur_process::{ProcessSpec, ProcessStatus};

use crate::store::state_dir::StateDir;

/// The environment variable that names the run's socket in a step's environment.
pub const RUN_SOCKET_VAR: &str = "SPUR_RUN_SOCKET";

/// Why `--force-done` from a step is refused.
pub const OVERRIDE_REFUSAL: &str = "an override comes from a person, not from a step";

/// Why `spur policy approve` from a step is refused.
pub const APPROVAL_REFUSAL: &str = "an approval comes from a person, not from a step";

/// The calls that write spur's protected state, which a step's call is forwarded for: a
/// command, and the subcommands of it that are (empty: all).
const FORWARDED: &[(&str, &[&str])] = &[
    (
        "task",
        &[
            "verdict",
            "update",
            "certify",
            "record",
            "create",
            "batch-create",
        ],
    ),
    ("feature", &["create", "update", "sync"]),
    // Sent to the run only to be refused ([`check`]): a step never approves a policy.
    ("policy", &["approve"]),
    ("lifecycle", &[]),
    ("verify", &[]),
    ("run", &[]),
    ("continue", &[]),
    ("retry", &[]),
];

/// The most bytes of one request (its argv and directory).
const MAX_REQUEST_BYTES: u64 = 1024 * 1024;

/// How long the run lets one call run.
const CALL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// One call: the arguments after `spur`, where it was made, and the run it says it is
/// from (`SPUR_RUN_ID` of the step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NestedRequest {
    /// The arguments after `spur`.
    pub argv: Vec<String>,
    /// The step's working directory.
    pub cwd: PathBuf,
    /// `SPUR_RUN_ID` of the step, if set.
    pub run_id: Option<String>,
}

/// The run's answer: refused (why), or what the call printed and its exit code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NestedReply {
    /// Why the run refused the call; nothing ran.
    pub refused: Option<String>,
    /// The call's exit code.
    pub code: i32,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// Whether a `spur` call with `argv` (after `spur`) goes to the run: one that writes
/// spur's protected state ([`FORWARDED`]). Others run in the step (reads work; a write of
/// protected state fails there).
pub fn is_forwarded(argv: &[String]) -> bool {
    let mut words = positional(argv);
    let Some(command) = words.next() else {
        return false;
    };
    FORWARDED.iter().any(|(name, subcommands)| {
        *name == command
            && (subcommands.is_empty() || words.next().is_some_and(|s| subcommands.contains(&s)))
    })
}

/// The words of `argv` that are not options, the global `--state-dir`'s value skipped.
fn positional(argv: &[String]) -> impl Iterator<Item = &str> {
    let mut skip_next = false;
    argv.iter().filter_map(move |arg| {
        if std::mem::take(&mut skip_next) {
            return None;
        }
        if arg == "--state-dir" {
            skip_next = true;
            return None;
        }
        (!arg.starts_with('-')).then_some(arg.as_str())
    })
}

/// The calls the run answers, for messages.
fn forwarded_list() -> String {
    FORWARDED
        .iter()
        .filter(|(name, _)| *name != "policy")
        .map(|(name, subs)| match subs.is_empty() {
            true => format!("`spur {name}`"),
            false => format!("`spur {name} {}`", subs.join("|")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The run's check of a call made in `cwd`, for a run in `state_root`: `Err(why)` refuses
/// it. `--state-dir` is taken only when it names the run's own state directory.
pub fn check(argv: &[String], cwd: &Path, state_root: &Path) -> Result<(), String> {
    if !is_forwarded(argv) {
        return Err(format!(
            "a run answers only {} from its steps",
            forwarded_list()
        ));
    }
    if positional(argv).next() == Some("policy") {
        return Err(APPROVAL_REFUSAL.to_owned());
    }
    let same_dir = |named: &str| {
        let named = cwd.join(named);
        matches!(
            (std::fs::canonicalize(named), std::fs::canonicalize(state_root)),
            (Ok(a), Ok(b)) if a == b
        )
    };
    for (i, arg) in argv.iter().enumerate() {
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg.as_str(), None),
        };
        match flag {
            "--force-done" => return Err(OVERRIDE_REFUSAL.to_owned()),
            "--state-dir" => {
                let value = value.or_else(|| argv.get(i + 1).map(String::as_str));
                if !value.is_some_and(same_dir) {
                    return Err(format!(
                        "--state-dir is not taken from a step unless it names the run's own \
                         ({}): the call runs in its run's state directory",
                        state_root.display()
                    ));
                }
            }
            "--key-file" => return Err("--key-file is not taken from a step".to_owned()),
            _ => {}
        }
    }
    Ok(())
}

/// The run's socket: a listener in a private directory, answering calls on threads of
/// its own until dropped. It listens from the first time a step is given its path
/// ([`RunSocket::path_for_steps`]): a run that starts no child makes no directory, socket
/// or thread for it.
#[derive(Debug)]
pub struct RunSocket {
    dir: PathBuf,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    run_id: Arc<Mutex<Option<String>>>,
    server: Server,
    /// Whether it listens (set by the first step given its path).
    listening: OnceLock<bool>,
}

impl RunSocket {
    /// A socket in a new directory (mode 0700) under the system's temporary directory (a
    /// socket's path must be short), answering calls with `spur_bin` in `state_dir`.
    pub fn serve(state_dir: &StateDir, spur_bin: &Path) -> io::Result<Self> {
        let dir = private_dir_path()?;
        let path = dir.join("run.sock");
        let run_id = Arc::new(Mutex::new(None));
        let server = Server {
            state_root: state_dir.root().to_path_buf(),
            tree: state_dir.tree().map(Path::to_path_buf),
            spur_bin: spur_bin.to_path_buf(),
            run_id: Arc::clone(&run_id),
        };
        Ok(Self {
            dir,
            path,
            stop: Arc::new(AtomicBool::new(false)),
            run_id,
            server,
            listening: OnceLock::new(),
        })
    }

    /// Answer calls as run `run_id` from now on: they get its id (and so its pinned
    /// policy), whatever `SPUR_RUN_ID` the step sends.
    pub fn serve_run(&self, run_id: &crate::run::RunId) {
        let mut bound = self
            .run_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *bound = Some(run_id.as_str().to_owned());
    }

    /// The socket's path, for [`RUN_SOCKET_VAR`] in a step's environment; the first call
    /// starts listening on it. Should that fail (the temporary directory full or not
    /// writable), nothing listens there and a step's call says it cannot reach the run.
    pub fn path_for_steps(&self) -> &Path {
        self.listening.get_or_init(|| self.listen().is_ok());
        &self.path
    }

    fn listen(&self) -> io::Result<()> {
        std::fs::DirBuilder::new().mode(0o700).create(&self.dir)?;
        let started = UnixListener::bind(&self.path).and_then(|listener| {
            let server = self.server.clone();
            let stopping = Arc::clone(&self.stop);
            std::thread::Builder::new()
                .name("spur-run-socket".into())
                .spawn(move || {
                    for stream in listener.incoming() {
                        if stopping.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(stream) = stream else { continue };
                        let server = server.clone();
                        let _ = std::thread::Builder::new()
                            .name("spur-nested-call".into())
                            .spawn(move || server.answer(stream));
                    }
                })
        });
        if started.is_err() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        started.map(|_| ())
    }
}

impl Drop for RunSocket {
    fn drop(&mut self) {
        if self.listening.get() == Some(&true) {
            self.stop.store(true, Ordering::SeqCst);
            // Wakes the accept so the thread sees the stop.
            let _ = UnixStream::connect(&self.path);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// `<tmp>/spur-run-<pid>-<random>/`, not made yet.
fn private_dir_path() -> io::Result<PathBuf> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| io::Error::other(e.to_string()))?;
    let name = format!(
        "spur-run-{}-{}",
        std::process::id(),
        crate::store::digest::sha256_hex(&random)
            .get(..12)
            .unwrap_or_default()
    );
    Ok(std::env::temp_dir().join(name))
}

#[derive(Debug, Clone)]
struct Server {
    state_root: PathBuf,
    /// The run's worktree, when it works in one: the calls read that tree.
    tree: Option<PathBuf>,
    spur_bin: PathBuf,
    /// The run this socket serves, once it has an id.
    run_id: Arc<Mutex<Option<String>>>,
}

impl Server {
    fn answer(&self, stream: UnixStream) {
        let reply = match read_request(&stream) {
            Ok(request) => self.reply_to(&request),
            Err(e) => refused(format!("the request could not be read: {e}")),
        };
        let mut stream = stream;
        if let Ok(mut line) = serde_json::to_vec(&reply) {
            line.push(b'\n');
            let _ = stream.write_all(&line);
        }
    }

    fn reply_to(&self, request: &NestedRequest) -> NestedReply {
        if let Err(why) = check(&request.argv, &request.cwd, &self.state_root) {
            return refused(why);
        }
        let mut spec = ProcessSpec::new(&self.spur_bin, &request.argv)
            .unconfined()
            .cwd(&request.cwd)
            .env("SPUR_STATE_DIR", &self.state_root)
            .env_remove(RUN_SOCKET_VAR)
            .env_remove(crate::store::state_dir::RUN_TREE_VAR)
            .env_remove("SPUR_RUN_ID")
            .timeout(CALL_TIMEOUT)
            .capture_limit(4 * 1024 * 1024);
        let bound = self
            .run_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let run_id = bound.or_else(|| {
            request
                .run_id
                .clone()
                .filter(|id| crate::run::RunId::parse(id).is_ok())
        });
        if let Some(run_id) = run_id {
            spec = spec.env("SPUR_RUN_ID", run_id);
        }
        if let Some(tree) = &self.tree {
            spec = spec.env(crate::store::state_dir::RUN_TREE_VAR, tree);
        }
        let outcome = spec.run();
        let code = match &outcome.status {
            ProcessStatus::Exited(code) => *code,
            _ => 1,
        };
        let mut stderr = String::from_utf8_lossy(&outcome.stderr).into_owned();
        if let ProcessStatus::FailedToStart(why) = &outcome.status {
            stderr.push_str(why);
        }
        NestedReply {
            refused: None,
            code,
            stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
            stderr,
        }
    }
}

fn refused(why: String) -> NestedReply {
    NestedReply {
        refused: Some(why),
        code: 2,
        stdout: String::new(),
        stderr: String::new(),
    }
}

fn read_request(stream: &UnixStream) -> io::Result<NestedRequest> {
    let mut line = Vec::new();
    BufReader::new(stream.take(MAX_REQUEST_BYTES)).read_until(b'\n', &mut line)?;
    serde_json::from_slice(&line).map_err(io::Error::other)
}

/// Send `request` to the run at `socket` and wait for its reply.
pub fn call(socket: &Path, request: &NestedRequest) -> io::Result<NestedReply> {
    let mut stream = UnixStream::connect(socket)?;
    let mut line = serde_json::to_vec(request).map_err(io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply)?;
    serde_json::from_slice(&reply).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn forwards_the_task_verbs_that_write_state() {
        assert!(is_forwarded(&argv(&[
            "task",
            "verdict",
            "W",
            "--from-answer",
            "a.md"
        ])));
        assert!(is_forwarded(&argv(&[
            "--state-dir",
            "x",
            "task",
            "update",
            "W",
            "done"
        ])));
        assert!(is_forwarded(&argv(&["verify", "--wbs", "W"])));
        assert!(is_forwarded(&argv(&["run", "p.yaml"])));
        assert!(!is_forwarded(&argv(&["task", "show", "W"])));
        assert!(!is_forwarded(&argv(&["--state-dir", "task", "show"])));
        assert!(!is_forwarded(&argv(&["trace", "run"])));
    }

    #[test]
    fn refuses_force_done_and_state_dir_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".spur");
        std::fs::create_dir_all(&state).unwrap();
        let check = |words: &[&str]| check(&argv(words), dir.path(), &state);
        assert_eq!(
            check(&[
                "task",
                "update",
                "W",
                "done",
                "--force-done",
                "--reason",
                "r"
            ]),
            Err(OVERRIDE_REFUSAL.to_owned())
        );
        assert!(check(&["task", "update", "W", "done", "--state-dir=/x"])
            .unwrap_err()
            .starts_with("--state-dir is not taken"));
        assert!(check(&["task", "update", "W", "done", "--state-dir", "/x"]).is_err());
        assert!(check(&["task", "update", "W", "done", "--state-dir", ".spur"]).is_ok());
        assert!(check(&["audit", "verify"]).is_err());
        assert!(check(&["task", "update", "W", "done"]).is_ok());
        // A step's approval is sent to the run, to be refused there.
        assert!(is_forwarded(&argv(&["policy", "approve"])));
        assert!(!is_forwarded(&argv(&["policy", "show"])));
        assert_eq!(
            check(&["policy", "approve"]),
            Err(APPROVAL_REFUSAL.to_owned())
        );
        assert!(!check(&["audit", "verify"]).unwrap_err().contains("policy"));
    }
}
