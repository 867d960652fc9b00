//! Running one child: started through duct as the leader of its own process group, then
//! waited for by the calling thread in one `poll(2)` over its stdout and stderr pipes, its
//! stdin (when bytes are fed) and, on Linux, a pidfd that turns readable when the leader
//! exits — leaving it a zombie, so its group id cannot be reused. No helper thread, no
//! polling loop. Whatever way the leader ends, the rest of its group is killed before the
//! leader is reaped: an action's processes never outlive it (daemonise deliberately with
//! `setsid` to escape that). Elsewhere (macOS, or a sandbox that forbids `pidfd_open`)
//! the leader is checked for every 10 ms instead.
//!
//! No `pre_exec` hook: it would move std from `posix_spawn` onto `fork`, and the process
//! group is one `posix_spawn` sets itself (`CommandExt::process_group`).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::Signal;

use crate::group::{lock_live_groups, signal_group, Leader};
use crate::hold::Hold;
use crate::keeper;
use crate::outcome::{ProcessOutcome, ProcessStatus};
use crate::sandbox::{spawn_confined, SpawnKind};
use crate::spec::{OutputStream, OutputWatch, ProcessSpec, StartHook};
use crate::stream::{Feed, Stream};

/// How long to wait, once the group is dead, for output pipes to drain. Only a process that
/// left the group (e.g. via `setsid`) while holding a pipe open can make this matter.
const PIPE_DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// How often the leader is checked for when no exit descriptor is available.
const EXIT_TICK: Duration = Duration::from_millis(10);

/// Run `spec`; see the module docs.
pub(crate) fn run(spec: &ProcessSpec) -> ProcessOutcome {
    let started = Instant::now();
    let failed = |why: String| ProcessOutcome::failed_to_start(why, started);
    let log = match &spec.log {
        Some(Ok(file)) => Some(Arc::clone(file)),
        Some(Err(why)) => return failed(why.clone()),
        None => None,
    };
    let name = Path::new(&spec.program).display().to_string();
    let program = match crate::executable::resolve(spec) {
        Ok(program) => program,
        Err(e) => return failed(format!("{name}: {e}")),
    };
    let pipes = match Pipes::new(spec.stdin.is_some()) {
        Ok(pipes) => pipes,
        Err(e) => return failed(format!("{name}: cannot make its pipes: {e}")),
    };
    let Pipes {
        stdin,
        child_stdin,
        stdout,
        stderr,
        child_out,
        held_writers,
    } = pipes;
    // The child's ends move into the expression: once it is dropped after the spawn, only
    // the child (and our held writers) have them.
    let expression = match expression(spec, program, child_stdin, child_out) {
        Ok(expression) => expression,
        Err(e) => return failed(format!("{name}: {e}")),
    };

    let spawned = match &spec.on_start {
        None => start(expression, spec.unconfined),
        Some(hook) => start_held(expression, hook, spec.unconfined),
    };
    let (handle, pid) = match spawned {
        Ok(started) => started,
        Err(why) => return failed(format!("{name}: {why}")),
    };

    let finish = |handle: &duct::Handle| {
        // The leader is a zombie now (or was reaped by try_wait), so `pid` still names its
        // group or no one: kill whatever is left, then reap.
        signal_group(pid, Signal::KILL);
        keeper::release(pid);
        let status = handle.wait().map(|output| output.status);
        lock_live_groups().remove(&pid);
        status
    };
    let mut watcher = Watcher {
        exit: watch_exit(pid),
        stdout: Stream::new(stdout, spec.capture_limit),
        stderr: Stream::new(stderr, spec.capture_limit),
        stdin: match (stdin, &spec.stdin) {
            (Some(pipe), Some(bytes)) => Some(Feed::new(pipe, bytes)),
            _ => None,
        },
        log,
        handle: &handle,
        reaped: false,
        watch: spec.watch.clone(),
        stopped: None,
        pid,
    };

    let mut timed_out = false;
    let mut phase = Phase::Running(spec.timeout.map(|t| started + t));
    loop {
        let now = Instant::now();
        match phase {
            Phase::Running(Some(deadline)) if now >= deadline => {
                timed_out = true;
                signal_group(pid, Signal::TERM);
                phase = Phase::Terminating(now + spec.kill_grace);
                continue;
            }
            Phase::Terminating(deadline) if now >= deadline => {
                signal_group(pid, Signal::KILL);
                phase = Phase::Running(None);
                continue;
            }
            _ => {}
        }
        let deadline = match phase {
            Phase::Running(deadline) => deadline,
            Phase::Terminating(deadline) => Some(deadline),
        };
        if watcher.wait(deadline) {
            break;
        }
    }
    let status = finish(&handle);

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
        watcher.wait(Some(drain_deadline));
    }
    let (stdout, stdout_truncated) = watcher.stdout.take();
    let (stderr, stderr_truncated) = watcher.stderr.take();

    let status = match status {
        _ if watcher.stopped.is_some() => {
            ProcessStatus::Stopped(watcher.stopped.take().unwrap_or_default())
        }
        _ if timed_out => ProcessStatus::TimedOut,
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => ProcessStatus::Exited(code),
            (None, Some(signal)) => ProcessStatus::Signalled(signal),
            (None, None) => ProcessStatus::FailedToStart(format!("{name}: ended as {status}")),
        },
        Err(e) => ProcessStatus::FailedToStart(format!("cannot wait for child: {e}")),
    };
    ProcessOutcome {
        status,
        duration: started.elapsed(),
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        pid: u32::try_from(pid).ok(),
    }
}

