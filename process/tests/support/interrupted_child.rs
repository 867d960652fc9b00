//! Test support, not a tool: the child process of `process/tests/interrupt.rs`.
//!
//! `spur-process-test-child DIR` installs spur's interrupt handler (which writes the signal
//! number to `DIR/interrupted`), then runs a shell that starts a grandchild, writes its pid
//! to `DIR/grandchild.pid` and waits. The test signals this process and checks that it
//! exits with 128 + the signal and that the grandchild is gone. Exit 3: no handler ended
//! the process within 10 s of the run's end, which the test reports as a failure.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use spur_process::{install_interrupt_handler, ProcessSpec, StartHook};

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: spur-process-test-child DIR");
        return ExitCode::from(2);
    };
    let marker = dir.join("interrupted");
    install_interrupt_handler(move |signal| {
        std::fs::write(&marker, signal.to_string()).unwrap();
    })
    .expect("install the interrupt handler");
    let pidfile = dir.join("grandchild.pid");
    let command = format!(
        "sleep 100 & echo $! > '{0}.tmp'; mv '{0}.tmp' '{0}'; sleep 100",
        pidfile.display()
    );
    // Held until listed (as an action is), so the kill -9 test does not race the listing.
    let out = ProcessSpec::shell(&command)
        .on_start(StartHook::new(|_| Ok(())))
        .run();
    // The handler kills the group, which ends this run too, and then ends the process with
    // 128 + the signal: wait for that (at most 10 s) instead of racing it to an exit, as
    // the engine's runner does (`run::interrupt::wait_for_exit`).
    std::thread::sleep(Duration::from_secs(10));
    eprintln!(
        "the run ended ({}) but no interrupt handler ended the process",
        out.status
    );
    ExitCode::from(3)
}
