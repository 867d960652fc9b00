//! Guard kinds: the built-in ones with their typed options, and any other name, which is
//! the plugin `spur-guard-<name>`. `all`/`any`/`not` hold their guards typed as well, or
//! what was wrong with an entry (the run refuses to start with it).

use std::fmt;
use std::time::Duration;

use crate::pipeline::load::option_reader::OptionReader;
use crate::pipeline::model::{Guard, OptionValue, Options};
use crate::pipeline::templated::{ShellText, Templated};
use crate::source::{Located, SourceFile, Span};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GuardKind {
    Always,
    Never,
    /// The last action of the state succeeded.
    ActionOk,
    Shell(ShellGuardOptions),
    Jq(JqGuardOptions),
    FileExists(FileExistsOptions),
    All(CombinatorOptions),
    Any(CombinatorOptions),
    /// Passes when its guards do not all pass.
    Not(CombinatorOptions),
    /// Any other kind: the plugin `spur-guard-<name>`, given the options as JSON.
    Plugin(String),
}

/// `shell`: passes when `command` exits 0.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShellGuardOptions {
    pub(crate) command: Templated<ShellText>,
    pub(crate) cwd: Option<Templated<String>>,
    pub(crate) timeout_ms: Option<Templated<Duration>>,
}

/// `jq`: passes when `expr` yields `true` on `file` (or on the run context).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JqGuardOptions {
    /// Compiled as written when the run starts (`None`: not written as a string).
    pub(crate) expr: Option<Located<String>>,
    /// A JSON file; without it (or when not a string) the run context is the input.
    pub(crate) file: Option<Templated<String>>,
    /// How long one evaluation may take (default `spur_guards::jq::DEFAULT_TIMEOUT`).
    pub(crate) timeout_ms: Option<Templated<Duration>>,
}

/// `file-exists`: passes when `path` exists.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileExistsOptions {
    pub(crate) path: Templated<String>,
}

/// `all`, `any`, `not`: the guards they combine.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CombinatorOptions {
    pub(crate) guards: NestedGuards,
}

/// `options.guards` of a combinator.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NestedGuards {
    List(Vec<NestedGuard>),
    /// One guard mapping where a list belongs: drawn, but the run refuses it.
    Single(NestedGuard),
    /// Missing, or neither a list nor a mapping.
    Invalid,
}

/// One entry of `guards`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NestedGuard {
    Guard(Box<Guard>),
    /// Not a mapping.
    NotAMapping,
    /// A mapping without a string `kind`.
    NoKind,
}

impl GuardKind {
    /// The built-in kinds, as written.
    pub(crate) const NAMES: [&'static str; 9] = [
        "always",
        "never",
        "action-ok",
        "shell",
        "jq",
        "file-exists",
        "all",
        "any",
        "not",
    ];

    /// The kind as written.
    pub(crate) fn name(&self) -> &str {
        match self {
            GuardKind::Always => "always",
            GuardKind::Never => "never",
            GuardKind::ActionOk => "action-ok",
            GuardKind::Shell(_) => "shell",
            GuardKind::Jq(_) => "jq",
            GuardKind::FileExists(_) => "file-exists",
            GuardKind::All(_) => "all",
            GuardKind::Any(_) => "any",
            GuardKind::Not(_) => "not",
            GuardKind::Plugin(name) => name,
        }
    }

    /// The kind `name` with its options read from `r`.
    pub(crate) fn read(name: &str, r: &mut OptionReader<'_>) -> GuardKind {
        match name {
            "always" => GuardKind::Always,
            "never" => GuardKind::Never,
            "action-ok" => GuardKind::ActionOk,
            "shell" => GuardKind::Shell(ShellGuardOptions {
                command: r.required("command"),
                cwd: r.optional("cwd"),
                timeout_ms: r.optional("timeoutMs"),
            }),
            "jq" => GuardKind::Jq(JqGuardOptions {
                expr: r.required::<String>("expr").written_str().cloned(),
                file: r.optional("file"),
                timeout_ms: r.optional("timeoutMs"),
            }),
            "file-exists" => GuardKind::FileExists(FileExistsOptions {
                path: r.required("path"),
            }),
            "all" => GuardKind::All(CombinatorOptions::read(r)),
            "any" => GuardKind::Any(CombinatorOptions::read(r)),
            "not" => GuardKind::Not(CombinatorOptions::read(r)),
            other => {
                r.free_form();
                GuardKind::Plugin(other.to_owned())
            }
        }
    }
}

impl fmt::Display for GuardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl CombinatorOptions {
    fn read(r: &mut OptionReader<'_>) -> Self {
        let guards = match r.required_value("guards") {
            Some(OptionValue::List(items, _)) => {
                NestedGuards::List(items.iter().map(|item| nested(r, item)).collect())
            }
            // The checker looks into a list only; a run refuses a single mapping.
            Some(single @ OptionValue::Map(_)) => {
                NestedGuards::Single(r.quietly(|r| nested(r, single)))
            }
            _ => NestedGuards::Invalid,
        };
        CombinatorOptions { guards }
    }
}

/// An entry of `guards`: `{kind, options}`, other keys ignored.
fn nested(r: &mut OptionReader<'_>, value: &OptionValue) -> NestedGuard {
    let OptionValue::Map(map) = value else {
        return NestedGuard::NotAMapping;
    };
    let Some(kind) = map.get_str("kind") else {
        return NestedGuard::NoKind;
    };
    let options = match map.get("options") {
        Some(OptionValue::Map(options)) => options.clone(),
        _ => Options {
            entries: Vec::new(),
            span: kind.span,
        },
    };
    NestedGuard::Guard(Box::new(r.guard(kind, options, map.span)))
}

impl Guard {
    /// A guard of kind `kind` with `options`, typed as the loader types it (its findings
    /// dropped): for pipelines built in code.
    pub fn new(kind: Located<String>, options: Options, span: Span) -> Guard {
        let source = SourceFile::new("", "");
        let mut findings = Vec::new();
        let mut r = OptionReader::new(&source, &mut findings, "guard", &kind, &options);
        let typed = GuardKind::read(&kind.value, &mut r);
        let missing_options = r.finish();
        Guard {
            kind: Located::new(typed, kind.span),
            options,
            missing_options,
            span,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_name_reads_as_its_kind_and_others_are_plugins() {
        for name in GuardKind::NAMES {
            let guard = Guard::new(
                Located::new(name.to_owned(), Span::default()),
                Options::default(),
                Span::default(),
            );
            assert_eq!(guard.kind.value.name(), name);
            assert!(!matches!(guard.kind.value, GuardKind::Plugin(_)));
        }
        let plugin = Guard::new(
            Located::new("ci-green".to_owned(), Span::default()),
            Options::default(),
            Span::default(),
        );
        assert_eq!(plugin.kind.value, GuardKind::Plugin("ci-green".into()));
    }
}