/// Start `expression`, listed as a live group and with the keeper.
fn start(expression: duct::Expression, unconfined: bool) -> Result<(duct::Handle, i32), String> {
    keeper::ready();
    // Listed before the child exists, so an interrupt between spawn and listing cannot
    // miss it: the lock is held across the spawn.
    let mut live = lock_live_groups();
    // duct drops its copies of the child's ends with the expression, after the spawn:
    // only the child and our held writers have them then.
    let handle = spawn_confined(SpawnKind::Plain, unconfined, move || {
        let started = expression.start().map_err(|e| e.to_string());
        drop(expression);
        started
    })?;
    let Some(pid) = handle.pids().first().and_then(|&p| i32::try_from(p).ok()) else {
        drop(live);
        let _ = handle.wait();
        return Err("started without a pid".into());
    };
    live.insert(pid);
    drop(live);
    keeper::keep(pid);
    Ok((handle, pid))
}

/// Start `expression` held before `exec` until `hook` has recorded its group ([`Hold`]).
/// The group is listed (live groups, keeper) as soon as its pid is known, before the hook.
fn start_held(
    expression: duct::Expression,
    hook: &StartHook,
    unconfined: bool,
) -> Result<(duct::Handle, i32), String> {
    let hold = Hold::new().map_err(|e| format!("cannot make its pipes: {e}"))?;
    let side = hold.child_side();
    let expression = expression.before_spawn(move |command| {
        side.clone().install(command);
        Ok(())
    });
    let (started, released) = std::thread::scope(|threads| {
        let helper = threads.spawn(move || {
            hold.release(|pid| {
                lock_live_groups().insert(pid);
                keeper::keep(pid);
                hook.call(Leader::of(pid))
            })
        });
        // Dropping the expression after the spawn closes the parent's copies of the hold's
        // child ends: a child that never reached the hold is seen as end of file by the
        // helper.
        let started = spawn_confined(SpawnKind::Held, unconfined, move || {
            let started = expression.start().map_err(|e| e.to_string());
            drop(expression);
            started
        });
        (started, helper.join().ok().flatten())
    });
    match (started, released) {
        (Ok(handle), Some((pid, Ok(())))) => Ok((handle, pid)),
        (started, released) => {
            let pid = released.as_ref().map(|(pid, _)| *pid);
            if let Ok(handle) = &started {
                if let Some(pid) = pid {
                    signal_group(pid, Signal::KILL);
                }
                let _ = handle.wait();
            }
            if let Some(pid) = pid {
                keeper::release(pid);
                lock_live_groups().remove(&pid);
            }
            Err(match (started, released) {
                (_, Some((_, Err(why)))) => why,
                (Err(e), _) => e,
                (Ok(_), _) => "started without being recorded".into(),
            })
        }
    }
}

