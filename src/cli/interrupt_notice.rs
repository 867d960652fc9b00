//! What spur prints when SIGINT (Ctrl-C), SIGTERM or SIGHUP ends a run: the progress line
//! ended cleanly, the run id, where it stopped, and the exact command that resumes it.
//! The engine's handler journals `interrupted` first, then calls this (on its own thread),
//! then exits with 128 + the signal.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use spur_engine::run::interrupt::{self, Interruption};

use super::run_progress;

/// Install the handler for this `spur run` / `spur continue`, which was given `state_dir`
/// (`--state-dir` or `SPUR_STATE_DIR`), if any.
pub fn install(state_dir: Option<PathBuf>) {
    let _ = interrupt::install(move |interruption| {
        run_progress::silence();
        let mut stderr = std::io::stderr().lock();
        if stderr.is_terminal() {
            // The spinner's line: cleared, the notice starts at the line's beginning.
            let _ = write!(stderr, "\r\x1b[2K");
        }
        let _ = write!(stderr, "{}", render(interruption, state_dir.as_deref()));
        let _ = stderr.flush();
    });
}

/// The notice, one or two lines.
pub fn render(interruption: &Interruption, state_dir: Option<&Path>) -> String {
    let signal = match interruption.signal {
        1 => "SIGHUP".to_owned(),
        2 => "SIGINT".to_owned(),
        15 => "SIGTERM".to_owned(),
        n => format!("signal {n}"),
    };
    let Some(run_id) = &interruption.run_id else {
        return format!("spur: interrupted by {signal}; no run had started\n");
    };
    let at = interruption
        .state
        .as_deref()
        .map(|s| format!(" at state {s}"))
        .unwrap_or_default();
    let action = if interruption.in_action {
        " (its running action was killed)"
    } else {
        ""
    };
    let journaled = if interruption.journaled {
        ""
    } else {
        " (the journal could not record it)"
    };
    let mut command = format!("spur continue {run_id}");
    if let Some(dir) = state_dir {
        command.push_str(" --state-dir ");
        command.push_str(&shell_word(&dir.display().to_string()));
    }
    if interruption.in_action {
        command.push_str(" --rerun-ambiguous");
    }
    format!(
        "spur: interrupted by {signal}: run {run_id} stopped{at}{action}{journaled}\n  resume with: {command}\n"
    )
}

/// `word` as one shell word: as it is when it needs no quoting, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_dir_that_needs_quoting_is_quoted() {
        assert_eq!(shell_word("/tmp/a b/.spur"), "'/tmp/a b/.spur'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("/plain/.spur"), "/plain/.spur");
    }
}
