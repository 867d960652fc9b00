//! The `verify:` section of `.spur/config.yaml`, parsed with a span for every value a
//! diagnostic may point at, checked (names, commands, needs form a DAG) and returned with
//! its gates in topological order. Other top-level keys belong to other readers (the runner
//! reads `agents:`) and are ignored here.

use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_saphyr::{Location, Spanned};

use super::config_error::{ConfigProblems, VerifyConfigErrors};
use super::gate::{Gate, GateCommand, GateSeverity, DEFAULT_TIMEOUT};
use super::plan;
use super::standard_gates::{standard_gate, STANDARD_GATES};
use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::source::{SourceFile, Span};
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};

/// A checked verify configuration: gate names are valid path segments, every `needs`
/// names a configured gate, and `gates` is in a topological order of `needs` (ties keep
/// the standard order, then the order of the file).
#[derive(Debug, Clone)]
pub struct VerifyConfig {
    pub path: PathBuf,
    pub gates: Vec<Gate>,
    /// Standard gates the file does not mention: reported as SKIP (not configured).
    pub unconfigured: Vec<&'static str>,
    /// `verify.parallelism`: how many read-only gates may run at once (default: cores).
    pub parallelism: Option<NonZeroUsize>,
}

impl VerifyConfig {
    /// Read `<state dir>/config.yaml`; a missing file is an empty configuration.
    pub fn load(state_dir: &StateDir) -> Result<Self, VerifyConfigErrors> {
        let path = state_dir.config_path();
        match read_string(&path, MAX_CONFIG_BYTES) {
            Ok(text) => Self::parse(&path, &text),
            Err(e) if e.is_missing() => Ok(Self::empty(path)),
            Err(e) => Err(VerifyConfigErrors::Unreadable {
                path,
                source: e.into(),
            }),
        }
    }

    pub fn empty(path: PathBuf) -> Self {
        Self {
            path,
            gates: Vec::new(),
            unconfigured: STANDARD_GATES.iter().map(|g| g.name).collect(),
            parallelism: None,
        }
    }

    /// Parse and check the text of a config file.
    pub fn parse(path: &Path, text: &str) -> Result<Self, VerifyConfigErrors> {
        let source = SourceFile::new(path, text);
        let problems = ConfigProblems { source: &source };
        let fail = |errors: Vec<Diagnostic>| VerifyConfigErrors::Invalid {
            path: path.to_path_buf(),
            errors,
        };
        if text.trim().is_empty() {
            return Ok(Self::empty(path.to_path_buf()));
        }
        let raw: RawFile = serde_saphyr::from_str(text).map_err(|e| {
            fail(vec![
                problems.yaml(yaml_message(&e), e.location().map(|l| span_of(&l)))
            ])
        })?;
        let Some(verify) = raw.verify else {
            return Ok(Self::empty(path.to_path_buf()));
        };
        let mut errors = Vec::new();
        let parallelism = match verify.parallelism {
            None => None,
            Some(n) => {
                let value = usize::try_from(n.value).ok().and_then(NonZeroUsize::new);
                if value.is_none() {
                    errors.push(problems.zero(
                        "parallelism",
                        "parallelism is how many read-only gates may run at once; leave it out to use the number of cores",
                        span_of(&n.referenced),
                    ));
                }
                value
            }
        };

        let entries = verify.gates.map(|g| g.0).unwrap_or_default();
        let named: Vec<&str> = entries.iter().map(|(k, _)| k.value.as_str()).collect();
        let mut gates = Vec::new();
        for (name, raw_gate) in &entries {
            if let Some(gate) = convert_gate(name, raw_gate.as_ref(), &named, problems, &mut errors)
            {
                gates.push(gate);
            }
        }
        // Standard gates first (in their order), then the user's in file order: the tie
        // break of the topological sort, and the order of the report.
        gates.sort_by_key(|g| {
            STANDARD_GATES
                .iter()
                .position(|s| s.name == g.name)
                .unwrap_or(STANDARD_GATES.len())
        });
        // Cycles among the gates that are otherwise fine are reported with the rest.
        let gates = match plan::topological_order(gates, &source) {
            Ok(gates) if errors.is_empty() => gates,
            Ok(_) => return Err(fail(errors)),
            Err(cycles) => {
                errors.extend(cycles);
                return Err(fail(errors));
            }
        };
        let unconfigured = STANDARD_GATES
            .iter()
            .map(|g| g.name)
            .filter(|n| !named.contains(n))
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            gates,
            unconfigured,
            parallelism,
        })
    }

    pub fn gate(&self, name: &str) -> Option<&Gate> {
        self.gates.iter().find(|g| g.name == name)
    }

    /// Every gate name the config knows (configured or standard), for "did you mean".
    pub fn known_names(&self) -> impl Iterator<Item = &str> {
        self.gates
            .iter()
            .map(|g| g.name.as_str())
            .chain(self.unconfigured.iter().copied())
    }
}

