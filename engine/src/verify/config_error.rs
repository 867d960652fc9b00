//! What can be wrong with `.spur/config.yaml` `verify:`. Each problem is a
//! [`Diagnostic`] — the checker's type: a stable code, the file, the exact span, help —
//! so `spur verify` reports configuration errors exactly as `spur check` reports pipelines.

use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, JsonDiagnostic};
use crate::source::{SourceFile, Span};
use crate::yaml::{Codes, ParseError, CONFIG_LIMITS};

/// Stable codes of configuration problems.
pub mod code {
    /// Not one YAML document within the limits, or a value of the wrong type, an unknown
    /// key, a repeated key.
    pub const YAML: &str = "spur::verify::yaml";
    /// A gate name that cannot name an evidence file.
    pub const INVALID_GATE_NAME: &str = "spur::verify::invalid-gate-name";
    /// Both `command` and `executable`.
    pub const COMMAND_CONFLICT: &str = "spur::verify::command-conflict";
    /// `args` with no `executable`.
    pub const ARGS_WITHOUT_EXECUTABLE: &str = "spur::verify::args-without-executable";
    /// A blank `command` or `executable`.
    pub const EMPTY_COMMAND: &str = "spur::verify::empty-command";
    /// `expectFile` or `findingsFile` not relative and inside the project.
    pub const PATH_OUTSIDE_PROJECT: &str = "spur::verify::path-outside-project";
    /// A `severity` that is not one.
    pub const INVALID_SEVERITY: &str = "spur::verify::invalid-severity";
    /// `timeoutMs` or `parallelism` of 0.
    pub const ZERO: &str = "spur::verify::zero";
    /// A `needs` entry that names no configured gate.
    pub const UNKNOWN_NEED: &str = "spur::verify::unknown-need";
    /// Gates that need each other.
    pub const NEEDS_CYCLE: &str = "spur::verify::needs-cycle";
}

/// The YAML typer's findings (wrong type, unknown or duplicate key) all report as
/// [`code::YAML`].
pub(crate) const CODES: Codes = Codes {
    wrong_type: code::YAML,
    missing_key: code::YAML,
    unknown_key: code::YAML,
    duplicate_key: code::YAML,
};

/// The help of a YAML finding that has none of its own: what the section holds.
const SHAPE_HELP: &str = "`verify.gates` maps a gate name to {command | executable + args, needs, timeoutMs, readOnly, severity, enabled, expectFile, findingsFile}";

/// Why the verify configuration cannot be used.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum VerifyConfigErrors {
    #[error("cannot read {}: {source}", path.display())]
    #[diagnostic(
        code("spur::verify::config-unreadable"),
        help("check that the file is readable")
    )]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },

    #[error("{} in the verify configuration ({})", plural(errors.len()), path.display())]
    #[diagnostic(
        code("spur::verify::invalid-config"),
        help("fix the verify configuration and run `spur verify` again")
    )]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found, in the order of the file (cycles last).
        #[related]
        errors: Vec<Diagnostic>,
    },
}

impl VerifyConfigErrors {
    /// Every located problem (none for an unreadable file).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Self::Unreadable { .. } => &[],
            Self::Invalid { errors, .. } => errors,
        }
    }

    /// The problems in the flat JSON form of `spur check --format json`.
    pub fn to_json(&self) -> Vec<JsonDiagnostic> {
        self.diagnostics().iter().map(Diagnostic::to_json).collect()
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 error".to_owned()
    } else {
        format!("{n} errors")
    }
}

/// Builds the diagnostics of one config file.
#[derive(Debug, Clone, Copy)]
pub struct ConfigProblems<'a> {
    /// The file the diagnostics point into.
    pub source: &'a SourceFile,
}

