//! The typed pipeline model. Every value that a diagnostic may point at keeps its span in
//! the source file. Built by the loader; read by the checker, the graph and the runner.

use crate::pipeline::action_kind::ActionKind;
use crate::pipeline::guard_kind::GuardKind;
use crate::source::{Located, SourceFile, Span};

/// The default `iterationBound` when a pipeline declares none.
pub const DEFAULT_ITERATION_BOUND: u32 = 50;

/// A loaded pipeline, as written (not yet checked).
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// The file the pipeline was loaded from, for diagnostics' spans.
    pub source: SourceFile,
    /// The dialect it was written in (a transition-flow's nodes and edges are its states
    /// and transitions).
    pub dialect: Dialect,
    /// `name`: how the pipeline is called in runs and output.
    pub name: Located<String>,
    /// `version`, free text, when declared.
    pub version: Option<Located<String>>,
    /// `description`, when declared.
    pub description: Option<Located<String>>,
    /// `initialState`: the state a run starts in.
    pub initial_state: Located<String>,
    /// `terminalStates` as declared (a state with no outgoing transition is terminal too;
    /// see [`Pipeline::is_terminal`]).
    pub terminal_states: Vec<Located<String>>,
    /// `failureStates`: terminal states that end a run as failed.
    pub failure_states: Vec<Located<String>>,
    /// `iterationBound`: the most transitions a run may take ([`DEFAULT_ITERATION_BOUND`] when absent).
    pub iteration_bound: Located<u32>,
    /// `defaultOnError`: the failure policy of actions that declare no `onError`.
    pub default_on_error: Located<OnError>,
    /// Declared vars in declaration order, each with its default value.
    pub vars: Vec<VarDecl>,
    /// `env.allow`: environment variable names that `${env.X}` may read.
    pub env_allow: Vec<Located<String>>,
    /// `secrets`: names of vars and `env.allow` environment variables whose values spur
    /// keeps out of its records (see [`crate::redact`]).
    pub secrets: Vec<Located<String>>,
    /// The states, in declaration order.
    pub states: Vec<State>,
    /// The transitions, in declaration order (the order they are tried).
    pub transitions: Vec<Transition>,
}

/// The reference's two dialects (`kind:`). Both load into the one model: a
/// `transition-flow`'s node is a state whose `onEnter` is its one action, an edge a
/// transition whose guard is its `condition`, `initialNode` the initial state and
/// `terminalNodes` the terminal states (pipeline/load/transition_flow.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// `kind: state-machine` (the default): states and transitions.
    #[default]
    StateMachine,
    /// `kind: transition-flow`: nodes and edges.
    TransitionFlow,
}

impl Dialect {
    /// The `kind:` that names it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::StateMachine => "state-machine",
            Self::TransitionFlow => "transition-flow",
        }
    }
}

/// A declared var (`vars:`): its name and default value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    pub(crate) name: Located<String>,
    pub(crate) default: Located<String>,
}

/// A state of the pipeline.
#[derive(Debug, Clone)]
pub struct State {
    /// The state's `id`, unique in the pipeline.
    pub id: Located<String>,
    /// `description`, when declared.
    pub description: Option<Located<String>>,
    /// `pause: true`: a run stops here and waits for `spur continue`.
    pub pause: bool,
    /// `onEnter`: actions run, in order, on entering the state.
    pub on_enter: Vec<Action>,
    /// `onExit`: actions run, in order, on leaving the state.
    pub on_exit: Vec<Action>,
    /// The whole state mapping.
    pub span: Span,
}

/// A transition between two states, tried in declaration order.
#[derive(Debug, Clone)]
pub struct Transition {
    /// `from`: the state it leaves.
    pub from: Located<String>,
    /// `to`: the state it enters.
    pub to: Located<String>,
    /// `description`, when declared.
    pub description: Option<Located<String>>,
    /// `trigger`, when declared (kept as written; the runner does not read it).
    pub trigger: Option<Located<String>>,
    /// The guard that must pass for it to be taken; none means always.
    pub guard: Option<Guard>,
    /// `terminalReason`: why the run ended, when `to` is terminal.
    pub terminal_reason: Option<Located<TerminalReason>>,
    /// The whole transition mapping.
    pub span: Span,
}

/// An action of `onEnter` / `onExit`: `{kind, options, onError}`.
#[derive(Debug, Clone)]
pub struct Action {
    /// The kind with its options typed; the span is the `kind` value's.
    pub(crate) kind: Located<ActionKind>,
    /// The options as written (every string in them is a template).
    pub(crate) options: Options,
    /// Options the kind requires that are not written (the checker reports them).
    pub(crate) missing_options: Vec<String>,
    pub(crate) on_error: Option<Located<OnError>>,
    /// The whole action mapping.
    pub span: Span,
}

/// A guard: `{kind, options}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    /// The kind with its options typed; the span is the `kind` value's.
    pub(crate) kind: Located<GuardKind>,
    /// The options as written (every string in them is a template).
    pub(crate) options: Options,
    /// Options the kind requires that are not written (the checker reports them).
    pub(crate) missing_options: Vec<String>,
    pub(crate) span: Span,
}

