//! Running a child process the way shell guards, shell actions and command gates need it:
//! in its own process group, with a timeout that kills the whole group (grandchildren
//! included), output captured up to a cap and/or appended to a log file.
//!
//! Why not `duct` alone: it kills the child, not the group, so `sh -c 'sleep 100 & …'` leaves
//! an orphan. Here the child leads its own group; a waiter thread blocks in
//! `waitid(WEXITED | WNOWAIT)` (no polling, and the leader stays a zombie so its group id
//! cannot be reused) while the caller waits on a channel with `recv_timeout`. Whatever way the
//! leader ends, the rest of its group is killed before the leader is reaped: an action's
//! processes never outlive it (daemonise deliberately with `setsid` to escape that).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Default in-memory capture cap per stream (1 MiB).
pub const DEFAULT_CAPTURE_LIMIT: usize = 1 << 20;
/// Default time between SIGTERM and SIGKILL when a timeout fires.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);
/// How long to wait, once the group is dead, for output pipes to drain. Only a process that
/// left the group (e.g. via `setsid`) while holding a pipe open can make this matter.
const PIPE_DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What to run and how.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    /// Variables added to (or overriding) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Variables removed from the inherited environment (applied before `env`).
    pub env_remove: Vec<OsString>,
    /// Bytes written to the child's stdin, which is then closed. `None`: stdin is /dev/null.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Option<Duration>,
    pub kill_grace: Duration,
    /// Bytes of stdout and of stderr kept in memory (each); the rest is dropped from memory
    /// (still written to the log file). 0 keeps nothing.
    pub capture_limit: usize,
    /// Both streams are appended here as they arrive (created if missing).
    pub log_file: Option<PathBuf>,
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
            log_file: None,
        }
    }

    /// `sh -c COMMAND`.
    pub fn shell(command: &str) -> Self {
        Self::new("sh", ["-c", command])
    }

    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Self {
        self.env_remove.push(name.as_ref().to_owned());
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    pub fn capture_limit(mut self, bytes: usize) -> Self {
        self.capture_limit = bytes;
        self
    }

    pub fn log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    /// Run to completion (or timeout). Never panics; a spawn failure is an outcome.
    pub fn run(&self) -> ProcessOutcome {
        run(self)
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessStatus {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by this signal (not by our timeout).
    Signalled(i32),
    /// Ran past its timeout; its whole process group was killed.
    TimedOut,
    /// Could not be started (program missing, cwd missing, log file unwritable…).
    FailedToStart(String),
}

impl ProcessStatus {
    pub fn success(&self) -> bool {
        matches!(self, ProcessStatus::Exited(0))
    }
}

impl std::fmt::Display for ProcessStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessStatus::Exited(code) => write!(f, "exited with code {code}"),
            ProcessStatus::Signalled(sig) => write!(f, "killed by signal {sig}"),
            ProcessStatus::TimedOut => write!(f, "timed out"),
            ProcessStatus::FailedToStart(why) => write!(f, "failed to start: {why}"),
        }
    }
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct ProcessOutcome {
    pub status: ProcessStatus,
    pub duration: Duration,
    /// Captured stdout, at most `capture_limit` bytes.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Pid of the child (also its process-group id); `None` if it never started.
    pub pid: Option<u32>,
}

