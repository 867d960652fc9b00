//! Running a child process the way shell guards, shell actions and command gates need it:
//! in its own process group, with a timeout that kills the whole group (grandchildren
//! included), output captured up to a cap and/or appended to a log file.
//!
//! Why not `duct` alone: it kills the child, not the group, so `sh -c 'sleep 100 & …'` leaves
//! an orphan. Here the child leads its own group. The calling thread waits for everything
//! in one `poll(2)`: the child's stdout and stderr pipes, its stdin (when bytes are fed),
//! and a pidfd that becomes readable when the leader exits — it is left a zombie, so its
//! group id cannot be reused. No helper thread, no polling loop. Whatever way the leader
//! ends, the rest of its group is killed before the leader is reaped: an action's processes
//! never outlive it (daemonise deliberately with `setsid` to escape that). The pidfd comes
//! with the child (`CLONE_PIDFD`, see `child_setup`); on kernels without it, from
//! `pidfd_open`, and without that (before 5.3) a waiter thread blocked in
//! `waitid(WEXITED | WNOWAIT)` stands in for the pidfd.
//!
//! `sh` (what [`ProcessSpec::shell`] runs) is looked up on PATH once and the absolute path
//! reused, instead of `execvp` trying every PATH directory on every spawn.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use crate::spawn::{pipe, reap, spawn, Exit};

/// Default in-memory capture cap per stream (1 MiB).
pub(crate) const DEFAULT_CAPTURE_LIMIT: usize = 1 << 20;
/// Default time between SIGTERM and SIGKILL when a timeout fires.
pub(crate) const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);
/// How long to wait, once the group is dead, for output pipes to drain. Only a process that
/// left the group (e.g. via `setsid`) while holding a pipe open can make this matter.
const PIPE_DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What to run and how.
#[derive(Debug, Clone)]
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
    /// (still written to the log file). 0 keeps nothing.
    pub(crate) capture_limit: usize,
    /// Both streams are appended here as they arrive (created if missing).
    pub(crate) log_file: Option<PathBuf>,
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

    /// Run in `dir` (the caller's working directory when not set).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Set `name` to `value` in the child's environment.
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

    pub(crate) fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
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

    /// Append both output streams to the file at `path`, created if missing.
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
    /// Whether the process exited with code 0.
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

/// The result of [`ProcessSpec::run`].
#[derive(Debug, Clone)]
pub struct ProcessOutcome {
    /// How the process ended.
    pub status: ProcessStatus,
    pub(crate) duration: Duration,
    /// Captured stdout, at most `capture_limit` bytes.
    pub stdout: Vec<u8>,
    /// Captured stderr, at most `capture_limit` bytes.
    pub stderr: Vec<u8>,
    /// Stdout was longer than the capture limit; the rest was dropped from memory.
    pub stdout_truncated: bool,
    /// Stderr was longer than the capture limit; the rest was dropped from memory.
    pub stderr_truncated: bool,
    /// Pid of the child (also its process-group id); `None` if it never started.
    pub pid: Option<u32>,
}

