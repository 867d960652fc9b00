//! What a new child does between `clone` and `exec`, and the `clone` that starts it.
//!
//! The child is started with `clone(CLONE_VM | CLONE_VFORK)`, as glibc's and musl's
//! `posix_spawn` start theirs: it borrows the parent's memory, and the calling thread sleeps
//! until the child has called `exec` (or exited), so nothing is copied. In that shared
//! memory the child may only make system calls: everything it needs (paths, the argument
//! and environment arrays, descriptors) is prepared by the parent in a [`ChildPlan`], and
//! a failure is reported back through the plan's `error`.
//!
//! Why not glibc's `posix_spawn`: before it unblocks signals its child resets every signal
//! a handler could run for, and it cannot know which signals have handlers, so it asks the
//! kernel about all 64, twice for most: about 120 `sigaction` calls, ~21 µs on this
//! project's machines, in every child. It also maps and unmaps a stack for each spawn. Here
//! the parent knows its handlers (see [`caught_signals`]), and the child resets only those.
//! On 200 `sh -c true` a C loop with this child took 1.010× the time of `sh` running them,
//! against 1.041× with `posix_spawn` (book/src/performance.md, "Verify gates").
//!
//! Signals: the parent blocks every signal around `clone`, so the child starts with all of
//! them blocked; it resets the caught ones (and `SIGPIPE`, which Rust ignores) to their
//! default action, and only then sets the mask the program starts with (empty). A signal
//! that arrives between that and `exec` finds no handler of the parent to run in the
//! parent's memory. Ignored signals other than `SIGPIPE` stay ignored, as `exec` keeps
//! them (a gate started under `nohup` still ignores `SIGHUP`).

use std::ffi::{c_int, c_void, CStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Once;

/// What the child does before `exec`. Every pointer is the parent's and stays valid until
/// [`start`] returns: the parent sleeps until the child has called `exec` or exited.
pub(crate) struct ChildPlan<'a> {
    pub(crate) program: &'a CStr,
    /// NULL-terminated.
    pub(crate) argv: &'a [*mut libc::c_char],
    /// NULL-terminated.
    pub(crate) envp: &'a [*mut libc::c_char],
    /// Moved onto descriptor 0: a pipe, or the caller's `/dev/null` when it feeds nothing.
    /// Must not be 0 itself (a `dup2` onto itself would keep close-on-exec).
    pub(crate) stdin: c_int,
    pub(crate) stdout: c_int,
    pub(crate) stderr: c_int,
    pub(crate) cwd: Option<&'a CStr>,
}

/// The plan as the child reads it (raw pointers and plain values), and its report.
#[repr(C)]
struct Shared {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    stdin: c_int,
    stdout: c_int,
    stderr: c_int,
    /// NULL: stay in the parent's working directory.
    cwd: *const libc::c_char,
    /// Signals to reset to their default action (bit n-1 is signal n).
    reset: u64,
    /// The `errno` of the step that failed; 0 while none has.
    error: AtomicI32,
}

/// Bytes of stack the child runs on. It only makes system calls through libc's thin
/// wrappers (glibc's own spawn child gets one page for the same work).
const CHILD_STACK: usize = 32 * 1024;

/// A child that has called `exec`.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) pid: libc::pid_t,
    /// A pidfd of the child, readable once it has exited, made by the same `clone`
    /// (`CLONE_PIDFD`); `None` on kernels before 5.2.
    pub(crate) exit: Option<OwnedFd>,
}

