//! What to run and how: [`ProcessSpec`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::group::Leader;
use crate::outcome::ProcessOutcome;

/// Default in-memory capture cap per stream (1 MiB).
pub(crate) const DEFAULT_CAPTURE_LIMIT: usize = 1 << 20;
/// Default time between SIGTERM and SIGKILL when a timeout fires.
pub(crate) const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);

/// Called once the child runs, with its group, before anything waits for it: a run
/// journals the group there. An error kills the group at once and the run fails to start
/// with it.
#[derive(Clone)]
pub struct StartHook(Arc<dyn Fn(Leader) -> Result<(), String> + Send + Sync>);

impl StartHook {
    /// A hook calling `hook`.
    pub fn new(hook: impl Fn(Leader) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(hook))
    }

    pub(crate) fn call(&self, leader: Leader) -> Result<(), String> {
        (self.0)(leader)
    }
}

impl std::fmt::Debug for StartHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartHook")
    }
}

/// Which of the child's output streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Its standard output.
    Stdout,
    /// Its standard error.
    Stderr,
}

/// Called with every chunk of the child's output as it arrives (in the waiting thread, so it
/// must be quick); a `Some(reason)` stops the child: its whole group is killed at once and
/// it ends [`crate::ProcessStatus::Stopped`] with the reason. An agent whose spend crosses
/// its budget is stopped so.
#[derive(Clone)]
pub struct OutputWatch(Arc<Mutex<WatchFn>>);

type WatchFn = dyn FnMut(OutputStream, &[u8]) -> Option<String> + Send;

impl OutputWatch {
    /// A watch calling `watch`.
    pub fn new(watch: impl FnMut(OutputStream, &[u8]) -> Option<String> + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(watch)))
    }

    pub(crate) fn call(&self, stream: OutputStream, bytes: &[u8]) -> Option<String> {
        let mut watch = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (watch)(stream, bytes)
    }
}

impl std::fmt::Debug for OutputWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputWatch")
    }
}

/// What to run and how.
#[derive(Clone)]
pub struct ProcessSpec {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: Option<PathBuf>,
    /// Variables added to (or overriding) the inherited environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Variables removed from the inherited environment (applied before `env`).
    pub(crate) env_remove: Vec<OsString>,
    /// Bytes written to the child's stdin, which is then closed. `None`: stdin is /dev/null.
    pub(crate) stdin: Option<Vec<u8>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) kill_grace: Duration,
    /// Bytes of stdout and of stderr kept in memory (each); the rest is dropped from memory
    /// (still written to the log). 0 keeps nothing.
    pub(crate) capture_limit: usize,
    /// Both streams are appended here as they arrive; an error is why it could not be
    /// opened (the run then fails to start with it).
    pub(crate) log: Option<Result<Arc<File>, String>>,
    pub(crate) on_start: Option<StartHook>,
    /// Started outside the sandbox ([`crate::sandbox`]): only spur's own binary, for a
    /// nested call the run itself checked.
    pub(crate) unconfined: bool,
    pub(crate) watch: Option<OutputWatch>,
}

impl std::fmt::Debug for ProcessSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessSpec")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("env", &self.env)
            .field("env_remove", &self.env_remove)
            .field("stdin", &self.stdin.as_ref().map(Vec::len))
            .field("timeout", &self.timeout)
            .field("capture_limit", &self.capture_limit)
            .field("log", &self.log.is_some())
            .field("on_start", &self.on_start.is_some())
            .field("unconfined", &self.unconfined)
            .field("watch", &self.watch.is_some())
            .finish()
    }
}

impl ProcessSpec {
    /// `program` with `args`, no shell involved.
    pub fn new<I, S>(program: impl AsRef<OsStr>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self {
            program: program.as_ref().to_owned(),
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            cwd: None,
            env: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            timeout: None,
            kill_grace: DEFAULT_KILL_GRACE,
            capture_limit: DEFAULT_CAPTURE_LIMIT,
            log: None,
            on_start: None,
            unconfined: false,
            watch: None,
        }
    }

    /// `sh -c COMMAND`.
    pub fn shell(command: &str) -> Self {
        Self::new("sh", ["-c", command])
    }

    /// Run in `dir` (the caller's working directory when not set).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Set `name` to `value` in the child's environment (the last setting of a name wins).
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Remove `name` from the inherited environment.
    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Self {
        self.env_remove.push(name.as_ref().to_owned());
        self
    }

    /// Feed `bytes` to the child's stdin, then close it.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Kill the process group when the child runs longer than `timeout` (SIGTERM, then SIGKILL).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Time between SIGTERM and SIGKILL when the timeout fires (500 ms by default).
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Keep at most `bytes` of stdout and of stderr in memory (each).
    pub fn capture_limit(mut self, bytes: usize) -> Self {
        self.capture_limit = bytes;
        self
    }

    /// Append both output streams to `opened` (a file the caller opened for appending), or
    /// fail to start with the error when it could not be opened.
    pub fn log(mut self, opened: Result<File, String>) -> Self {
        self.log = Some(opened.map(Arc::new));
        self
    }

    /// Call `hook` with the child's group once it runs (see [`StartHook`]).
    pub fn on_start(mut self, hook: StartHook) -> Self {
        self.on_start = Some(hook);
        self
    }

    /// Start it outside the sandbox children otherwise run in ([`crate::sandbox`]): for
    /// spur's own binary answering a nested call the run has checked, never for a step.
    pub fn unconfined(mut self) -> Self {
        self.unconfined = true;
        self
    }

    /// Call `watch` with the child's output as it arrives; it may stop the child
    /// (see [`OutputWatch`]).
    pub fn watch(mut self, watch: OutputWatch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Run to completion (or timeout). Never panics; a spawn failure is an outcome.
    pub fn run(&self) -> ProcessOutcome {
        crate::run::run(self)
    }
}
