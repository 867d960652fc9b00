//! Ctrl-C (SIGINT) and SIGTERM during a run. Children run in their own process groups, so
//! the terminal's signal reaches only spur; the handler then: stops the run from writing
//! anything more, kills every child group (TERM, a grace period, KILL), journals
//! `interrupted` and exits 130 (128 + signal). The run stays resumable: `spur continue`
//! sees the killed action as ambiguous and re-runs it only with `--rerun-ambiguous`.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread;

use spur_guards::process::{on_first_signal, terminate_live_groups};

use super::journal::{Event, Journal};

static INTERRUPTING: AtomicBool = AtomicBool::new(false);
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

/// Install the SIGINT/SIGTERM handlers (once per process; later calls do nothing).
pub fn install() -> io::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| result = install_once());
    result
}

fn install_once() -> io::Result<()> {
    on_first_signal(|signal| {
        INTERRUPTING.store(true, Ordering::SeqCst);
        // Hold the journal from here on: no record can follow the interruption.
        let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let guard = active
            .as_ref()
            .map(|j| j.lock().unwrap_or_else(|p| p.into_inner()));
        terminate_live_groups();
        if let Some(mut journal) = guard {
            let state = journal.last_state().unwrap_or_default();
            let _ = journal.append(Event::Interrupted { state });
        }
        std::process::exit(128 + signal);
    })
}