impl ProcessOutcome {
    /// Whether the process exited with code 0.
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
pub(crate) fn run(spec: &ProcessSpec) -> ProcessOutcome {
    run_watching(spec, watch_exit)
}

/// [`run`] with the way the leader's exit is noticed passed in (tests use the fallbacks).
fn run_watching(spec: &ProcessSpec, watch: Watch) -> ProcessOutcome {
    let started = Instant::now();
    let log = match &spec.log_file {
        Some(path) => match open_log(path) {
            Ok(file) => Some(file),
            Err(e) => {
                return ProcessOutcome::failed_to_start(
                    format!("cannot open log file {}: {e}", path.display()),
                    started,
                )
            }
        },
        None => None,
    };

    // Register before the child exists so an interrupt between spawn and registration
    // cannot miss it: the lock is held across spawn.
    let mut live = lock_live_groups();
    let spawned = match spawn(spec) {
        Ok(spawned) => spawned,
        Err(e) => {
            drop(live);
            let program = Path::new(&spec.program).display().to_string();
            return ProcessOutcome::failed_to_start(format!("{program}: {e}"), started);
        }
    };
    let pgid = spawned.pid;
    live.insert(pgid);
    drop(live);

    // We keep the output pipes' write ends open too, until the leader has exited. The
    // child's copies close as it exits, just before its exit is signalled; were they the
    // last, their hang-up would wake us first, and every run would cost a second sleep and
    // wake-up. With ours open, the exit alone wakes us.
    let held_writers = spawned.writers;
    let mut watcher = Watcher {
        exit: watch(pgid, spawned.exit),
        stdout: Stream::new(Some(spawned.stdout), spec.capture_limit),
        stderr: Stream::new(Some(spawned.stderr), spec.capture_limit),
        stdin: match (spawned.stdin, &spec.stdin) {
            (Some(pipe), Some(bytes)) => Some(Feed::new(pipe, bytes)),
            _ => None,
        },
        log,
        reaped: false,
    };

    let mut timed_out = false;
    let mut phase = match spec.timeout {
        Some(timeout) => Phase::Running(Some(started + timeout)),
        None => Phase::Running(None),
    };
    let status = loop {
        let now = Instant::now();
        match phase {
            Phase::Running(Some(deadline)) if now >= deadline => {
                timed_out = true;
                signal_group(pgid, libc::SIGTERM);
                phase = Phase::Terminating(now + spec.kill_grace);
                continue;
            }
            Phase::Terminating(deadline) if now >= deadline => {
                signal_group(pgid, libc::SIGKILL);
                phase = Phase::Running(None);
                continue;
            }
            _ => {}
        }
        let deadline = match phase {
            Phase::Running(deadline) => deadline,
            Phase::Terminating(deadline) => Some(deadline),
        };
        if watcher.wait(pgid, deadline) {
            // The leader is a zombie now, so `pgid` still names its group: kill whatever
            // is left, then reap.
            signal_group(pgid, libc::SIGKILL);
            break reap(pgid);
        }
    };
    lock_live_groups().remove(&pgid);

    // Pipes close once every writer is gone; bound the wait in case a process escaped the
    // group while holding one.
    watcher.stdin = None;
    watcher.exit = None;
    watcher.reaped = true;
    drop(held_writers);
    let drain_deadline = Instant::now() + PIPE_DRAIN_LIMIT;
    while watcher.stdout.is_open() || watcher.stderr.is_open() {
        if Instant::now() >= drain_deadline {
            break;
        }
        watcher.wait(pgid, Some(drain_deadline));
    }
    let (stdout, stdout_truncated) = watcher.stdout.take();
    let (stderr, stderr_truncated) = watcher.stderr.take();

    let status = if timed_out {
        ProcessStatus::TimedOut
    } else {
        match status {
            Ok(Exit::Code(code)) => ProcessStatus::Exited(code),
            Ok(Exit::Signal(signal)) => ProcessStatus::Signalled(signal),
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
        pid: u32::try_from(pgid).ok(),
    }
}

/// Where the child stands against its timeout.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Running; SIGTERM at the deadline, if any (none once SIGKILL was sent).
    Running(Option<Instant>),
    /// SIGTERM sent; SIGKILL at the deadline.
    Terminating(Instant),
}

fn open_log(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // A step may have put a FIFO (an open that never returns) or a device at the path.
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    Ok(crate::bounded_read::open_regular_as(path, options)?)
}

/// Everything the calling thread waits on while the child runs: its exit and its pipes.
/// One `poll(2)` covers them all, so running a child costs no extra thread.
struct Watcher<'a> {
    /// Readable once the leader has exited (it is left a zombie); `None` when no such
    /// descriptor could be made (the leader is then checked for at each short tick).
    exit: Option<OwnedFd>,
    stdout: Stream,
    stderr: Stream,
    stdin: Option<Feed<'a>>,
    log: Option<File>,
    /// The leader has been reaped: only output is left to wait for.
    reaped: bool,
}

/// How often the leader is checked for when no exit descriptor is available.
const EXIT_TICK: Duration = Duration::from_millis(10);