impl ProcessOutcome {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    fn failed_to_start(why: String, started: Instant) -> Self {
        Self {
            status: ProcessStatus::FailedToStart(why),
            duration: started.elapsed(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            pid: None,
        }
    }
}

/// Run `spec`; see the module docs for the group and timeout semantics.
pub fn run(spec: &ProcessSpec) -> ProcessOutcome {
    let started = Instant::now();
    let log = match &spec.log_file {
        Some(path) => match open_log(path) {
            Ok(file) => Some(Arc::new(Mutex::new(file))),
            Err(e) => {
                return ProcessOutcome::failed_to_start(
                    format!("cannot open log file {}: {e}", path.display()),
                    started,
                )
            }
        },
        None => None,
    };

    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .process_group(0)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    for (name, value) in &spec.env {
        command.env(name, value);
    }

    // Register before the child exists so an interrupt between spawn and registration
    // cannot miss it: the lock is held across spawn.
    let mut live = lock_live_groups();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            drop(live);
            let program = Path::new(&spec.program).display().to_string();
            return ProcessOutcome::failed_to_start(format!("{program}: {e}"), started);
        }
    };
    let pid = child.id();
    let pgid = pid as libc::pid_t;
    live.insert(pgid);
    drop(live);

    let stdin_writer = match (child.stdin.take(), spec.stdin.clone()) {
        (Some(mut pipe), Some(bytes)) => Some(thread::spawn(move || {
            // A child that exits without reading gives EPIPE: not our failure.
            let _ = pipe.write_all(&bytes);
        })),
        _ => None,
    };
    let (drained_tx, drained_rx) = mpsc::channel();
    let stdout_reader = child
        .stdout
        .take()
        .map(|pipe| spawn_reader(pipe, spec.capture_limit, log.clone(), drained_tx.clone()));
    let stderr_reader = child
        .stderr
        .take()
        .map(|pipe| spawn_reader(pipe, spec.capture_limit, log.clone(), drained_tx.clone()));
    drop(drained_tx);

    let (exited_tx, exited_rx) = mpsc::channel();
    thread::spawn(move || {
        wait_without_reaping(pgid);
        let _ = exited_tx.send(());
    });

    let timed_out = match spec.timeout {
        None => {
            let _ = exited_rx.recv();
            false
        }
        Some(timeout) => match exited_rx.recv_timeout(timeout) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => false,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                signal_group(pgid, libc::SIGTERM);
                if exited_rx.recv_timeout(spec.kill_grace).is_err() {
                    signal_group(pgid, libc::SIGKILL);
                    let _ = exited_rx.recv();
                }
                true
            }
        },
    };
    // The leader is a zombie now, so `pgid` still names its group: kill whatever is left.
    signal_group(pgid, libc::SIGKILL);
    let status = child.wait();
    lock_live_groups().remove(&pgid);

    // Pipes close once every writer is gone; bound the wait in case a process escaped the
    // group while holding one.
    let drain_deadline = Instant::now() + PIPE_DRAIN_LIMIT;
    for _ in 0..2 {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        if drained_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    if let Some(writer) = stdin_writer {
        if writer.is_finished() {
            let _ = writer.join();
        }
    }
    let (stdout, stdout_truncated) = stdout_reader.map(|r| r.take()).unwrap_or_default();
    let (stderr, stderr_truncated) = stderr_reader.map(|r| r.take()).unwrap_or_default();

    let status = if timed_out {
        ProcessStatus::TimedOut
    } else {
        match status {
            Ok(status) => match (status.code(), status.signal()) {
                (Some(code), _) => ProcessStatus::Exited(code),
                (None, Some(sig)) => ProcessStatus::Signalled(sig),
                (None, None) => ProcessStatus::FailedToStart("unknown exit status".into()),
            },
            Err(e) => ProcessStatus::FailedToStart(format!("cannot wait for child: {e}")),
        }
    };
    ProcessOutcome {
        status,
        duration: started.elapsed(),
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        pid: Some(pid),
    }
}

fn open_log(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    OpenOptions::new().create(true).append(true).open(path)
}

/// Bytes captured from one stream, shared with its reader thread.
struct Capture {
    buf: Arc<Mutex<(Vec<u8>, bool)>>,
}

impl Capture {
    fn take(self) -> (Vec<u8>, bool) {
        let mut guard = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut *guard)
    }
}

fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    limit: usize,
    log: Option<Arc<Mutex<File>>>,
    drained: mpsc::Sender<()>,
) -> Capture {
    let buf = Arc::new(Mutex::new((Vec::new(), false)));
    let shared = Arc::clone(&buf);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            let n = match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let bytes = &chunk[..n];
            if let Some(log) = &log {
                let mut file = log.lock().unwrap_or_else(|p| p.into_inner());
                // A full disk must not kill the child's output capture; the log is best effort.
                let _ = file.write_all(bytes);
            }
            let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
            let (kept, truncated) = &mut *guard;
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&bytes[..room.min(n)]);
            if n > room {
                *truncated = true;
            }
        }
        let _ = drained.send(());
    });
    Capture { buf }
}

/// Block until `pid` has exited, leaving it a zombie (not reaped).
fn wait_without_reaping(pid: libc::pid_t) {
    loop {
        // SAFETY: `info` is a plain C struct that waitid fills in; zeroed is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child; `info` outlives the call.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg has no memory effects; ESRCH (group already gone) is fine.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

// ---- interrupts ---------------------------------------------------------------------------

/// Process groups of children that are running right now.
static LIVE_GROUPS: Mutex<BTreeSet<libc::pid_t>> = Mutex::new(BTreeSet::new());

fn lock_live_groups() -> std::sync::MutexGuard<'static, BTreeSet<libc::pid_t>> {
    LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Process-group ids of the children currently running under [`run`].
pub fn live_groups() -> Vec<i32> {
    lock_live_groups().iter().copied().collect()
}

/// Send `signal` to every running child's process group. Returns how many groups.
pub fn kill_live_groups(signal: i32) -> usize {
    let live = lock_live_groups();
    for &pgid in live.iter() {
        signal_group(pgid, signal);
    }
    live.len()
}

static INTERRUPT_PIPE_WRITE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = INTERRUPT_PIPE_WRITE.load(std::sync::atomic::Ordering::Relaxed);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write(2) is async-signal-safe; the byte lives on this stack frame.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// Children run in their own process groups, so the terminal's Ctrl-C reaches only spur.
/// This installs SIGINT/SIGTERM handlers (a self-pipe read by a thread) that, on the first
/// signal: SIGTERM every live child group, wait up to [`DEFAULT_KILL_GRACE`], SIGKILL them,
/// call `on_interrupt(signal)` (e.g. to journal the interruption), then exit with
/// `128 + signal` (130 for Ctrl-C). Call once, early in `main`.
pub fn install_interrupt_handler(
    on_interrupt: impl FnOnce(i32) + Send + 'static,
) -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_fd, write_fd] = fds;
    INTERRUPT_PIPE_WRITE.store(write_fd, std::sync::atomic::Ordering::Relaxed);
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; we set the handler and an empty mask.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: installing a handler that only calls write(2).
        let rc = unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    thread::Builder::new()
        .name("spur-interrupt".into())
        .spawn(move || {
            let mut byte = 0u8;
            loop {
                // SAFETY: reading one byte into a stack variable from our own pipe.
                let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
                if n == 1 {
                    break;
                }
                if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            let signal = i32::from(byte);
            if kill_live_groups(libc::SIGTERM) > 0 {
                // Bounded: give the groups their grace period, then make sure.
                let deadline = Instant::now() + DEFAULT_KILL_GRACE;
                while !live_groups().is_empty() && Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(10));
                }
                kill_live_groups(libc::SIGKILL);
            }
            on_interrupt(signal);
            std::process::exit(128 + signal);
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).unwrap()
    }

    #[test]
    fn captures_stdout_stderr_and_exit_code() {
        let out = ProcessSpec::shell("printf out; printf err >&2; exit 7").run();
        assert_eq!(out.status, ProcessStatus::Exited(7));
        assert_eq!(text(&out.stdout), "out");
        assert_eq!(text(&out.stderr), "err");
        assert!(out.pid.is_some());
    }

    #[test]
    fn passes_env_cwd_and_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let out = ProcessSpec::shell(r#"printf '%s|%s|' "$GREETING" "$(basename "$PWD")"; cat"#)
            .env("GREETING", "hello")
            .cwd(dir.path())
            .stdin("piped in")
            .run();
        let base = dir.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(text(&out.stdout), format!("hello|{base}|piped in"));
    }

    #[test]
    fn removes_env_vars() {
        let out = ProcessSpec::shell(r#"printf '%s' "${HOME-unset}""#)
            .env_remove("HOME")
            .run();
        assert_eq!(text(&out.stdout), "unset");
    }

    #[test]
    fn missing_program_fails_to_start() {
        let out = ProcessSpec::new("/nonexistent/spur-no-such-program", [""; 0]).run();
        match out.status {
            ProcessStatus::FailedToStart(why) => assert!(why.contains("spur-no-such-program")),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(out.pid, None);
    }

    #[test]
    fn caps_captured_output_and_marks_truncation() {
        let out = ProcessSpec::shell("printf 0123456789")
            .capture_limit(4)
            .run();
        assert_eq!(text(&out.stdout), "0123");
        assert!(out.stdout_truncated);
        assert!(!out.stderr_truncated);
    }

    #[test]
    fn appends_both_streams_to_the_log_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("logs/action.log");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(&log, "before\n").unwrap();
        let out = ProcessSpec::shell("echo one; echo two >&2")
            .log_file(&log)
            .capture_limit(0)
            .run();
        assert!(out.success());
        assert!(out.stdout.is_empty());
        let logged = std::fs::read_to_string(&log).unwrap();
        assert!(logged.starts_with("before\n"), "{logged}");
        assert!(
            logged.contains("one\n") && logged.contains("two\n"),
            "{logged}"
        );
    }

    #[test]
    fn reports_a_signal_death() {
        let out = ProcessSpec::shell("kill -9 $$").run();
        assert_eq!(out.status, ProcessStatus::Signalled(libc::SIGKILL));
    }

    /// A process is gone once `kill(pid, 0)` fails with ESRCH, or it is a zombie waiting
    /// for init to reap it (this container's init reaps only every second or so). The
    /// bounded loop waits for the kernel to finish the kill, never for a fixed time.
    pub(crate) fn wait_until_gone(pid: libc::pid_t) -> bool {
        for _ in 0..10_000 {
            // SAFETY: signal 0 only checks existence.
            let rc = unsafe { libc::kill(pid, 0) };
            if rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
                return true;
            }
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next());
            if state == Some("Z") || state == Some("X") {
                return true;
            }
            thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn timeout_kills_the_whole_group_including_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let command = format!(
            "sleep 100 & echo $! > '{}'; sleep 100",
            pidfile.to_str().unwrap()
        );
        let out = ProcessSpec::shell(&command)
            .timeout(Duration::from_millis(200))
            .run();
        assert_eq!(out.status, ProcessStatus::TimedOut);
        let grandchild: libc::pid_t = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            wait_until_gone(grandchild),
            "grandchild {grandchild} survived"
        );
        assert!(!live_groups().contains(&(out.pid.unwrap() as i32)));
    }

    #[test]
    fn a_term_ignoring_group_is_killed_after_the_grace_period() {
        let out = ProcessSpec::shell("trap '' TERM; sleep 100")
            .timeout(Duration::from_millis(100))
            .kill_grace(Duration::from_millis(100))
            .run();
        assert_eq!(out.status, ProcessStatus::TimedOut);
    }

    #[test]
    fn background_leftovers_are_killed_when_the_leader_exits() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let command = format!("sleep 100 & echo $! > '{}'", pidfile.to_str().unwrap());
        let out = ProcessSpec::shell(&command).run();
        assert_eq!(out.status, ProcessStatus::Exited(0));
        let bg: libc::pid_t = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(wait_until_gone(bg), "background process {bg} survived");
    }
}
