//! The loader: pipeline text → typed [`Pipeline`], in one pass over the YAML
//! node tree. Hostile input ends in one [`LoadFailure`]; findings that still let a model be
//! built (unknown keys, wrong types, duplicate keys…) are collected, all at once, as
//! diagnostics in [`Loaded`].

pub(crate) mod option_reader;
mod options;
mod scalars;
mod state;
mod transition;
mod transition_flow;
mod vars;

use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::load_failure::LoadFailure;
use crate::pipeline::model::*;
use crate::pipeline::yaml_error::parse_document;
use crate::source::{Located, SourceFile, Span};
use crate::yaml::{Codes, Fields, Loader, Node, NodeValue};

use scalars::IterationBound;

/// The codes of the pipeline's generic findings.
const CODES: Codes = Codes {
    wrong_type: Code::CheckWrongType,
    missing_key: Code::CheckMissingKey,
    unknown_key: Code::CheckUnknownKey,
    duplicate_key: Code::CheckDuplicateKey,
};

/// Top-level keys the loader accepts (kept in sync with `schema.json` by a test).
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "kind",
    "name",
    "version",
    "description",
    "initialState",
    "terminalStates",
    "failureStates",
    "iterationBound",
    "defaultOnError",
    "vars",
    "env",
    "secrets",
    "states",
    "transitions",
];
pub(crate) const STATE_KEYS: &[&str] = &["id", "description", "pause", "onEnter", "onExit"];
pub(crate) const TRANSITION_KEYS: &[&str] = &[
    "from",
    "to",
    "description",
    "trigger",
    "guard",
    "terminalReason",
];
pub(crate) const ACTION_KEYS: &[&str] = &["kind", "options", "onError"];
pub(crate) const GUARD_KEYS: &[&str] = &["kind", "options"];
pub(crate) const ENV_KEYS: &[&str] = &["allow"];

/// A pipeline that was built, with the findings made while building it. The findings may
/// include errors (e.g. an unknown key): a pipeline is runnable only once checked.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The pipeline as written.
    pub pipeline: Pipeline,
    /// Every finding of the loader (warnings, and errors the checker will refuse).
    pub diagnostics: Vec<Diagnostic>,
}

/// Load a pipeline from its source text.
pub fn load(source: &SourceFile) -> Result<Loaded, LoadFailure> {
    let root = parse_document(source)?;
    let mut cx = Loader::new(source, CODES);
    let pipeline = cx.pipeline(&root)?;
    Ok(Loaded {
        pipeline,
        diagnostics: cx.diagnostics,
    })
}