impl Watcher<'_> {
    /// Wait until something happens or `deadline` passes, and handle it: read output,
    /// feed stdin. Returns whether the leader has exited.
    fn wait(&mut self, pid: libc::pid_t, deadline: Option<Instant>) -> bool {
        let mut fds = Vec::with_capacity(4);
        let mut slots = [None; 4];
        let mut push = |fd: libc::c_int, events: libc::c_short, slot: Slot| {
            slots[fds.len()] = Some(slot);
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
        };
        if let Some(fd) = &self.exit {
            push(fd.as_raw_fd(), libc::POLLIN, Slot::Exit);
        }
        if let Some(fd) = &self.stdout.fd {
            push(fd.as_raw_fd(), libc::POLLIN, Slot::Stdout);
        }
        if let Some(fd) = &self.stderr.fd {
            push(fd.as_raw_fd(), libc::POLLIN, Slot::Stderr);
        }
        if let Some(feed) = &self.stdin {
            push(feed.fd.as_raw_fd(), libc::POLLOUT, Slot::Stdin);
        }
        let watching_exit = self.exit.is_some();
        let ticking = !watching_exit && !self.reaped;
        let mut wait = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if ticking {
            wait = Some(wait.map_or(EXIT_TICK, |w| w.min(EXIT_TICK)));
        }
        let timeout_ms = wait.map_or(-1, |w| {
            // Round up: waking before the deadline would only loop back here.
            let ms = w.as_micros().div_ceil(1000);
            libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
        });
        // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfd structs.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if ready < 0 {
            // EINTR: the caller re-checks its deadlines and calls again.
            return false;
        }
        let mut exited = false;
        for (pollfd, slot) in fds.iter().zip(slots.iter().flatten()) {
            if pollfd.revents == 0 {
                continue;
            }
            match slot {
                Slot::Exit => exited = true,
                Slot::Stdout => self.stdout.on_ready(pollfd.revents, self.log.as_mut()),
                Slot::Stderr => self.stderr.on_ready(pollfd.revents, self.log.as_mut()),
                Slot::Stdin => {
                    let done = self.stdin.as_mut().is_none_or(Feed::write_some);
                    if done {
                        self.stdin = None;
                    }
                }
            }
        }
        if ticking {
            exited = has_exited(pid);
        }
        exited
    }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Exit,
    Stdout,
    Stderr,
    Stdin,
}

/// One output pipe and what was kept of it.
struct Stream {
    fd: Option<OwnedFd>,
    limit: usize,
    kept: Vec<u8>,
    truncated: bool,
}

impl Stream {
    fn new(fd: Option<OwnedFd>, limit: usize) -> Self {
        Self {
            fd,
            limit,
            kept: Vec::new(),
            truncated: false,
        }
    }

    fn is_open(&self) -> bool {
        self.fd.is_some()
    }

    /// Poll reported `revents`: a hang-up with nothing to read is the end of the stream
    /// (a pipe reports `POLLIN` as well while data is left), closed without a `read` that
    /// could only return 0; anything else is read.
    fn on_ready(&mut self, revents: libc::c_short, log: Option<&mut File>) {
        if revents & libc::POLLHUP != 0 && revents & (libc::POLLIN | libc::POLLERR) == 0 {
            self.fd = None;
        } else {
            self.read_into(log);
        }
    }

    /// One read (poll said it will not block); closes the stream at end of file.
    fn read_into(&mut self, log: Option<&mut File>) {
        let Some(fd) = &self.fd else { return };
        // Not zeroed: filling 16 KiB on every read (twice per child at least) cost more
        // than the reads of a short child's output, and pushed its data out of the cache.
        let mut chunk = [MaybeUninit::<u8>::uninit(); 16 * 1024];
        // SAFETY: reading into a stack buffer of the length passed.
        let n = unsafe { libc::read(fd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        let n = match usize::try_from(n) {
            Ok(0) => {
                self.fd = None;
                return;
            }
            Ok(n) => n,
            Err(_) => {
                if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    self.fd = None;
                }
                return;
            }
        };
        let read = chunk.get(..n).unwrap_or_default();
        // SAFETY: read(2) initialised the first `n` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(read.as_ptr().cast::<u8>(), read.len()) };
        if let Some(log) = log {
            // A full disk must not kill the child's output capture; the log is best effort.
            let _ = log.write_all(bytes);
        }
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept
            .extend_from_slice(bytes.get(..room.min(n)).unwrap_or_default());
        if n > room {
            self.truncated = true;
        }
    }

    fn take(&mut self) -> (Vec<u8>, bool) {
        (std::mem::take(&mut self.kept), self.truncated)
    }
}

/// The child's stdin and the bytes still to write to it (non-blocking, as poll allows).
struct Feed<'a> {
    fd: OwnedFd,
    rest: &'a [u8],
}

impl<'a> Feed<'a> {
    fn new(fd: OwnedFd, bytes: &'a [u8]) -> Self {
        // SAFETY: fcntl on a descriptor we own; only adds O_NONBLOCK to our end.
        unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
        Self { fd, rest: bytes }
    }

    /// Write what the pipe takes; `true` once everything is written or the child stopped
    /// reading (EPIPE is not our failure), after which stdin is closed.
    fn write_some(&mut self) -> bool {
        while !self.rest.is_empty() {
            // SAFETY: writing from a live slice of the length passed.
            let n = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    self.rest.as_ptr().cast(),
                    self.rest.len(),
                )
            };
            match usize::try_from(n) {
                Ok(n) => self.rest = self.rest.get(n..).unwrap_or_default(),
                Err(_) => {
                    return !matches!(
                        io::Error::last_os_error().kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    )
                }
            }
        }
        true
    }
}

