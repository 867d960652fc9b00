//! Standard output for every subcommand: a closed pipe ends the output, not the process.
//!
//! Rust ignores SIGPIPE, so a write to a pipe whose reader is gone fails with `EPIPE`, and
//! `println!` turns that failure into a panic. spur's output goes through [`write_stdout`]
//! instead: after a broken pipe the rest of the output is dropped quietly (a run that is
//! being watched through `| head` goes on and is journaled as usual); any other error is
//! reported on standard error.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output's reader has gone away.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Write `args` to standard output (see the module docs).
pub(crate) fn write_stdout(args: fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => CLOSED.store(true, Ordering::Relaxed),
        Err(e) => eprintln!("spur: cannot write to standard output: {e}"),
    }
}
