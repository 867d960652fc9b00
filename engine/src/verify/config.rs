//! The `verify:` and `doneGate:` sections of `.spur/config.yaml`, parsed with a span for
//! every value a diagnostic may point at, checked (names, commands, needs form a DAG) and
//! returned with the gates in topological order. Other top-level keys belong to other
//! readers (the runner reads `agents:`) and are ignored here.

mod certificates;
mod done_gate;
mod gate_rules;
mod raw;

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use super::config_error::{ConfigProblems, VerifyConfigErrors, CODES};
use super::gate::Gate;
use super::plan;
use super::standard_gates::STANDARD_GATES;
use crate::diagnostic::Diagnostic;
use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Loader};

pub(crate) use certificates::CertificatesConfig;
pub(crate) use done_gate::{DoneGateConfig, ExternalVerdicts};

use gate_rules::check_gate;
use raw::RawVerify;

/// A checked verify configuration: gate names are valid path segments, every `needs`
/// names a configured gate, and `gates` is in a topological order of `needs` (ties keep
/// the standard order, then the order of the file).
#[derive(Debug, Clone)]
pub(crate) struct VerifyConfig {
    /// The file it was read from (or would be: a missing file is an empty configuration).
    pub(crate) path: PathBuf,
    /// The configured gates, in the order they may run.
    pub(crate) gates: Vec<Gate>,
    /// Standard gates the file does not mention: reported as SKIP (not configured).
    pub(crate) unconfigured: Vec<&'static str>,
    /// `verify.parallelism`: how many read-only gates may run at once (default: cores).
    pub(crate) parallelism: Option<NonZeroUsize>,
    /// `doneGate:`: how the done gate treats what it reads.
    pub(crate) done_gate: DoneGateConfig,
    /// What the file holds that spur ignores (an unknown key under `doneGate`, with
    /// did-you-mean).
    pub(crate) warnings: Vec<Diagnostic>,
}