/// How the leader's exit is noticed: given the child and the pidfd its `clone` made (if
/// any), the descriptor to poll.
type Watch = fn(libc::pid_t, Option<OwnedFd>) -> Option<OwnedFd>;

/// A descriptor that becomes readable once `pid` has exited, leaving it a zombie: the
/// pidfd made with the child, else one from `pidfd_open`, else (kernels before 5.3,
/// sandboxes that forbid it) a pipe whose write end a waiter thread closes when
/// `waitid(WNOWAIT)` returns. `None` if none can be made.
fn watch_exit(pid: libc::pid_t, made: Option<OwnedFd>) -> Option<OwnedFd> {
    made.or_else(|| pidfd(pid)).or_else(|| waiter_thread(pid))
}

fn pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn waiter_thread(pid: libc::pid_t) -> Option<OwnedFd> {
    let (read_end, write_end) = pipe().ok()?;
    thread::Builder::new()
        .name("spur-waiter".into())
        .spawn(move || {
            wait_without_reaping(pid);
            drop(write_end);
        })
        .ok()?;
    Some(read_end)
}

/// Whether `pid` has exited, leaving it a zombie (not reaped).
fn has_exited(pid: libc::pid_t) -> bool {
    // si_pid stays 0 while the child is still running.
    wait_for_exit(pid, libc::WNOHANG).is_none_or(|info| {
        // SAFETY: waitid filled `info` in.
        let child = unsafe { info.si_pid() };
        child != 0
    })
}

/// Block until `pid` has exited, leaving it a zombie (not reaped).
fn wait_without_reaping(pid: libc::pid_t) {
    loop {
        if wait_for_exit(pid, 0).is_some()
            || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

/// `waitid(WEXITED | WNOWAIT | extra_flags)` on `pid`: its exit, not reaped; `None` when
/// the call failed (errno says why).
fn wait_for_exit(pid: libc::pid_t, extra_flags: libc::c_int) -> Option<libc::siginfo_t> {
    // SAFETY: `info` is a plain C struct that waitid fills in; zeroed is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall on our own child; `info` outlives the call.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT | extra_flags,
        )
    };
    (rc == 0).then_some(info)
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

/// Process-group ids of the children currently running under [`ProcessSpec::run`].
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

/// Install SIGINT/SIGTERM handlers (a self-pipe read by a thread) and call `handler(signal)`
/// on that thread when the first signal arrives. The handler runs outside signal context,
/// so it may lock, write files and kill groups; it should end the process.
pub fn on_first_signal(handler: impl FnOnce(i32) + Send + 'static) -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // Close-on-exec: a child holding the write end could fake an interrupt with one byte.
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
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
    // Children reset caught signals before they unblock them: tell them about these two.
    crate::child_setup::refresh_caught_signals();
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
            handler(i32::from(byte));
        })?;
    Ok(())
}

/// SIGTERM every live child group, wait up to `DEFAULT_KILL_GRACE` for them to go, then
/// SIGKILL whatever is left (bounded).
pub fn terminate_live_groups() {
    if kill_live_groups(libc::SIGTERM) > 0 {
        let deadline = Instant::now() + DEFAULT_KILL_GRACE;
        while !live_groups().is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        kill_live_groups(libc::SIGKILL);
    }
}