impl Loader<'_> {
    fn pipeline(&mut self, root: &Node) -> Result<Pipeline, LoadFailure> {
        let dialect = self.dialect(root);
        let keys = match dialect {
            Dialect::StateMachine => TOP_LEVEL_KEYS,
            Dialect::TransitionFlow => transition_flow::TOP_LEVEL_KEYS,
        };
        let Some(top) = self.fields(root, "the pipeline", keys) else {
            return Err(LoadFailure::invalid(Diagnostic::error(
                Code::LoadNotAMapping,
                self.source,
                root.span,
                "a pipeline must be a YAML mapping",
            )));
        };
        self.kind(&top);
        let name = self.name(&top);
        let version = top.get("version").and_then(|node| match &node.value {
            // `version: 1` and `version: 1.0` are common; keep their text.
            NodeValue::Number(_) => self
                .source
                .text()
                .get(node.span.offset..node.span.end())
                .map(|t| Located::new(t.to_owned(), node.span)),
            NodeValue::Null => None,
            _ => self.read(node, "`version`"),
        });
        let description = self.field(&top, "description", "the pipeline").flatten();
        let iteration_bound = top
            .get("iterationBound")
            .and_then(|n| self.read::<Located<IterationBound>>(n, "`iterationBound`"))
            .map_or(
                Located::new(DEFAULT_ITERATION_BOUND, Span::default()),
                |b| Located::new(b.value.0, b.span),
            );
        let default_on_error = top
            .get("defaultOnError")
            .and_then(|node| self.read(node, "`defaultOnError`"))
            .unwrap_or_else(|| Located::new(OnError::Fail, Span::default()));
        let vars = top
            .get("vars")
            .and_then(|n| self.read::<vars::Vars>(n, "`vars`"))
            .map(|v| v.0)
            .unwrap_or_default();
        let env_allow = top
            .get("env")
            .and_then(|n| self.read::<vars::Env>(n, "`env`"))
            .map(|e| e.0)
            .unwrap_or_default();
        let secrets = top
            .get("secrets")
            .and_then(|n| self.read::<vars::Secrets>(n, "`secrets`"))
            .map(|s| s.0)
            .unwrap_or_default();
        vars::check_secrets(self, &secrets, &vars, &env_allow);
        let graph = match dialect {
            Dialect::StateMachine => self.states_and_transitions(&top),
            Dialect::TransitionFlow => self.nodes_and_edges(&top),
        };
        Ok(Pipeline {
            source: self.source.clone(),
            dialect,
            name,
            version,
            description,
            initial_state: graph.initial_state,
            terminal_states: graph.terminal_states,
            failure_states: graph.failure_states,
            iteration_bound,
            default_on_error,
            vars,
            env_allow,
            secrets,
            states: graph.states,
            transitions: graph.transitions,
        })
    }

    /// The state-machine dialect's graph: `initialState`, `terminalStates`,
    /// `failureStates`, `states`, `transitions`.
    fn states_and_transitions(&mut self, top: &Fields<'_>) -> Graph {
        let initial_state = self.state_ref_or_empty(top, "initialState", "the pipeline");
        let terminal_states = self.state_list(top, "terminalStates");
        let failure_states = self.state_list(top, "failureStates");
        let states = match top.get("states") {
            Some(node) => self.read(node, "`states`").unwrap_or_default(),
            None => {
                self.missing(top, "states", "the pipeline");
                Vec::new()
            }
        };
        let transitions = match top.get("transitions") {
            Some(node) => self
                .items(node, "`transitions`", "a list", |cx, item, i| {
                    cx.transition(item, i)
                })
                .unwrap_or_default(),
            None => {
                self.missing(top, "transitions", "the pipeline");
                Vec::new()
            }
        };
        Graph {
            initial_state,
            terminal_states,
            failure_states,
            states,
            transitions,
        }
    }

    /// A list of state references (`terminalStates`, `terminalNodes`…); empty when absent.
    fn state_list(&mut self, top: &Fields<'_>, key: &str) -> Vec<Located<String>> {
        top.get(key)
            .and_then(|n| self.read::<Vec<scalars::StateRef>>(n, &format!("`{key}`")))
            .map(|refs| refs.into_iter().map(|r| r.0).collect())
            .unwrap_or_default()
    }

    /// `name`: required and not blank; a placeholder when missing or invalid.
    fn name(&mut self, top: &Fields<'_>) -> Located<String> {
        let name = self
            .required(top, "name", "the pipeline")
            .unwrap_or_else(|| Located::new(String::new(), top.anchor()));
        if let Some(node) = top.get("name") {
            if matches!(&node.value, NodeValue::String(s) if s.trim().is_empty()) {
                let d = Diagnostic::error(
                    Code::CheckWrongType,
                    self.source,
                    node.pointed(),
                    "`name` must not be empty",
                )
                .label("empty name");
                self.push(d);
            }
        }
        name
    }

    /// The dialect `kind:` names; an unknown or mistyped kind reads as the default
    /// (reported by [`Loader::kind`]).
    fn dialect(&self, root: &Node) -> Dialect {
        let NodeValue::Map(entries) = &root.value else {
            return Dialect::StateMachine;
        };
        let kind = entries
            .iter()
            .find(|(k, _)| matches!(&k.value, NodeValue::String(s) if s == "kind"));
        match kind {
            Some((_, v)) if matches!(&v.value, NodeValue::String(s) if s == "transition-flow") => {
                Dialect::TransitionFlow
            }
            _ => Dialect::StateMachine,
        }
    }

    /// The pipeline `kind`: `state-machine` (the default) or `transition-flow`; another
    /// is an error with did-you-mean.
    fn kind(&mut self, top: &Fields<'_>) {
        const KINDS: [&str; 2] = [
            Dialect::StateMachine.as_str(),
            Dialect::TransitionFlow.as_str(),
        ];
        let Some(node) = top.get("kind") else {
            return;
        };
        match &node.value {
            NodeValue::String(s) if KINDS.contains(&s.as_str()) => {}
            NodeValue::String(s) => {
                let d = Diagnostic::error(
                    Code::CheckUnknownKind,
                    self.source,
                    node.span,
                    format!("unknown pipeline kind `{s}`"),
                )
                .label("unknown kind")
                .help(match did_you_mean(s, KINDS) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => {
                        "the kinds are `state-machine` (the default) and `transition-flow`".into()
                    }
                });
                self.push(d);
            }
            _ => self.wrong_type(node, "`kind`", "a string"),
        }
    }
}

/// The graph part of a pipeline, as either dialect writes it.
struct Graph {
    initial_state: Located<String>,
    terminal_states: Vec<Located<String>>,
    failure_states: Vec<Located<String>>,
    states: Vec<State>,
    transitions: Vec<Transition>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{ActionKind, GuardKind};

