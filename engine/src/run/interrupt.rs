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
use crate::store::timestamp::Timestamp;

static INTERRUPTING: AtomicBool = AtomicBool::new(false);
static ACTIVE: Mutex<Option<Arc<Mutex<Journal>>>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// True once a signal arrived: the runner must not start anything new.
pub(crate) fn is_interrupting() -> bool {
    INTERRUPTING.load(Ordering::SeqCst)
}

/// Called by the runner when it sees [`is_interrupting`]: the handler thread exits the
/// process; this thread waits for that.
pub(crate) fn wait_for_exit() -> ! {
    loop {
        thread::park();
    }
}

/// While it lives, a signal journals `interrupted` into this run's journal; dropping it
/// (however the run ended, an early error included) makes a later signal journal nothing.
#[derive(Debug)]
#[must_use = "the run is followed by the interrupt handler only while this lives"]
pub(crate) struct Activation(());

/// Make `journal` the run in progress (for the `interrupted` record).
pub(crate) fn activate(journal: Arc<Mutex<Journal>>) -> Activation {
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(journal);
    Activation(())
}

impl Drop for Activation {
    fn drop(&mut self) {
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
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
            let _ = journal.append(Event::Interrupted { state }, Timestamp::now());
        }
        std::process::exit(128 + signal);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::journal::Durability;

    fn active() -> bool {
        ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    #[test]
    // ACTIVE is process-wide: this is the only test of the library that activates it.
    fn an_activation_follows_the_journal_until_it_is_dropped_even_on_an_early_return() {
        let dir = tempfile::tempdir().unwrap();
        let key = crate::store::chain_key::ChainKey::fixed(1);
        let journal =
            Journal::create(&dir.path().join("j.jsonl"), Durability::Unsafe, key).unwrap();
        let journal = Arc::new(Mutex::new(journal));
        let run = |fail: bool| -> Result<(), ()> {
            let _armed = activate(Arc::clone(&journal));
            assert!(active());
            if fail {
                return Err(());
            }
            Ok(())
        };
        assert!(run(true).is_err());
        assert!(!active());
        assert!(run(false).is_ok());
        assert!(!active());
    }
}
