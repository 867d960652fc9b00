//! SIGINT (Ctrl-C), SIGTERM and SIGHUP during a run, handled alike. Children run in their
//! own process groups, so the terminal's signal reaches only spur; the handler then: stops
//! the run from writing anything more, kills every child group (TERM, a grace period,
//! KILL), journals `interrupted`, tells the caller (the CLI prints the run id and the
//! command that resumes it) and exits with 128 + the signal. The run stays resumable:
//! `spur continue` sees the killed action as ambiguous and re-runs it only with
//! `--rerun-ambiguous`.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread;

use spur_process::{on_first_signal, terminate_live_groups};

use super::journal::{Event, Journal};
use super::run_id::RunId;
use crate::store::timestamp::Timestamp;

static INTERRUPTING: AtomicBool = AtomicBool::new(false);
static ACTIVE: Mutex<Option<(Arc<Mutex<Journal>>, String)>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// What a signal ended: told to the caller's notice before spur exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The signal's number (2 SIGINT, 15 SIGTERM, 1 SIGHUP).
    pub signal: i32,
    /// The run in progress, if one was: its id.
    pub run_id: Option<String>,
    /// The state it stood in.
    pub state: Option<String>,
    /// An action had started and not finished: resuming it needs `--rerun-ambiguous`.
    pub in_action: bool,
    /// Whether `interrupted` reached the journal.
    pub journaled: bool,
}

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

/// Make `journal` (of run `run_id`) the run in progress (for the `interrupted` record).
pub(crate) fn activate(journal: Arc<Mutex<Journal>>, run_id: &RunId) -> Activation {
    *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some((journal, run_id.to_string()));
    Activation(())
}

impl Drop for Activation {
    fn drop(&mut self) {
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// Install the SIGINT/SIGTERM/SIGHUP handler (once per process; later calls do nothing).
/// `notice` is called on the handler's thread after the journal is written and before spur
/// exits: the CLI prints the run id and the resume command there.
pub fn install(notice: impl Fn(&Interruption) + Send + Sync + 'static) -> io::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| result = install_once(notice));
    result
}

fn install_once(notice: impl Fn(&Interruption) + Send + Sync + 'static) -> io::Result<()> {
    on_first_signal(move |signal| {
        INTERRUPTING.store(true, Ordering::SeqCst);
        // Hold the journal from here on: no record can follow the interruption.
        let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let guard = active
            .as_ref()
            .map(|(j, id)| (j.lock().unwrap_or_else(|p| p.into_inner()), id.clone()));
        terminate_live_groups();
        let mut interruption = Interruption {
            signal,
            run_id: None,
            state: None,
            in_action: false,
            journaled: false,
        };
        if let Some((mut journal, run_id)) = guard {
            let state = journal.last_state().unwrap_or_default();
            interruption.in_action = journal.in_action();
            interruption.journaled = journal
                .append(
                    Event::Interrupted {
                        state: state.clone(),
                    },
                    Timestamp::now(),
                )
                .is_ok();
            interruption.run_id = Some(run_id);
            interruption.state = Some(state).filter(|s| !s.is_empty());
            notice(&interruption);
            drop(journal);
        } else {
            notice(&interruption);
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
        let run_id = RunId::parse("20260101T000000Z-abcdef").unwrap();
        let run = |fail: bool| -> Result<(), ()> {
            let _armed = activate(Arc::clone(&journal), &run_id);
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