impl VerifyConfig {
    /// Read `<state dir>/config.yaml`; a missing file is an empty configuration.
    pub(crate) fn load(state_dir: &StateDir) -> Result<Self, VerifyConfigErrors> {
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

    /// The configuration of a project that configures no gate.
    pub(crate) fn empty(path: PathBuf) -> Self {
        Self {
            path,
            gates: Vec::new(),
            unconfigured: STANDARD_GATES.iter().map(|g| g.name).collect(),
            parallelism: None,
            done_gate: DoneGateConfig::default(),
            warnings: Vec::new(),
        }
    }

    /// Parse and check the text of a config file: every finding at once.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, VerifyConfigErrors> {
        let source = SourceFile::new(path, text);
        let problems = ConfigProblems { source: &source };
        let fail = |errors: Vec<Diagnostic>| VerifyConfigErrors::Invalid {
            path: path.to_path_buf(),
            errors,
        };
        let root = match parse_config(text) {
            Ok(Some(root)) => root,
            Ok(None) => return Ok(Self::empty(path.to_path_buf())),
            Err(e) => return Err(fail(vec![problems.parse_error(&e)])),
        };
        let mut cx = Loader::new(&source, CODES);
        let section = RawVerify::read(&mut cx, &root);
        let mut gate_cx = Loader::new(&source, done_gate::CODES);
        let done_gate = done_gate::read(&mut gate_cx, &root);
        let (mut errors, warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = cx
            .diagnostics
            .into_iter()
            .map(|d| problems.typed(d))
            .chain(gate_cx.diagnostics)
            .partition(Diagnostic::is_error);
        let Some(section) = section else {
            return if errors.is_empty() {
                Ok(Self {
                    done_gate,
                    warnings,
                    ..Self::empty(path.to_path_buf())
                })
            } else {
                Err(fail(errors))
            };
        };

        let parallelism = section.parallelism.and_then(|n| {
            let value = usize::try_from(n.value).ok().and_then(NonZeroUsize::new);
            if value.is_none() {
                errors.push(problems.zero(
                    "parallelism",
                    "parallelism is how many read-only gates may run at once; leave it out to use the number of cores",
                    n.span,
                ));
            }
            value
        });

        let named: Vec<&str> = section
            .gates
            .iter()
            .map(|(k, _)| k.value.as_str())
            .collect();
        let mut gates = Vec::new();
        for (name, raw) in &section.gates {
            // A gate whose fields did not read is already reported; checking what did
            // read would only guess.
            let Some(raw) = raw else { continue };
            if let Some(gate) = check_gate(name, raw, &named, problems, &mut errors) {
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
            done_gate,
            warnings,
        })
    }

    /// The configured gate named `name`.
    pub(crate) fn gate(&self, name: &str) -> Option<&Gate> {
        self.gates.iter().find(|g| g.name == name)
    }

    /// Every gate name the config knows (configured or standard), for "did you mean".
    pub(crate) fn known_names(&self) -> impl Iterator<Item = &str> {
        self.gates
            .iter()
            .map(|g| g.name.as_str())
            .chain(self.unconfigured.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::diagnostic::Code;
    use crate::source::Span;
    use crate::verify::gate::{GateCommand, GateSeverity, DEFAULT_TIMEOUT};

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
    fn yaml_findings_come_all_at_once_in_the_loader_wording() {
        let text = "verify:\n  gates:\n    a: {comand: x, timeoutMs: abc}\n    b: {command: ' '}\n    a: {command: y}\n";
        let err = parse(text).unwrap_err();
        let found: Vec<(Code, &str)> = err
            .diagnostics()
            .iter()
            .map(|d| (d.code, d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (Code::VerifyYaml, "unknown key `comand` in gate `a`"),
                (
                    Code::VerifyYaml,
                    "`timeoutMs` of gate `a` must be a whole number of 0 or more, not \"abc\""
                ),
                (Code::VerifyYaml, "duplicate key `a` in `verify.gates`"),
                (Code::VerifyEmptyCommand, "gate `b` has an empty command"),
            ]
        );
        let [unknown, _, duplicate, _] = err.diagnostics() else {
            panic!("{err:?}")
        };
        assert_eq!(unknown.help.as_deref(), Some("did you mean `command`?"));
        assert_eq!(duplicate.secondary[0].span, Span::new(21, 1));
    }

    #[test]
    fn scalars_read_as_they_always_did_and_merge_keys_apply() {
        let config = parse(
            "defaults: &d {timeoutMs: 60_000, readOnly: yes}\nverify:\n  gates:\n    lint: {<<: *d, executable: cargo, args: [clippy, --jobs, 4]}\n",
        )
        .unwrap();
        let lint = config.gate("lint").unwrap();
        assert_eq!(lint.timeout, Duration::from_millis(60_000));
        assert!(lint.read_only);
        assert_eq!(lint.command.display(), "cargo clippy --jobs 4");
    }

    #[test]
    fn only_verify_is_checked_and_hostile_yaml_is_refused() {
        // Other sections belong to other readers, repeated keys included.
        let other = "agents: {a: {command: x}, a: {command: y}}\nverify:\n  gates:\n    build: {command: make}\n";
        assert_eq!(parse(other).unwrap().gates.len(), 1);
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, next) in ["a", "b", "c", "d", "e", "f", "g"]
            .windows(2)
            .map(|w| (w[0], w[1]))
        {
            let refs = vec![format!("*{prev}"); 10].join(", ");
            bomb.push_str(&format!("{next}: &{next} [{refs}]\n"));
        }
        let err = parse(&bomb).unwrap_err();
        let [d] = err.diagnostics() else {
            panic!("{err:?}")
        };
        assert_eq!(d.code, Code::VerifyYaml);
        assert!(d.message.contains("alias bomb"), "{}", d.message);
    }

    #[test]
    fn a_block_list_is_pointed_at_its_first_dash() {
        let text = "verify:\n  gates:\n    a:\n      command: x\n      args:\n        - y\n";
        let err = parse(text).unwrap_err();
        let [d] = err.diagnostics() else {
            panic!("{err:?}")
        };
        assert_eq!(d.code, Code::VerifyArgsWithoutExecutable);
        assert_eq!(d.primary.span, Span::new(text.find('-').unwrap(), 0));
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
