//! Ctrl-C (SIGINT) and SIGTERM during a run. Children run in their own process groups, so
//! the terminal's signal reaches only spur; the handler then: stops the run from writing
//! anything more, kills every child group (TERM, a grace period, KILL), journals
//! `interrupted` and exits 130 (128 + signal). The run stays resumable: `spur continue`
//! sees the killed action as ambiguous and re-runs it only with `--rerun-ambiguous`.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

use spur_guards::process::{kill_live_groups, live_groups, DEFAULT_KILL_GRACE};

use super::journal::{Event, Journal};

static INTERRUPTING: AtomicBool = AtomicBool::new(false);
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
static ACTIVE: Mutex<Option<Arc<Mutex<Journal>>>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// True once a signal arrived: the runner must not start anything new.
pub fn is_interrupting() -> bool {
    INTERRUPTING.load(Ordering::SeqCst)
}

/// Called by the runner when it sees [`is_interrupting`]: the handler thread exits the
/// process; this thread waits for that.
pub fn wait_for_exit() -> ! {
    loop {
        thread::park();
    }
}

/// The journal of the run in progress (for the `interrupted` record).
pub fn activate(journal: Arc<Mutex<Journal>>) {
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(journal);
}

pub fn deactivate() {
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write(2) is async-signal-safe; the byte lives on this stack frame.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// Install the SIGINT/SIGTERM handlers (once per process; later calls do nothing).
pub fn install() -> io::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| result = install_once());
    result
}

fn install_once() -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_fd, write_fd] = fds;
    PIPE_WRITE.store(write_fd, Ordering::Relaxed);
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
            INTERRUPTING.store(true, Ordering::SeqCst);
            // Hold the journal from here on: no record can follow the interruption.
            let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let guard = active
                .as_ref()
                .map(|j| j.lock().unwrap_or_else(|p| p.into_inner()));
            if kill_live_groups(libc::SIGTERM) > 0 {
                let deadline = Instant::now() + DEFAULT_KILL_GRACE;
                while !live_groups().is_empty() && Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(10));
                }
                kill_live_groups(libc::SIGKILL);
            }
            if let Some(mut journal) = guard {
                let state = journal.last_state().unwrap_or_default();
                let _ = journal.append(Event::Interrupted { state });
            }
            std::process::exit(128 + signal);
        })?;
    Ok(())
}
