//! Holding a child before `exec` until the caller has recorded it: a run journals an
//! action's process group durably *before* the action runs, so no step can act (or write
//! the journal itself) before its group is on record.
//!
//! The child, between `fork` and `exec` (std's `pre_exec`, which moves std from
//! `posix_spawn` onto `fork`: only for a spec with a start hook, i.e. actions, never for
//! guards or verify gates), closes its copy of the go pipe's write end, sets
//! `PR_SET_PDEATHSIG` (Linux; SIGKILL when the thread that started it ends), writes its
//! pid to the hello pipe and blocks reading the go pipe. A helper thread of the parent
//! reads the pid, runs the hook and writes the go byte; if the hook fails it writes
//! nothing and closes the go pipe, the child reads end of file and fails to start with
//! the hook's reason. std's spawn returns once the child has called `exec`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

/// The pipes of one held start.
pub(crate) struct Hold {
    hello_read: OwnedFd,
    hello_write: Arc<OwnedFd>,
    go_read: Arc<OwnedFd>,
    go_write: OwnedFd,
}

impl Hold {
    pub(crate) fn new() -> io::Result<Self> {
        let (hello_read, hello_write) = io::pipe()?;
        let (go_read, go_write) = io::pipe()?;
        Ok(Self {
            hello_read: hello_read.into(),
            hello_write: Arc::new(hello_write.into()),
            go_read: Arc::new(go_read.into()),
            go_write: go_write.into(),
        })
    }

    /// Install the child's side on `command` (from duct's `before_spawn`): what to run
    /// between `fork` and `exec`. Returns the parent's side.
    pub(crate) fn child_side(&self) -> ChildSide {
        ChildSide {
            hello_write: Arc::clone(&self.hello_write),
            go_read: Arc::clone(&self.go_read),
            go_write_raw: self.go_write.as_raw_fd(),
            #[cfg(target_os = "linux")]
            parent: rustix::process::getpid(),
        }
    }

    /// The parent's side, on a helper thread while the spawn blocks: wait for the child's
    /// pid, call `record` with it, and let the child go on — or, when `record` fails, stop
    /// it before `exec`. `None` when no child reached the hold (its start failed earlier).
    pub(crate) fn release(
        self,
        record: impl FnOnce(i32) -> Result<(), String>,
    ) -> Option<(i32, Result<(), String>)> {
        let Self {
            hello_read,
            go_write,
            ..
        } = self;
        let mut bytes = [0u8; 4];
        let mut got = 0;
        while got < bytes.len() {
            match rustix::io::read(&hello_read, bytes.get_mut(got..).unwrap_or_default()) {
                Ok(0) => return None,
                Ok(n) => got += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return None,
            }
        }
        let pid = i32::from_ne_bytes(bytes);
        Some((
            pid,
            match record(pid) {
                Ok(()) => loop {
                    match rustix::io::write(&go_write, b"g") {
                        Ok(_) => break Ok(()),
                        Err(rustix::io::Errno::INTR) => {}
                        Err(e) => break Err(format!("cannot let the process start: {e}")),
                    }
                },
                // Dropping `go_write` unblocks the child with end of file.
                Err(why) => Err(why),
            },
        ))
    }
}

/// What the child holds: the fds it uses between `fork` and `exec`.
#[derive(Clone)]
pub(crate) struct ChildSide {
    hello_write: Arc<OwnedFd>,
    go_read: Arc<OwnedFd>,
    go_write_raw: i32,
    #[cfg(target_os = "linux")]
    parent: rustix::process::Pid,
}

impl ChildSide {
    /// Make `command` hold its child (see the module docs).
    #[allow(unsafe_code)]
    pub(crate) fn install(self, command: &mut Command) {
        // SAFETY: the closure runs in the forked child, where only async-signal-safe calls
        // are allowed: it makes only raw system calls through rustix (close, prctl,
        // getppid, getpid, write, read), allocates nothing, takes no lock, and touches
        // only descriptors it owns (the Arcs keep them open in the parent until the spawn
        // returned, so the child's copies are valid).
        unsafe {
            command.pre_exec(move || self.in_child());
        }
    }

    fn in_child(&self) -> io::Result<()> {
        // SAFETY: in the forked child this number is the child's own copy of the go
        // pipe's write end (open in the parent until the spawn returns), which nothing
        // else in the child uses; closing it lets a parent that gives up be seen as end
        // of file. The child is single-threaded here.
        #[allow(unsafe_code)]
        unsafe {
            rustix::io::close(self.go_write_raw);
        }
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The parent may have died before the line above: then no signal will come.
            if rustix::process::getppid() != Some(self.parent) {
                return Err(io::Error::other("spur ended before the process started"));
            }
        }
        let pid = rustix::process::getpid()
            .as_raw_nonzero()
            .get()
            .to_ne_bytes();
        let mut sent = 0;
        while sent < pid.len() {
            match rustix::io::write(&*self.hello_write, pid.get(sent..).unwrap_or_default()) {
                Ok(n) => sent += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let mut go = [0u8; 1];
        loop {
            match rustix::io::read(&*self.go_read, &mut go) {
                Ok(1) => return Ok(()),
                Ok(_) => return Err(io::Error::other("spur did not let the process start")),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}