/// Children run in their own process groups, so the terminal's Ctrl-C reaches only spur.
/// This installs SIGINT/SIGTERM handlers that, on the first signal: terminate every live
/// child group ([`terminate_live_groups`]), call `on_interrupt(signal)` (e.g. to journal
/// the interruption), then exit with `128 + signal` (130 for Ctrl-C). Call once, early in
/// `main`.
pub fn install_interrupt_handler(
    on_interrupt: impl FnOnce(i32) + Send + 'static,
) -> io::Result<()> {
    on_first_signal(move |signal| {
        terminate_live_groups();
        on_interrupt(signal);
        std::process::exit(128 + signal);
    })
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

    thread_local! {
        /// The file [`watch_once_written`] waits for, for runs on this thread.
        static AWAITED_FILE: std::cell::RefCell<Option<PathBuf>> =
            const { std::cell::RefCell::new(None) };
    }

    /// Whether `path` exists before `deadline` passes, checking every millisecond.
    fn wait_for_file(path: &Path, deadline: Duration) -> bool {
        let start = Instant::now();
        while !path.exists() {
            if start.elapsed() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// [`watch_exit`] once the child has written [`AWAITED_FILE`] (waiting at most 10 s).
    /// The run's loop starts only after its watcher is made, so a timeout shorter than
    /// that wait fires right after the file appears: never before the child wrote it.
    fn watch_once_written(pid: libc::pid_t, made: Option<OwnedFd>) -> Option<OwnedFd> {
        if let Some(path) = AWAITED_FILE.with(|f| f.borrow().clone()) {
            wait_for_file(&path, Duration::from_secs(10));
        }
        watch_exit(pid, made)
    }

    #[test]
    fn timeout_kills_the_whole_group_including_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        // Written whole (renamed into place), so once it exists it holds the pid.
        let command = format!(
            "sleep 100 & echo $! > '{0}.tmp'; mv '{0}.tmp' '{0}'; sleep 100",
            pidfile.to_str().unwrap()
        );
        AWAITED_FILE.with(|f| *f.borrow_mut() = Some(pidfile.clone()));
        let out = run_watching(
            &ProcessSpec::shell(&command).timeout(Duration::from_millis(200)),
            watch_once_written,
        );
        AWAITED_FILE.with(|f| *f.borrow_mut() = None);
        assert_eq!(out.status, ProcessStatus::TimedOut);
        let grandchild: libc::pid_t = std::fs::read_to_string(&pidfile)
            .expect("the shell wrote its grandchild's pid before the timeout")
            .trim()
            .parse()
            .unwrap();
        assert!(
            wait_until_gone(grandchild),
            "grandchild {grandchild} survived"
        );
        assert!(!live_groups().contains(&(out.pid.unwrap() as i32)));
    }

    fn no_exit_descriptor(_: libc::pid_t, _: Option<OwnedFd>) -> Option<OwnedFd> {
        None
    }

    fn waiter_thread_only(pid: libc::pid_t, _: Option<OwnedFd>) -> Option<OwnedFd> {
        waiter_thread(pid)
    }

    /// The exit watchers other than the pidfd behave the same: output, exit code, and a
    /// timeout that kills the group.
    #[test]
    fn every_exit_watcher_reports_exit_output_and_timeouts() {
        for watch in [
            watch_exit,
            pidfd_or_nothing,
            waiter_thread_only,
            no_exit_descriptor,
        ] {
            let out = run_watching(&ProcessSpec::shell("printf out; exit 3"), watch);
            assert_eq!(out.status, ProcessStatus::Exited(3));
            assert_eq!(text(&out.stdout), "out");
            let out = run_watching(
                &ProcessSpec::shell("sleep 100").timeout(Duration::from_millis(50)),
                watch,
            );
            assert_eq!(out.status, ProcessStatus::TimedOut);
        }
    }

    fn pidfd_or_nothing(pid: libc::pid_t, _: Option<OwnedFd>) -> Option<OwnedFd> {
        pidfd(pid)
    }

    #[test]
    fn output_larger_than_a_pipe_buffer_is_read_while_the_child_runs() {
        // 1 MiB through each pipe (a pipe holds 64 KiB): the child blocks unless both are
        // read as it writes.
        let out = ProcessSpec::shell(
            "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; echo done >&2",
        )
        .capture_limit(2 << 20)
        .run();
        assert!(out.success(), "{:?}", out.status);
        assert_eq!(out.stdout.len(), 1 << 20);
        assert!(out.stderr.ends_with(b"done\n"));
    }

    #[test]
    fn stdin_larger_than_a_pipe_buffer_is_fed_while_output_is_read() {
        let input = vec![b'x'; 1 << 20];
        let out = ProcessSpec::shell("cat").stdin(input.clone()).run();
        assert!(out.success());
        assert_eq!(out.stdout, input);
    }

    #[test]
    fn a_child_that_ignores_stdin_does_not_hang_the_feed() {
        let out = ProcessSpec::shell("exit 0")
            .stdin(vec![b'x'; 1 << 20])
            .run();
        assert_eq!(out.status, ProcessStatus::Exited(0));
    }

    #[test]
    fn a_leader_that_closes_its_output_early_is_still_waited_for() {
        let out = ProcessSpec::shell("exec >&-; sleep 0.1; printf late >&2; exit 4").run();
        assert_eq!(out.status, ProcessStatus::Exited(4));
        assert_eq!(text(&out.stderr), "late");
        assert!(out.stdout.is_empty());
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
