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
    pub source: SourceFile,
    pub name: Located<String>,
    pub version: Option<Located<String>>,
    pub description: Option<Located<String>>,
    pub initial_state: Located<String>,
    /// `terminalStates` as declared (a state with no outgoing transition is terminal too;
    /// see [`Pipeline::is_terminal`]).
    pub terminal_states: Vec<Located<String>>,
    pub failure_states: Vec<Located<String>>,
    pub iteration_bound: Located<u32>,
    pub default_on_error: Located<OnError>,
    /// Declared vars in declaration order, each with its default value.
    pub vars: Vec<VarDecl>,
    /// `env.allow`: environment variable names that `${env.X}` may read.
    pub env_allow: Vec<Located<String>>,
    pub states: Vec<State>,
    pub transitions: Vec<Transition>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    pub(crate) name: Located<String>,
    pub(crate) default: Located<String>,
}

#[derive(Debug, Clone)]
pub struct State {
    pub id: Located<String>,
    pub description: Option<Located<String>>,
    pub pause: bool,
    pub on_enter: Vec<Action>,
    pub on_exit: Vec<Action>,
    /// The whole state mapping.
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Transition {
    pub from: Located<String>,
    pub to: Located<String>,
    pub description: Option<Located<String>>,
    pub trigger: Option<Located<String>>,
    pub guard: Option<Guard>,
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
    pub entries: Vec<(Located<String>, OptionValue)>,
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
    Null(Span),
    Bool(Located<bool>),
    Number(Located<serde_json::Number>),
    String(Located<String>),
    List(Vec<OptionValue>, Span),
    Map(Options),
}

impl OptionValue {
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
    #[default]
    Fail,
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
    Done,
    PausedOperator,
    FailedCheck,
    FailedAgent,
    FailedTimeout,
    FailedGuard,
    Cancelled,
    Interrupted,
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