/// Start a child that carries out `plan` and `exec`s. Returns once it has called `exec`;
/// if any step fails the child exits and is reaped, and the step's error is returned.
pub(crate) fn start(plan: &ChildPlan<'_>) -> io::Result<Started> {
    if plan.argv.last().is_none_or(|p| !p.is_null())
        || plan.envp.last().is_none_or(|p| !p.is_null())
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the argument and environment arrays must end in NULL",
        ));
    }
    let shared = Shared {
        program: plan.program.as_ptr(),
        argv: plan.argv.as_ptr().cast(),
        envp: plan.envp.as_ptr().cast(),
        stdin: plan.stdin,
        stdout: plan.stdout,
        stderr: plan.stderr,
        cwd: plan.cwd.map_or(std::ptr::null(), CStr::as_ptr),
        reset: caught_signals() | bit(libc::SIGPIPE),
        error: AtomicI32::new(0),
    };
    let mut stack: Vec<MaybeUninit<u8>> = Vec::with_capacity(CHILD_STACK);
    // The stack grows down: the child starts at the (16-byte aligned) top.
    let top = stack.spare_capacity_mut().as_mut_ptr_range().end;
    let top = top.wrapping_sub(top.addr() % 16).cast::<c_void>();

    let blocked = block_all_signals()?;
    let mut started = clone_child(&shared, top);
    let refused = matches!(&started, Err(e) if e.raw_os_error() == Some(libc::EINVAL));
    if refused && !PIDFD_REFUSED.swap(true, Ordering::Relaxed) {
        // A kernel that refuses CLONE_PIDFD: ask without it from now on.
        started = clone_child(&shared, top);
    }
    restore_signals(&blocked);
    drop(stack);
    let started = started?;
    match shared.error.load(Ordering::Acquire) {
        0 => Ok(started),
        errno => {
            // The child has exited: reap it, so a failed start leaves nothing behind.
            let Started { pid, exit } = started;
            drop(exit);
            // Its exit status is 127 and says nothing the errno does not.
            let _ = crate::spawn::reap(pid);
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// Set once a `clone` with `CLONE_PIDFD` has failed: later clones do without it.
static PIDFD_REFUSED: AtomicBool = AtomicBool::new(false);

/// The `clone` itself, with signals blocked by the caller.
fn clone_child(shared: &Shared, stack_top: *mut c_void) -> io::Result<Started> {
    let with_pidfd = !PIDFD_REFUSED.load(Ordering::Relaxed);
    let mut flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    if with_pidfd {
        flags |= libc::CLONE_PIDFD;
    }
    let mut pidfd: c_int = -1;
    // SAFETY: `child` only makes system calls and never returns; `shared` and all it
    // points into outlive the call, because CLONE_VFORK suspends this thread until the
    // child has called `exec` or exited; `stack_top` is the aligned end of `CHILD_STACK`
    // bytes that nothing else uses meanwhile; with CLONE_PIDFD the kernel writes the
    // pidfd (close-on-exec) into `pidfd`, which outlives the call.
    let pid = unsafe {
        libc::clone(
            child,
            stack_top,
            flags,
            std::ptr::from_ref(shared).cast_mut().cast(),
            &mut pidfd as *mut c_int,
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just made for us (a kernel that ignores the flag
    // leaves -1).
    let exit = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
    Ok(Started { pid, exit })
}

/// The child: runs on its own stack in the parent's memory, until `exec`.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Shared` that `start` passed, alive until we exec or exit.
    let plan = unsafe { &*arg.cast::<Shared>() };
    // SAFETY: each call below is a plain system call wrapper on values the parent prepared;
    // nothing here allocates, locks or unwinds.
    unsafe {
        let fail = |plan: &Shared| -> ! {
            let errno = *libc::__errno_location();
            plan.error.store(
                if errno == 0 { libc::EIO } else { errno },
                Ordering::Release,
            );
            libc::_exit(127)
        };
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..=64 {
            if plan.reset & bit(signal) != 0
                && libc::sigaction(signal, &default, std::ptr::null_mut()) != 0
            {
                fail(plan);
            }
        }
        if libc::setpgid(0, 0) != 0 {
            fail(plan);
        }
        if libc::dup2(plan.stdin, 0) < 0
            || libc::dup2(plan.stdout, 1) < 0
            || libc::dup2(plan.stderr, 2) < 0
        {
            fail(plan);
        }
        if !plan.cwd.is_null() && libc::chdir(plan.cwd) != 0 {
            fail(plan);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
            fail(plan);
        }
        libc::execve(plan.program, plan.argv, plan.envp);
        fail(plan)
    }
}

fn bit(signal: c_int) -> u64 {
    u32::try_from(signal - 1)
        .ok()
        .and_then(|shift| 1u64.checked_shl(shift))
        .unwrap_or(0)
}

/// The signals this process has a handler for, as a mask (bit n-1 is signal n): read from
/// the kernel once, and again by [`refresh_caught_signals`] whenever spur installs a
/// handler (nothing else in spur does, after `main` starts).
pub(crate) fn caught_signals() -> u64 {
    static READ: Once = Once::new();
    READ.call_once(refresh_caught_signals);
    CAUGHT.load(Ordering::Acquire)
}

static CAUGHT: AtomicU64 = AtomicU64::new(0);

/// Read again which signals have a handler. Call after installing one.
pub(crate) fn refresh_caught_signals() {
    let mut caught = 0;
    for signal in 1..=64 {
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a query only (no new action); `current` outlives the call. glibc refuses
        // its own two internal signals, and SIGKILL/SIGSTOP cannot be caught.
        let rc = unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) };
        if rc == 0 && current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN
        {
            caught |= bit(signal);
        }
    }
    CAUGHT.store(caught, Ordering::Release);
}

/// Block every signal on this thread; returns the mask to restore.
fn block_all_signals() -> io::Result<libc::sigset_t> {
    // SAFETY: plain C values filled by sigfillset and pthread_sigmask.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        match libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous) {
            0 => Ok(previous),
            errno => Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

fn restore_signals(previous: &libc::sigset_t) {
    // SAFETY: restoring a mask pthread_sigmask gave us.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, previous, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_bits_cover_1_to_64_and_nothing_else() {
        assert_eq!(bit(1), 1);
        assert_eq!(bit(libc::SIGPIPE), 1 << 12);
        assert_eq!(bit(64), 1 << 63);
        assert_eq!(bit(0), 0);
        assert_eq!(bit(65), 0);
    }

    #[test]
    fn rust_s_own_handlers_are_known_as_caught() {
        // The Rust runtime catches SIGSEGV (stack overflow detection) before main.
        assert_ne!(caught_signals() & bit(libc::SIGSEGV), 0);
        assert_eq!(caught_signals() & bit(libc::SIGKILL), 0);
    }

    #[test]
    fn arrays_without_a_terminating_null_are_refused_before_any_clone() {
        let argv = [c"sh".as_ptr().cast_mut()];
        let envp = [std::ptr::null_mut()];
        let plan = ChildPlan {
            program: c"/bin/sh",
            argv: &argv,
            envp: &envp,
            stdin: 0,
            stdout: 1,
            stderr: 2,
            cwd: None,
        };
        let error = start(&plan).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }
}