fn convert_gate(
    name: &Spanned<String>,
    raw: Option<&RawGate>,
    configured: &[&str],
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<Gate> {
    let before = errors.len();
    let name_span = span_of(&name.referenced);
    if crate::wbs::Wbs::parse(&name.value).is_err() {
        errors.push(problems.invalid_gate_name(&name.value, name_span));
    }
    let empty = RawGate::default();
    let raw = raw.unwrap_or(&empty);
    let standard = standard_gate(&name.value);

    let command = match (&raw.command, &raw.executable) {
        (Some(c), Some(e)) => {
            errors.push(problems.command_conflict(
                &name.value,
                span_of(&c.referenced),
                span_of(&e.referenced),
            ));
            None
        }
        (Some(c), None) => {
            if let Some(args) = &raw.args {
                errors
                    .push(problems.args_without_executable(&name.value, span_of(&args.referenced)));
            }
            non_empty(c, "command", &name.value, problems, errors).map(GateCommand::Shell)
        }
        (None, Some(e)) => {
            non_empty(e, "executable", &name.value, problems, errors).map(|exe| GateCommand::Exec {
                executable: exe,
                args: raw
                    .args
                    .as_ref()
                    .map(|a| a.value.clone())
                    .unwrap_or_default(),
            })
        }
        (None, None) => {
            if let Some(args) = &raw.args {
                errors
                    .push(problems.args_without_executable(&name.value, span_of(&args.referenced)));
            }
            Some(GateCommand::Exec {
                executable: format!("spur-gate-{}", name.value),
                args: Vec::new(),
            })
        }
    };

    let (needs, needs_span): (Vec<(String, Span)>, Span) = match &raw.needs {
        Some(needs) => (
            needs
                .value
                .iter()
                .map(|n| (n.value.clone(), span_of(&n.referenced)))
                .collect(),
            span_of(&needs.referenced),
        ),
        // A standard gate waits for the standard gates before it that are configured.
        None => (
            standard
                .map(|s| {
                    s.needs
                        .iter()
                        .filter(|n| configured.contains(n))
                        .map(|n| ((*n).to_owned(), name_span))
                        .collect()
                })
                .unwrap_or_default(),
            name_span,
        ),
    };
    for (need, span) in &needs {
        if !configured.contains(&need.as_str()) {
            let help = did_you_mean(need, configured.iter().copied())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("configured gates: {}", configured.join(", ")));
            errors.push(problems.unknown_need(&name.value, need, help, *span));
        }
    }

    let timeout = match &raw.timeout_ms {
        None => DEFAULT_TIMEOUT,
        Some(t) if t.value == 0 => {
            errors.push(problems.zero(
                "timeoutMs",
                "timeoutMs is how long the gate may run, in milliseconds (default 600000)",
                span_of(&t.referenced),
            ));
            DEFAULT_TIMEOUT
        }
        Some(t) => Duration::from_millis(t.value),
    };

    let severity = match &raw.severity {
        None => GateSeverity::Blocker,
        Some(s) => GateSeverity::parse(&s.value).unwrap_or_else(|| {
            let names = GateSeverity::ALL.map(GateSeverity::as_str);
            let help = did_you_mean(&s.value, names.iter().copied())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("use one of: {}", names.join(", ")));
            errors.push(problems.invalid_severity(
                &name.value,
                &s.value,
                help,
                span_of(&s.referenced),
            ));
            GateSeverity::Blocker
        }),
    };

    let expect_file = project_path(
        raw.expect_file.as_ref(),
        "expectFile",
        &name.value,
        problems,
        errors,
    );
    let findings_file = project_path(
        raw.findings_file.as_ref(),
        "findingsFile",
        &name.value,
        problems,
        errors,
    );

    if errors.len() > before {
        return None;
    }
    Some(Gate {
        name: name.value.clone(),
        command: command?,
        needs: needs.into_iter().map(|(n, _)| n).collect(),
        timeout,
        read_only: raw
            .read_only
            .unwrap_or_else(|| standard.is_some_and(|s| s.read_only)),
        severity,
        enabled: raw.enabled.unwrap_or(true),
        expect_file,
        findings_file,
        span: name_span,
        needs_span,
    })
}