/// An `options` mapping (empty when absent), keys in declaration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// Each key with its value, in the order written.
    pub entries: Vec<(Located<String>, OptionValue)>,
    /// The `options` mapping (or where it would be, when absent).
    pub span: Span,
}

impl Options {
    pub(crate) fn get(&self, key: &str) -> Option<&OptionValue> {
        self.entries
            .iter()
            .find(|(k, _)| k.value == key)
            .map(|(_, v)| v)
    }

    /// The string value of `key`, when it is a string.
    pub(crate) fn get_str(&self, key: &str) -> Option<&Located<String>> {
        match self.get(key) {
            Some(OptionValue::String(s)) => Some(s),
            _ => None,
        }
    }
}

/// A YAML value inside `options`, with spans.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// `null` (or `~`).
    Null(Span),
    /// `true` or `false`.
    Bool(Located<bool>),
    /// A YAML number.
    Number(Located<serde_json::Number>),
    /// A string; every string option is a template.
    String(Located<String>),
    /// A sequence, with the span of the whole list.
    List(Vec<OptionValue>, Span),
    /// A nested mapping.
    Map(Options),
}

impl OptionValue {
    /// The source span of the value.
    pub fn span(&self) -> Span {
        match self {
            OptionValue::Null(span) | OptionValue::List(_, span) => *span,
            OptionValue::Bool(v) => v.span,
            OptionValue::Number(v) => v.span,
            OptionValue::String(v) => v.span,
            OptionValue::Map(m) => m.span,
        }
    }

    /// The value as JSON (spans dropped), e.g. for plugin stdin.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            OptionValue::Null(_) => serde_json::Value::Null,
            OptionValue::Bool(b) => serde_json::Value::Bool(b.value),
            OptionValue::Number(n) => serde_json::Value::Number(n.value.clone()),
            OptionValue::String(s) => serde_json::Value::String(s.value.clone()),
            OptionValue::List(items, _) => {
                serde_json::Value::Array(items.iter().map(OptionValue::to_json).collect())
            }
            OptionValue::Map(m) => m.to_json(),
        }
    }
}

impl Options {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.entries
                .iter()
                .map(|(k, v)| (k.value.clone(), v.to_json()))
                .collect(),
        )
    }
}

/// Action failure policy (`onError`, `defaultOnError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// A failed action fails the run.
    #[default]
    Fail,
    /// A failed action is recorded and the run goes on.
    Continue,
}

impl OnError {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "fail" => Some(Self::Fail),
            "continue" => Some(Self::Continue),
            _ => None,
        }
    }

    /// The value as written in YAML (`fail`, `continue`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Continue => "continue",
        }
    }
}

/// Why a finished run ended: a closed vocabulary (the book's pipeline-format chapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TerminalReason {
    /// `done`: the work is finished.
    Done,
    /// `paused-operator`: a person stopped the work.
    PausedOperator,
    /// `failed-check`: a check (a gate, a test) failed.
    FailedCheck,
    /// `failed-agent`: the agent step failed.
    FailedAgent,
    /// `failed-timeout`: a step ran out of time.
    FailedTimeout,
    /// `failed-guard`: no guard let the run go on.
    FailedGuard,
    /// `cancelled`: the work was cancelled.
    Cancelled,
    /// `interrupted`: the run was interrupted.
    Interrupted,
    /// `retry-exhausted`: every allowed retry was used.
    RetryExhausted,
}

impl TerminalReason {
    pub(crate) const ALL: [TerminalReason; 9] = [
        Self::Done,
        Self::PausedOperator,
        Self::FailedCheck,
        Self::FailedAgent,
        Self::FailedTimeout,
        Self::FailedGuard,
        Self::Cancelled,
        Self::Interrupted,
        Self::RetryExhausted,
    ];

    /// The reason as written in YAML and the journal (`failed-check`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::PausedOperator => "paused-operator",
            Self::FailedCheck => "failed-check",
            Self::FailedAgent => "failed-agent",
            Self::FailedTimeout => "failed-timeout",
            Self::FailedGuard => "failed-guard",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
            Self::RetryExhausted => "retry-exhausted",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl Pipeline {
    pub(crate) fn state(&self, id: &str) -> Option<&State> {
        self.states.iter().find(|s| s.id.value == id)
    }

    /// Terminal: declared in `terminalStates`, or a state with no outgoing transition.
    pub fn is_terminal(&self, id: &str) -> bool {
        self.terminal_states.iter().any(|t| t.value == id)
            || !self.transitions.iter().any(|t| t.from.value == id)
    }

    /// Whether `id` is declared in `failureStates`.
    pub fn is_failure(&self, id: &str) -> bool {
        self.failure_states.iter().any(|t| t.value == id)
    }

    pub(crate) fn var_default(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|v| v.name.value == name)
            .map(|v| v.default.value.as_str())
    }
}