    fn codes(text: &str) -> Vec<Code> {
        let loaded = load(&SourceFile::new("p.yaml", text.to_owned())).unwrap();
        loaded.diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn reports_every_structural_problem_at_once() {
        let text = "name: p\ninitialState: a\nstates:\n  - id: a\n    pause: \"yes\"\n  - description: no id\ntransitions:\n  - from: a\n";
        assert_eq!(
            codes(text),
            [
                Code::CheckWrongType,
                Code::CheckMissingKey,
                Code::CheckMissingKey
            ]
        );
    }

    #[test]
    fn reads_every_key_of_the_dialect() {
        let text = "kind: state-machine\nname: p\nversion: 1.0\ndescription: d\ninitialState: a\nterminalStates: [b]\nfailureStates: []\niterationBound: 7\ndefaultOnError: continue\nvars: {x: \"1\"}\nenv: {allow: [HOME]}\nstates:\n  - id: a\n    pause: true\n    onExit: [{kind: note, options: {message: m}, onError: fail}]\n  - id: b\ntransitions:\n  - {from: a, to: b, trigger: go, description: t, terminalReason: done, guard: {kind: always}}\n";
        let loaded = load(&SourceFile::new("p.yaml", text)).unwrap();
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        let p = loaded.pipeline;
        assert_eq!(p.version.unwrap().value, "1.0");
        assert_eq!(p.iteration_bound.value, 7);
        assert_eq!(p.default_on_error.value, OnError::Continue);
        assert_eq!(p.env_allow[0].value, "HOME");
        assert!(p.states[0].pause);
        assert_eq!(
            p.states[0].on_exit[0].on_error.as_ref().unwrap().value,
            OnError::Fail
        );
        let t = &p.transitions[0];
        assert_eq!(
            t.terminal_reason.as_ref().unwrap().value,
            TerminalReason::Done
        );
        assert_eq!(t.trigger.as_ref().unwrap().value, "go");
        assert_eq!(t.guard.as_ref().unwrap().kind.value, GuardKind::Always);
    }

    fn with_actions(actions: &str) -> Loaded {
        let text = format!(
            "name: p\ninitialState: a\nstates:\n  - id: a\n    onEnter:\n{actions}transitions: []\n"
        );
        load(&SourceFile::new("p.yaml", text)).unwrap()
    }

    #[test]
    fn every_built_in_action_kind_reads_with_its_options_typed() {
        let actions: String = ActionKind::NAMES
            .iter()
            .map(|k| format!("      - {{kind: {k}}}\n"))
            .collect();
        let loaded = with_actions(&actions);
        let kinds: Vec<&str> = loaded.pipeline.states[0]
            .on_enter
            .iter()
            .map(|a| a.kind.value.name())
            .collect();
        assert_eq!(kinds, ActionKind::NAMES);
        assert!(!loaded.pipeline.states[0]
            .on_enter
            .iter()
            .any(|a| matches!(a.kind.value, ActionKind::Plugin(_))));
        let plugin = with_actions("      - {kind: notify.slack, options: {channel: c}}\n");
        assert!(plugin.diagnostics.is_empty());
        assert_eq!(
            plugin.pipeline.states[0].on_enter[0].kind.value,
            ActionKind::Plugin("notify.slack".into())
        );
    }

    #[test]
    fn a_missing_required_option_is_recorded_and_an_unknown_one_a_warning() {
        let loaded = with_actions(
            "      - {kind: json.update, options: {pth: x}}\n      - {kind: agent.run, options: {agent: a, capture: true, mode: m}}\n",
        );
        let actions = &loaded.pipeline.states[0].on_enter;
        assert_eq!(actions[0].missing_options, ["path", "expr"]);
        let found: Vec<(Code, &str)> = loaded
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [(
                Code::CheckUnknownOption,
                "unknown option `pth` of action `json.update`"
            )]
        );
        assert_eq!(
            loaded.diagnostics[0].help.as_deref(),
            Some("did you mean `path`?")
        );
        assert!(!loaded.diagnostics[0].is_error());
        let checked = crate::pipeline::check(&loaded.pipeline);
        let missing: Vec<&str> = checked
            .iter()
            .filter(|d| d.code == Code::CheckMissingOption)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            missing,
            [
                "action `json.update` needs the option `path`",
                "action `json.update` needs the option `expr`"
            ]
        );
    }

    #[test]
    fn options_are_typed_as_written_and_templates_kept_for_the_run() {
        let loaded = with_actions(
            "      - {kind: shell, options: {command: 'echo ${vars.x}', timeoutMs: '${vars.t}', retries: 2}}\n",
        );
        let ActionKind::Shell(shell) = &loaded.pipeline.states[0].on_enter[0].kind.value else {
            panic!("not a shell action")
        };
        assert_eq!(shell.command.written_str().unwrap().value, "echo ${vars.x}");
        assert_eq!(shell.timeout_ms.as_ref().unwrap().key(), "timeoutMs");
        let warning = &loaded.diagnostics[0];
        assert_eq!(warning.code, Code::CheckUnknownOption);
        assert_eq!(
            warning.help.as_deref(),
            Some("options of `shell`: `command`, `cwd`, `timeoutMs`, `env`")
        );
    }
}
