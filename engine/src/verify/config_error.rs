//! What can be wrong with `.spur/config.yaml` `verify:`: each error has a stable code, the
//! file, and the span of the offending value.

use std::path::PathBuf;
use std::sync::Arc;

use miette::{Diagnostic, NamedSource, SourceSpan};

type Src = NamedSource<Arc<str>>;

/// One problem in the verify configuration.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum VerifyConfigError {
    #[error("cannot read {}: {source}", path.display())]
    #[diagnostic(
        code(spur::verify::config::unreadable),
        help("check that the file exists and is readable")
    )]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid verify configuration: {message}")]
    #[diagnostic(
        code(spur::verify::config::yaml),
        help("`verify.gates` maps a gate name to {{command | executable + args, needs, timeoutMs, readOnly, severity, enabled, expectFile, findingsFile}}")
    )]
    Yaml {
        message: String,
        #[source_code]
        src: Src,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    #[error("invalid gate name {name:?}")]
    #[diagnostic(
        code(spur::verify::config::invalid_gate_name),
        help("a gate name names its evidence file: use letters, digits, '.', '_' and '-', starting with a letter or digit")
    )]
    InvalidGateName {
        name: String,
        #[source_code]
        src: Src,
        #[label("not a valid gate name")]
        span: SourceSpan,
    },

    #[error("gate `{gate}` has both `command` and `executable`")]
    #[diagnostic(
        code(spur::verify::config::command_conflict),
        help("use `command` for a shell command line, or `executable` + `args` to run a program with no shell — not both")
    )]
    CommandConflict {
        gate: String,
        #[source_code]
        src: Src,
        #[label("runs with `sh -c`")]
        command: SourceSpan,
        #[label("runs with no shell")]
        executable: SourceSpan,
    },

    #[error("gate `{gate}` has `args` but no `executable`")]
    #[diagnostic(
        code(spur::verify::config::args_without_executable),
        help("`args` belong to `executable`; with `command`, write the arguments in the command line")
    )]
    ArgsWithoutExecutable {
        gate: String,
        #[source_code]
        src: Src,
        #[label("these arguments have no executable")]
        span: SourceSpan,
    },

    #[error("gate `{gate}` has an empty {field}")]
    #[diagnostic(
        code(spur::verify::config::empty_command),
        help("name the command to run, or remove the key to run the plugin `spur-gate-{gate}`")
    )]
    EmptyCommand {
        gate: String,
        field: &'static str,
        #[source_code]
        src: Src,
        #[label("empty")]
        span: SourceSpan,
    },

    #[error("`{field}` of gate `{gate}` must be a relative path inside the project")]
    #[diagnostic(
        code(spur::verify::config::path_outside_project),
        help("spur removes this file before each run of the gate (so a stale one never counts as evidence); it must be relative to the project root, with no `..`")
    )]
    PathOutsideProject {
        gate: String,
        field: &'static str,
        #[source_code]
        src: Src,
        #[label("not inside the project")]
        span: SourceSpan,
    },

    #[error("unknown severity {value:?} for gate `{gate}`")]
    #[diagnostic(code(spur::verify::config::invalid_severity), help("{help}"))]
    InvalidSeverity {
        gate: String,
        value: String,
        help: String,
        #[source_code]
        src: Src,
        #[label("not a severity")]
        span: SourceSpan,
    },

    #[error("`{field}` must be greater than 0")]
    #[diagnostic(code(spur::verify::config::zero), help("{help}"))]
    Zero {
        field: &'static str,
        help: &'static str,
        #[source_code]
        src: Src,
        #[label("0 is not allowed here")]
        span: SourceSpan,
    },

    #[error("gate `{gate}` needs `{need}`, which is not a configured gate")]
    #[diagnostic(code(spur::verify::config::unknown_need), help("{help}"))]
    UnknownNeed {
        gate: String,
        need: String,
        help: String,
        #[source_code]
        src: Src,
        #[label("no gate named `{need}`")]
        span: SourceSpan,
    },

    #[error("gates need each other in a cycle: {} (a → b: a needs b)", cycle.join(" → "))]
    #[diagnostic(
        code(spur::verify::config::needs_cycle),
        help("`needs` must form a DAG: remove one of these needs so that some gate can run first")
    )]
    NeedsCycle {
        cycle: Vec<String>,
        #[source_code]
        src: Src,
        #[label(collection, "part of the cycle")]
        spans: Vec<SourceSpan>,
    },
}

impl VerifyConfigError {
    /// The stable code, for JSON output and tests.
    pub fn code_str(&self) -> String {
        self.code().map(|c| c.to_string()).unwrap_or_default()
    }
}

/// Every problem found in one configuration file.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{} in the verify configuration ({})", plural(errors.len()), path.display())]
#[diagnostic(
    code(spur::verify::config::invalid),
    help("fix the verify configuration and run `spur verify` again")
)]
pub struct VerifyConfigErrors {
    pub path: PathBuf,
    #[related]
    pub errors: Vec<VerifyConfigError>,
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 error".to_owned()
    } else {
        format!("{n} errors")
    }
}
