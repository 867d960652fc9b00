//! SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed terminal, a dropped ssh), handled alike.
//! Children run in process groups of their own, so the terminal's signals reach only spur;
//! on the first one spur kills every live child group and the caller's handler runs (a
//! run journals `interrupted` and says how to resume). signal-hook's handler only writes
//! to a close-on-exec socket pair, so no child can write into it and fake a signal; a
//! thread reads it and runs the handler outside signal context.

use std::io;
use std::thread;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::group::{kill_live_groups, live_groups};
use crate::spec::DEFAULT_KILL_GRACE;

/// The signals spur handles: SIGINT, SIGTERM, SIGHUP.
pub const HANDLED: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Handle [`HANDLED`] from now on and call `handler(signal)` on a thread of its own when
/// the first arrives. The handler runs outside signal context, so it may lock, write files
/// and kill groups; it should end the process.
pub fn on_first_signal(handler: impl FnOnce(i32) + Send + 'static) -> io::Result<()> {
    let mut signals = Signals::new(HANDLED)?;
    thread::Builder::new()
        .name("spur-interrupt".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                handler(signal);
            }
        })?;
    Ok(())
}

/// SIGTERM every live child group, wait up to the kill grace for them to go, then
/// SIGKILL whatever is left (bounded).
pub fn terminate_live_groups() {
    if kill_live_groups(SIGTERM) > 0 {
        let deadline = Instant::now() + DEFAULT_KILL_GRACE;
        while !live_groups().is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        kill_live_groups(signal_hook::consts::SIGKILL);
    }
}

/// On the first signal: terminate every live child group ([`terminate_live_groups`]), call
/// `on_interrupt(signal)`, then exit with `128 + signal` (130 for Ctrl-C, 143 for SIGTERM,
/// 129 for SIGHUP). Call once, early in `main`.
pub fn install_interrupt_handler(
    on_interrupt: impl FnOnce(i32) + Send + 'static,
) -> io::Result<()> {
    on_first_signal(move |signal| {
        terminate_live_groups();
        on_interrupt(signal);
        std::process::exit(128 + signal);
    })
}