/// The child's pipes: our ends, the ends it gets (moved into duct), and our copies of its
/// output ends.
struct Pipes {
    stdin: Option<io::PipeWriter>,
    child_stdin: Option<io::PipeReader>,
    stdout: io::PipeReader,
    stderr: io::PipeReader,
    child_out: [io::PipeWriter; 2],
    /// The write ends of the output pipes, held until the leader has exited. The child's
    /// copies close as it exits, just before its exit is signalled; were they the last,
    /// their hang-up would wake us first, and every run would cost a second sleep and
    /// wake-up. With ours open, the exit alone wakes us.
    held_writers: [io::PipeWriter; 2],
}

impl Pipes {
    /// Close-on-exec pipes (std makes every descriptor so), above 0–2 unless spur's own
    /// standard streams are closed (std's spawn copes with either).
    fn new(feed: bool) -> io::Result<Self> {
        let (child_stdin, stdin) = match feed {
            true => {
                let (read, write) = io::pipe()?;
                (Some(read), Some(write))
            }
            false => (None, None),
        };
        let (stdout, stdout_w) = io::pipe()?;
        let (stderr, stderr_w) = io::pipe()?;
        Ok(Self {
            stdin,
            child_stdin,
            stdout,
            stderr,
            child_out: [stdout_w.try_clone()?, stderr_w.try_clone()?],
            held_writers: [stdout_w, stderr_w],
        })
    }
}

/// The duct expression for `spec`: `program` with the spec's arguments (`argv[0]` as the
/// spec names it), its own process group, the environment changes, the working
/// directory and the pipes.
fn expression(
    spec: &ProcessSpec,
    program: PathBuf,
    child_stdin: Option<io::PipeReader>,
    [out, err]: [io::PipeWriter; 2],
) -> io::Result<duct::Expression> {
    let arg0 = spec.program.clone();
    let mut expression = duct::cmd(program, &spec.args)
        .before_spawn(move |command| {
            command.process_group(0).arg0(&arg0);
            Ok(())
        })
        .unchecked();
    // Removals first, then each name's last setting: duct applies outer layers first, so
    // no name is given twice.
    for name in &spec.env_remove {
        if !spec.env.iter().any(|(n, _)| n == name) {
            expression = expression.env_remove(name);
        }
    }
    for (i, (name, value)) in spec.env.iter().enumerate() {
        let set_again = spec
            .env
            .get(i + 1..)
            .is_some_and(|later| later.iter().any(|(n, _)| n == name));
        if !set_again {
            expression = expression.env(name, value);
        }
    }
    if let Some(dir) = &spec.cwd {
        expression = expression.dir(dir);
    }
    expression = match child_stdin {
        Some(read) => expression.stdin_file(OwnedFd::from(read)),
        None => expression.stdin_null(),
    };
    Ok(expression
        .stdout_file(OwnedFd::from(out))
        .stderr_file(OwnedFd::from(err)))
}

/// Where the child stands against its timeout.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Running; SIGTERM at the deadline, if any (none once SIGKILL was sent).
    Running(Option<Instant>),
    /// SIGTERM sent; SIGKILL at the deadline.
    Terminating(Instant),
}

/// A descriptor that turns readable once `pid` has exited, leaving it a zombie: a pidfd
/// (Linux 5.3+). `None` elsewhere, or where a sandbox refuses it.
#[cfg(target_os = "linux")]
fn watch_exit(pid: i32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[cfg(not(target_os = "linux"))]
fn watch_exit(_pid: i32) -> Option<OwnedFd> {
    None
}

/// Everything the calling thread waits on while the child runs: its exit and its pipes.
struct Watcher<'a> {
    exit: Option<OwnedFd>,
    stdout: Stream,
    stderr: Stream,
    stdin: Option<Feed<'a>>,
    log: Option<Arc<File>>,
    handle: &'a duct::Handle,
    /// The leader has been reaped: only output is left to wait for.
    reaped: bool,
    /// Sees the output as it arrives and may stop the child.
    watch: Option<OutputWatch>,
    /// Why the watch stopped the child, once it did.
    stopped: Option<String>,
    /// The child's group.
    pid: i32,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Exit,
    Stdout,
    Stderr,
    Stdin,
}

