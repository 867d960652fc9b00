//! A configured verify gate: what to run, what it must wait for, and what its failure means.

use std::path::PathBuf;
use std::time::Duration;

use crate::source::Span;

/// How long a gate may run when its config names no `timeoutMs` (10 minutes).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// One gate of `.spur/config.yaml` `verify.gates`, with the defaults of its standard gate
/// (if it is one) already applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gate {
    pub(crate) name: String,
    pub(crate) command: GateCommand,
    /// Gates that must have finished (whatever they returned) before this one starts.
    pub(crate) needs: Vec<String>,
    pub(crate) timeout: Duration,
    /// A read-only gate changes nothing in the working tree, so it may run beside others.
    pub(crate) read_only: bool,
    /// What a FAIL of this gate means for the verdict (the severity of its check row).
    pub(crate) severity: GateSeverity,
    pub(crate) enabled: bool,
    /// A file the gate must produce; absent after the run → ERROR (no evidence).
    pub(crate) expect_file: Option<PathBuf>,
    /// Where the gate writes findings as JSON lines (besides its stdout); relative to the
    /// project root. `None` → `SPUR_FINDINGS_FILE`, a file in the evidence directory.
    pub(crate) findings_file: Option<PathBuf>,
    /// The span of the gate's name in the config, for diagnostics.
    pub(crate) span: Span,
    /// The span of its `needs` value (the name when `needs` is defaulted).
    pub(crate) needs_span: Span,
}

/// What a gate runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GateCommand {
    /// `command: TEXT`, run with `sh -c`.
    Shell(String),
    /// `executable` + `args`, run with no shell. A gate that names neither runs the plugin
    /// executable `spur-gate-<name>` found on PATH.
    Exec {
        executable: String,
        args: Vec<String>,
    },
}

impl GateCommand {
    /// The command as a person would type it, for evidence and reports.
    pub(crate) fn display(&self) -> String {
        match self {
            Self::Shell(text) => text.clone(),
            Self::Exec { executable, args } => std::iter::once(executable.as_str())
                .chain(args.iter().map(String::as_str))
                .map(quote_for_display)
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

fn quote_for_display(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The severity a gate's check row carries: a non-pass `blocker` fails the
/// verdict, a non-pass `major` makes it PARTIAL, `minor` and `advisory` never block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GateSeverity {
    Blocker,
    Major,
    Minor,
    Advisory,
}

impl GateSeverity {
    pub(crate) const ALL: [Self; 4] = [Self::Blocker, Self::Major, Self::Minor, Self::Advisory];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Blocker => "blocker",
            Self::Major => "major",
            Self::Minor => "minor",
            Self::Advisory => "advisory",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_commands_display_with_quoting_where_needed() {
        let command = GateCommand::Exec {
            executable: "cargo".into(),
            args: vec!["test".into(), "a b".into(), "it's".into()],
        };
        assert_eq!(command.display(), r"cargo test 'a b' 'it'\''s'");
    }
}
