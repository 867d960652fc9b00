//! How a subcommand ends: an exit code, or a diagnostic rendered to stderr with its code.

use std::process::ExitCode;

/// spur's exit codes (the book's running chapter lists them for users).
pub mod exit {
    pub const SUCCESS: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const PAUSED: u8 = 3;
    pub const CANNOT_START: u8 = 4;
}

/// A failed command: the diagnostic to render and the exit code to end with.
#[derive(Debug)]
pub struct Failure {
    pub report: miette::Report,
    pub code: u8,
}

impl Failure {
    /// Bad usage or unreadable/invalid input (exit 2).
    pub fn usage(report: impl Into<miette::Report>) -> Self {
        Self {
            report: report.into(),
            code: exit::USAGE,
        }
    }

    #[allow(dead_code)] // used by subcommands on other branches (verify, run)
    pub fn with_code(report: impl Into<miette::Report>, code: u8) -> Self {
        Self {
            report: report.into(),
            code,
        }
    }
}

pub type CliResult = Result<ExitCode, Failure>;

pub fn install_miette_hook() {
    // Colour follows the terminal and NO_COLOR (miette's defaults honour both).
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .terminal_links(false)
                .context_lines(1)
                // Wrap only at spaces: a path or an id stays whole (and can be copied),
                // running past the width rather than cut after a '/' or '-' or mid-word.
                .break_words(false)
                .word_separator(textwrap::WordSeparator::AsciiSpace)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .build(),
        )
    }));
}

pub fn finish(result: CliResult) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("{:?}", failure.report);
            ExitCode::from(failure.code)
        }
    }
}