fn non_empty(
    value: &Spanned<String>,
    field: &'static str,
    gate: &str,
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<String> {
    if value.value.trim().is_empty() {
        errors.push(problems.empty_command(gate, field, span_of(&value.referenced)));
        None
    } else {
        Some(value.value.clone())
    }
}

/// A path relative to the project root that cannot leave it.
fn project_path(
    value: Option<&Spanned<String>>,
    field: &'static str,
    gate: &str,
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    let value = value?;
    let path = PathBuf::from(&value.value);
    let inside = !value.value.is_empty()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if inside {
        Some(path)
    } else {
        errors.push(problems.path_outside_project(gate, field, span_of(&value.referenced)));
        None
    }
}

/// The byte span of a YAML node (character offsets when bytes are unknown).
pub(crate) fn span_of(location: &Location) -> Span {
    let span = location.span();
    let offset = span.byte_offset().unwrap_or_else(|| span.offset());
    let len = span.byte_len().unwrap_or_else(|| span.len());
    Span::new(
        usize::try_from(offset).unwrap_or(0),
        usize::try_from(len).unwrap_or(0),
    )
}

/// serde-saphyr's message without its own rendered snippet (miette renders ours).
fn yaml_message(error: &serde_saphyr::Error) -> String {
    let text = error.without_snippet().to_string();
    text.lines().next().unwrap_or("").trim().to_owned()
}

#[derive(Deserialize)]
struct RawFile {
    #[serde(default)]
    verify: Option<RawVerify>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawVerify {
    #[serde(default)]
    gates: Option<OrderedMap<Spanned<String>, Option<RawGate>>>,
    #[serde(default)]
    parallelism: Option<Spanned<u64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawGate {
    command: Option<Spanned<String>>,
    executable: Option<Spanned<String>>,
    args: Option<Spanned<Vec<String>>>,
    needs: Option<Spanned<Vec<Spanned<String>>>>,
    timeout_ms: Option<Spanned<u64>>,
    read_only: Option<bool>,
    severity: Option<Spanned<String>>,
    enabled: Option<bool>,
    expect_file: Option<Spanned<String>>,
    findings_file: Option<Spanned<String>>,
}

/// A YAML mapping that keeps the order of the file (duplicate keys are already rejected
/// by serde-saphyr).
struct OrderedMap<K, V>(Vec<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<K, V> {
            type Value = OrderedMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of gate name to gate")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(OrderedMap(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    fn parse(text: &str) -> Result<VerifyConfig, VerifyConfigErrors> {
        VerifyConfig::parse(Path::new(".spur/config.yaml"), text)
    }

    fn codes(text: &str) -> Vec<Code> {
        parse(text)
            .unwrap_err()
            .diagnostics()
            .iter()
            .map(|d| d.code)
            .collect()
    }

    #[test]
    fn standard_gates_enabled_by_name_get_their_defaults() {
        let config = parse(
            "agents: {claude: x}\nverify:\n  gates:\n    spec:\n    build: {command: make}\n    tests: {command: make test}\n    wiring:\n",
        )
        .unwrap();
        let names: Vec<_> = config.gates.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["build", "tests", "wiring", "spec"]);
        let tests = config.gate("tests").unwrap();
        assert_eq!(tests.needs, ["build"]);
        assert!(!tests.read_only);
        let wiring = config.gate("wiring").unwrap();
        assert_eq!(wiring.needs, ["tests"]);
        assert!(wiring.read_only);
        assert_eq!(
            wiring.command,
            GateCommand::Exec {
                executable: "spur-gate-wiring".into(),
                args: vec![]
            }
        );
        // spec's standard need (semantic) is not configured, so it is dropped.
        assert!(config.gate("spec").unwrap().needs.is_empty());
        assert_eq!(config.unconfigured, ["security", "semantic"]);
        assert_eq!(tests.severity, GateSeverity::Blocker);
        assert_eq!(tests.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn user_gates_keep_file_order_after_standard_ones() {
        let config = parse(
            "verify:\n  gates:\n    zeta: {command: a}\n    alpha: {command: b, needs: [zeta]}\n    build: {command: c}\n",
        )
        .unwrap();
        let names: Vec<_> = config.gates.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["build", "zeta", "alpha"]);
    }

    #[test]
    fn reads_every_gate_field() {
        let config = parse(
            "verify:\n  parallelism: 3\n  gates:\n    lint:\n      executable: cargo\n      args: [clippy, --all]\n      timeoutMs: 1500\n      readOnly: true\n      severity: Major\n      enabled: false\n      expectFile: out/lint.txt\n      findingsFile: out/lint.jsonl\n",
        )
        .unwrap();
        let lint = config.gate("lint").unwrap();
        assert_eq!(lint.command.display(), "cargo clippy --all");
        assert_eq!(lint.timeout, Duration::from_millis(1500));
        assert!(lint.read_only && !lint.enabled);
        assert_eq!(lint.severity, GateSeverity::Major);
        assert_eq!(lint.expect_file.as_deref(), Some(Path::new("out/lint.txt")));
        assert_eq!(
            lint.findings_file.as_deref(),
            Some(Path::new("out/lint.jsonl"))
        );
        assert_eq!(config.parallelism, NonZeroUsize::new(3));
    }

    #[test]
    fn a_file_without_verify_has_no_gates() {
        for text in ["", "agents:\n  a: b\n", "verify:\n"] {
            let config = parse(text).unwrap();
            assert!(config.gates.is_empty(), "{text:?}");
            assert_eq!(config.unconfigured.len(), 6);
        }
    }

    #[test]
    fn reports_unknown_needs_with_a_suggestion_and_span() {
        let text =
            "verify:\n  gates:\n    build: {command: a}\n    lint: {command: b, needs: [biuld]}\n";
        let err = parse(text).unwrap_err();
        let [d] = err.diagnostics() else {
            panic!("{err:?}");
        };
        assert_eq!(d.code, Code::VerifyUnknownNeed);
        assert_eq!(d.help.as_deref(), Some("did you mean `build`?"));
        let span = d.primary.span;
        assert_eq!(&text[span.offset..span.end()], "biuld");
    }

    #[test]
    fn reports_each_bad_field() {
        assert_eq!(
            codes("verify:\n  gates:\n    a: {command: x, executable: y}\n    b: {command: ' '}\n    c: {args: [x]}\n    d: {severity: blocking}\n    e: {timeoutMs: 0}\n    ../x: {command: y}\n    f: {expectFile: ../out}\n    g: {findingsFile: /etc/passwd}\n"),
            [
                Code::VerifyCommandConflict,
                Code::VerifyEmptyCommand,
                Code::VerifyArgsWithoutExecutable,
                Code::VerifyInvalidSeverity,
                Code::VerifyZero,
                Code::VerifyInvalidGateName,
                Code::VerifyPathOutsideProject,
                Code::VerifyPathOutsideProject,
            ]
        );
        assert_eq!(
            codes("verify:\n  gates:\n    a: {comand: x}\n"),
            [Code::VerifyYaml]
        );
        assert_eq!(codes("verify:\n  parallelism: 0\n"), [Code::VerifyZero]);
    }

    #[test]
    fn a_fifo_at_the_config_path_is_unreadable_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let made = std::process::Command::new("mkfifo")
            .arg(state.config_path())
            .status()
            .unwrap();
        assert!(made.success());
        let err = VerifyConfig::load(&state).unwrap_err();
        assert!(matches!(err, VerifyConfigErrors::Unreadable { .. }));
        assert!(err.to_string().contains("it is a FIFO"), "{err}");
        std::fs::remove_file(state.config_path()).unwrap();
        assert!(VerifyConfig::load(&state).unwrap().gates.is_empty());
    }
}
