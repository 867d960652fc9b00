//! What can be wrong with `.spur/config.yaml` `verify:`. Each problem is a
//! [`Diagnostic`] — the checker's type: a stable code, the file, the exact span, help —
//! so `spur verify` reports configuration errors exactly as `spur check` reports pipelines.

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic, JsonDiagnostic};
use crate::source::{SourceFile, Span};
use crate::yaml::{Codes, ParseError, CONFIG_LIMITS};

/// The YAML typer's findings (wrong type, unknown or duplicate key) all report as
/// [`Code::VerifyYaml`].
pub(crate) const CODES: Codes = Codes {
    wrong_type: Code::VerifyYaml,
    missing_key: Code::VerifyYaml,
    unknown_key: Code::VerifyYaml,
    duplicate_key: Code::VerifyYaml,
};

/// The help of a YAML finding that has none of its own: what the section holds.
const SHAPE_HELP: &str = "`verify.gates` maps a gate name to {command | executable + args, needs, timeoutMs, readOnly, severity, enabled, expectFile, findingsFile}";

/// Why the verify configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VerifyConfigErrors {
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },

    #[error("{} in the verify configuration ({})", plural(errors.len()), path.display())]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found, in the order of the file (cycles last).
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    VerifyConfigErrors {
        Self::Unreadable { .. } => Code::VerifyConfigUnreadable,
            help("check that the file is readable");
        Self::Invalid { errors, .. } => Code::VerifyInvalidConfig,
            help("fix the verify configuration and run `spur verify` again"),
            related(errors);
    }
}

impl VerifyConfigErrors {
    /// Every located problem (none for an unreadable file).
    pub(crate) fn diagnostics(&self) -> &[Diagnostic] {
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
pub(crate) struct ConfigProblems<'a> {
    /// The file the diagnostics point into.
    pub(crate) source: &'a SourceFile,
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
            Code::VerifyYaml,
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

    /// [`Code::VerifyInvalidGateName`], at the name.
    pub(crate) fn invalid_gate_name(self, name: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyInvalidGateName,
            self.source,
            span,
            format!("invalid gate name {name:?}"),
        )
        .label("not a valid gate name")
        .help("a gate name names its evidence file: use letters, digits, '.', '_' and '-', starting with a letter or digit")
    }

    /// [`Code::VerifyCommandConflict`], at both values.
    pub(crate) fn command_conflict(
        self,
        gate: &str,
        command: Span,
        executable: Span,
    ) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyCommandConflict,
            self.source,
            command,
            format!("gate `{gate}` has both `command` and `executable`"),
        )
        .label("runs with `sh -c`")
        .secondary(executable, "runs with no shell")
        .help("use `command` for a shell command line, or `executable` + `args` to run a program with no shell — not both")
    }

    /// [`Code::VerifyArgsWithoutExecutable`], where `args` opens.
    pub(crate) fn args_without_executable(self, gate: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyArgsWithoutExecutable,
            self.source,
            span,
            format!("gate `{gate}` has `args` but no `executable`"),
        )
        .label("these arguments have no executable")
        .help("`args` belong to `executable`; with `command`, write the arguments in the command line")
    }

    /// [`Code::VerifyEmptyCommand`], at the blank value of `field`.
    pub(crate) fn empty_command(self, gate: &str, field: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyEmptyCommand,
            self.source,
            span,
            format!("gate `{gate}` has an empty {field}"),
        )
        .label("empty")
        .help(format!(
            "name the command to run, or remove the key to run the plugin `spur-gate-{gate}`"
        ))
    }

    /// [`Code::VerifyPathOutsideProject`], at the path.
    pub(crate) fn path_outside_project(self, gate: &str, field: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyPathOutsideProject,
            self.source,
            span,
            format!("`{field}` of gate `{gate}` must be a relative path inside the project"),
        )
        .label("not inside the project")
        .help("spur removes this file before each run of the gate (so a stale one never counts as evidence); it must be relative to the project root, with no `..`")
    }

    /// [`Code::VerifyInvalidSeverity`], at the value.
    pub(crate) fn invalid_severity(
        self,
        gate: &str,
        value: &str,
        help: String,
        span: Span,
    ) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyInvalidSeverity,
            self.source,
            span,
            format!("unknown severity {value:?} for gate `{gate}`"),
        )
        .label("not a severity")
        .help(help)
    }

    /// [`Code::VerifyZero`], at the 0.
    pub(crate) fn zero(self, field: &str, help: &str, span: Span) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyZero,
            self.source,
            span,
            format!("`{field}` must be greater than 0"),
        )
        .label("0 is not allowed here")
        .help(help)
    }

    /// [`Code::VerifyUnknownNeed`], at the need.
    pub(crate) fn unknown_need(
        self,
        gate: &str,
        need: &str,
        help: String,
        span: Span,
    ) -> Diagnostic {
        Diagnostic::error(
            Code::VerifyUnknownNeed,
            self.source,
            span,
            format!("gate `{gate}` needs `{need}`, which is not a configured gate"),
        )
        .label(format!("no gate named `{need}`"))
        .help(help)
    }

    /// [`Code::VerifyNeedsCycle`]. `cycle` names the gates in `needs` order, ending where it
    /// started.
    pub(crate) fn needs_cycle(self, cycle: &[String], spans: &[Span]) -> Diagnostic {
        let mut spans = spans.iter();
        let first = spans.next().copied().unwrap_or_default();
        let mut diagnostic = Diagnostic::error(
            Code::VerifyNeedsCycle,
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