impl ConfigProblems<'_> {
    /// The file is not one YAML document within the limits.
    pub(crate) fn parse_error(self, error: &ParseError) -> Diagnostic {
        let mut span = error.span();
        let (line, column) = self.source.line_column(span.offset);
        if span.len == 0 {
            // An empty span shows as a gap between two characters; the one the parser
            // stopped at is what to look at.
            let width = self
                .source
                .text()
                .get(span.offset..)
                .and_then(|t| t.chars().next());
            span = Span::new(span.offset, width.map_or(0, char::len_utf8));
        }
        let message = match error {
            ParseError::Syntax { message, .. } => {
                format!("{message} at line {line}, column {column}")
            }
            other => other.to_string(),
        };
        let help = match error {
            ParseError::Syntax { .. } => SHAPE_HELP.to_owned(),
            ParseError::TooDeep { .. } | ParseError::TooLarge { .. } => format!(
                "spur reads at most {} YAML nodes, {} levels of nesting and {} aliases in its configuration",
                CONFIG_LIMITS.max_nodes, CONFIG_LIMITS.max_depth, CONFIG_LIMITS.max_aliases
            ),
            ParseError::MultipleDocuments { .. } => {
                "remove the `---` separator: the configuration is one YAML document".to_owned()
            }
            ParseError::UnknownAnchor { .. } => {
                "define the anchor (`&name`) before its aliases".to_owned()
            }
        };
        Diagnostic::error(
            code::YAML,
            self.source,
            span,
            format!("invalid verify configuration: {message}"),
        )
        .label("here")
        .help(help)
    }

    /// A finding of the YAML typer, with the shape of the section as help when it has
    /// none of its own.
    pub(crate) fn typed(self, mut finding: Diagnostic) -> Diagnostic {
        if finding.help.is_none() {
            finding.help = Some(SHAPE_HELP.to_owned());
        }
        finding
    }

    /// [`code::INVALID_GATE_NAME`], at the name.
    pub fn invalid_gate_name(self, name: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::INVALID_GATE_NAME,
            self.source,
            span,
            format!("invalid gate name {name:?}"),
        )
        .label("not a valid gate name")
        .help("a gate name names its evidence file: use letters, digits, '.', '_' and '-', starting with a letter or digit")
    }

    /// [`code::COMMAND_CONFLICT`], at both values.
    pub fn command_conflict(self, gate: &str, command: Span, executable: Span) -> Diagnostic {
        Diagnostic::error(
            code::COMMAND_CONFLICT,
            self.source,
            command,
            format!("gate `{gate}` has both `command` and `executable`"),
        )
        .label("runs with `sh -c`")
        .secondary(executable, "runs with no shell")
        .help("use `command` for a shell command line, or `executable` + `args` to run a program with no shell — not both")
    }

    /// [`code::ARGS_WITHOUT_EXECUTABLE`], where `args` opens.
    pub fn args_without_executable(self, gate: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::ARGS_WITHOUT_EXECUTABLE,
            self.source,
            span,
            format!("gate `{gate}` has `args` but no `executable`"),
        )
        .label("these arguments have no executable")
        .help("`args` belong to `executable`; with `command`, write the arguments in the command line")
    }

    /// [`code::EMPTY_COMMAND`], at the blank value of `field`.
    pub fn empty_command(self, gate: &str, field: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::EMPTY_COMMAND,
            self.source,
            span,
            format!("gate `{gate}` has an empty {field}"),
        )
        .label("empty")
        .help(format!(
            "name the command to run, or remove the key to run the plugin `spur-gate-{gate}`"
        ))
    }

    /// [`code::PATH_OUTSIDE_PROJECT`], at the path.
    pub fn path_outside_project(self, gate: &str, field: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::PATH_OUTSIDE_PROJECT,
            self.source,
            span,
            format!("`{field}` of gate `{gate}` must be a relative path inside the project"),
        )
        .label("not inside the project")
        .help("spur removes this file before each run of the gate (so a stale one never counts as evidence); it must be relative to the project root, with no `..`")
    }

    /// [`code::INVALID_SEVERITY`], at the value.
    pub fn invalid_severity(self, gate: &str, value: &str, help: String, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::INVALID_SEVERITY,
            self.source,
            span,
            format!("unknown severity {value:?} for gate `{gate}`"),
        )
        .label("not a severity")
        .help(help)
    }

    /// [`code::ZERO`], at the 0.
    pub fn zero(self, field: &str, help: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::ZERO,
            self.source,
            span,
            format!("`{field}` must be greater than 0"),
        )
        .label("0 is not allowed here")
        .help(help)
    }

    /// [`code::UNKNOWN_NEED`], at the need.
    pub fn unknown_need(self, gate: &str, need: &str, help: String, span: Span) -> Diagnostic {
        Diagnostic::error(
            code::UNKNOWN_NEED,
            self.source,
            span,
            format!("gate `{gate}` needs `{need}`, which is not a configured gate"),
        )
        .label(format!("no gate named `{need}`"))
        .help(help)
    }

    /// [`code::NEEDS_CYCLE`]. `cycle` names the gates in `needs` order, ending where it
    /// started.
    pub fn needs_cycle(self, cycle: &[String], spans: &[Span]) -> Diagnostic {
        let mut spans = spans.iter();
        let first = spans.next().copied().unwrap_or_default();
        let mut diagnostic = Diagnostic::error(
            code::NEEDS_CYCLE,
            self.source,
            first,
            format!(
                "gates need each other in a cycle: {} (a → b: a needs b)",
                cycle.join(" → ")
            ),
        )
        .label("part of the cycle")
        .help("`needs` must form a DAG: remove one of these needs so that some gate can run first");
        for span in spans {
            diagnostic = diagnostic.secondary(*span, "part of the cycle");
        }
        diagnostic
    }
}