impl Watcher<'_> {
    /// Wait until something happens or `deadline` passes, and handle it: read output,
    /// feed stdin. Returns whether the leader has exited.
    fn wait(&mut self, deadline: Option<Instant>) -> bool {
        let ticking = self.exit.is_none() && !self.reaped;
        let mut wait = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if ticking {
            wait = Some(wait.map_or(EXIT_TICK, |w| w.min(EXIT_TICK)));
        }
        let timeout = wait.and_then(|w| Timespec::try_from(w).ok());
        let mut ready = [(Slot::Exit, PollFlags::empty()); 4];
        let mut count = 0;
        {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            let mut slots = Vec::with_capacity(4);
            if let Some(fd) = &self.exit {
                fds.push(PollFd::new(fd, PollFlags::IN));
                slots.push(Slot::Exit);
            }
            if let Some(pipe) = &self.stdout.pipe {
                fds.push(PollFd::from_borrowed_fd(pipe.as_fd(), PollFlags::IN));
                slots.push(Slot::Stdout);
            }
            if let Some(pipe) = &self.stderr.pipe {
                fds.push(PollFd::from_borrowed_fd(pipe.as_fd(), PollFlags::IN));
                slots.push(Slot::Stderr);
            }
            if let Some(feed) = &self.stdin {
                fds.push(PollFd::from_borrowed_fd(feed.pipe.as_fd(), PollFlags::OUT));
                slots.push(Slot::Stdin);
            }
            if fds.is_empty() {
                if let Some(w) = wait {
                    std::thread::sleep(w);
                }
            } else if poll(&mut fds, timeout.as_ref()).is_ok() {
                for (fd, slot) in fds.iter().zip(slots) {
                    if !fd.revents().is_empty() {
                        if let Some(entry) = ready.get_mut(count) {
                            *entry = (slot, fd.revents());
                            count += 1;
                        }
                    }
                }
            }
        }
        let mut exited = false;
        for &(slot, revents) in ready.iter().take(count) {
            match slot {
                Slot::Exit => exited = true,
                Slot::Stdout | Slot::Stderr => {
                    let (stream, which) = match slot {
                        Slot::Stdout => (&mut self.stdout, OutputStream::Stdout),
                        _ => (&mut self.stderr, OutputStream::Stderr),
                    };
                    let bytes = on_ready(stream, revents, self.log.as_deref());
                    if let (Some(watch), false) = (&self.watch, bytes.is_empty()) {
                        if let Some(why) = watch.call(which, bytes) {
                            if self.stopped.is_none() && !self.reaped {
                                self.stopped = Some(why);
                                signal_group(self.pid, Signal::KILL);
                            }
                        }
                    }
                }
                Slot::Stdin => {
                    if self.stdin.as_mut().is_none_or(Feed::write_some) {
                        self.stdin = None;
                    }
                }
            }
        }
        if ticking {
            // Reaps the leader when it has exited: its group id may then be free. Only
            // where no pidfd can be had.
            exited = matches!(self.handle.try_wait(), Ok(Some(_)) | Err(_));
        }
        exited
    }
}

/// Poll reported `revents`: a hang-up with nothing to read is the end of the stream (a
/// pipe reports `IN` as well while data is left), closed without a `read` that could only
/// return 0; anything else is read.
fn on_ready<'s>(stream: &'s mut Stream, revents: PollFlags, log: Option<&File>) -> &'s [u8] {
    if revents.contains(PollFlags::HUP) && !revents.intersects(PollFlags::IN | PollFlags::ERR) {
        stream.pipe = None;
        &[]
    } else {
        stream.read_once(log)
    }
}
