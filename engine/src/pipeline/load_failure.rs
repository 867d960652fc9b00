//! [`LoadFailure`]: a pipeline file that cannot be read or parsed at all — unreadable, too
//! large, not UTF-8, not YAML, over a YAML budget, not a mapping. One finding, exit 2; the
//! findings of a pipeline that loads are diagnostics instead.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic};

/// The file cannot be read or parsed at all (exit 2).
#[derive(Debug)]
pub enum LoadFailure {
    /// No source text to point at: I/O error, too large, not UTF-8.
    Unreadable {
        /// The stable code of the failure.
        code: Code,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
        /// What to do about it, when there is something.
        help: Option<String>,
    },
    /// A finding with a span in the text: YAML syntax, budget exceeded, not a mapping…
    Invalid(Box<Diagnostic>),
}

impl LoadFailure {
    pub(crate) fn code(&self) -> Code {
        match self {
            LoadFailure::Unreadable { code, .. } => *code,
            LoadFailure::Invalid(d) => d.code,
        }
    }

    /// The file that failed to load.
    pub fn path(&self) -> &Path {
        match self {
            LoadFailure::Unreadable { path, .. } => path,
            LoadFailure::Invalid(d) => d.source().path(),
        }
    }

    /// The help text, when there is one.
    pub fn help_text(&self) -> Option<&str> {
        match self {
            LoadFailure::Unreadable { help, .. } => help.as_deref(),
            LoadFailure::Invalid(d) => d.help.as_deref(),
        }
    }

    /// The JSON form, like a diagnostic's (line/column 0 when there is no text).
    pub fn to_json(&self) -> crate::diagnostic::JsonDiagnostic {
        match self {
            LoadFailure::Unreadable {
                code,
                path,
                message,
                help,
            } => crate::diagnostic::JsonDiagnostic {
                severity: crate::diagnostic::Severity::Error,
                code: *code,
                message: message.clone(),
                file: path.display().to_string(),
                line: 0,
                column: 0,
                offset: 0,
                length: 0,
                help: help.clone(),
            },
            LoadFailure::Invalid(d) => d.to_json(),
        }
    }

    pub(crate) fn invalid(diagnostic: Diagnostic) -> Self {
        LoadFailure::Invalid(Box::new(diagnostic))
    }
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadFailure::Unreadable { path, message, .. } => {
                write!(f, "{}: {message}", path.display())
            }
            LoadFailure::Invalid(d) => fmt::Display::fmt(d, f),
        }
    }
}

impl std::error::Error for LoadFailure {}

impl miette::Diagnostic for LoadFailure {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            LoadFailure::Unreadable { help, .. } => {
                help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
            }
            LoadFailure::Invalid(d) => miette::Diagnostic::help(d.as_ref()),
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self {
            LoadFailure::Unreadable { .. } => None,
            LoadFailure::Invalid(d) => miette::Diagnostic::source_code(d.as_ref()),
        }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        match self {
            LoadFailure::Unreadable { .. } => None,
            LoadFailure::Invalid(d) => miette::Diagnostic::labels(d.as_ref()),
        }
    }
}
