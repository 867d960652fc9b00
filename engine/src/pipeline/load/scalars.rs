//! The dialect's scalar values: state references (non-empty strings), error policies,
//! terminal reasons and the iteration bound, each read through [`FromNode`] with its own
//! finding when the text is not one of them.

use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::model::{OnError, TerminalReason, DEFAULT_ITERATION_BOUND};
use crate::source::Located;
use crate::yaml::{FromNode, Loader, Node, NodeValue};

/// A reference to a state (`initialState`, `from`, `to`, list items): a non-empty string.
pub(crate) struct StateRef(pub(crate) Located<String>);

impl FromNode for StateRef {
    const EXPECTED: &'static str = "a string";
    const LIST_EXPECTED: &'static str = "a list of state ids";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let value = cx.read::<Located<String>>(node, what)?;
        if value.value.trim().is_empty() {
            let d = Diagnostic::error(
                Code::CheckWrongType,
                cx.source,
                node.pointed(),
                format!("{what} must not be empty"),
            )
            .label("empty state id");
            cx.push(d);
            return None;
        }
        Some(StateRef(value))
    }
}

impl FromNode for OnError {
    const EXPECTED: &'static str = "`fail` or `continue`";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let NodeValue::String(s) = &node.value else {
            cx.wrong_type(node, what, Self::EXPECTED);
            return None;
        };
        let policy = OnError::parse(s);
        if policy.is_none() {
            let hint = did_you_mean(s, ["fail", "continue"]).map_or_else(
                || "use `fail` or `continue`".to_owned(),
                |c| format!("did you mean `{c}`?"),
            );
            let d = Diagnostic::error(
                Code::CheckOnError,
                cx.source,
                node.span,
                format!("invalid {what} `{s}`"),
            )
            .label("not an error policy")
            .help(hint);
            cx.push(d);
        }
        policy
    }
}

impl FromNode for TerminalReason {
    const EXPECTED: &'static str = "a string";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let s = cx.read::<String>(node, what)?;
        let reason = TerminalReason::parse(&s);
        if reason.is_none() {
            let all = TerminalReason::ALL.map(TerminalReason::as_str);
            let d = Diagnostic::error(
                Code::CheckTerminalReason,
                cx.source,
                node.span,
                format!("unknown terminalReason `{s}`"),
            )
            .label("not a terminal reason")
            .help(match did_you_mean(&s, all) {
                Some(r) => format!("did you mean `{r}`?"),
                None => format!("use one of: {}", all.join(", ")),
            });
            cx.push(d);
        }
        reason
    }
}

/// `iterationBound`: a positive integer that fits in 32 bits.
pub(crate) struct IterationBound(pub(crate) u32);

impl FromNode for IterationBound {
    const EXPECTED: &'static str = "a positive integer";

    fn from_node(cx: &mut Loader<'_>, node: &Node, _what: &str) -> Option<Self> {
        let bound = match &node.value {
            NodeValue::Number(n) => n
                .as_u64()
                .filter(|n| *n > 0)
                .and_then(|n| u32::try_from(n).ok()),
            _ => None,
        };
        if bound.is_none() {
            let d = Diagnostic::error(
                Code::CheckIterationBound,
                cx.source,
                node.pointed(),
                "`iterationBound` must be a positive integer",
            )
            .label("not a positive integer")
            .help(format!(
                "the most transitions one run may take, e.g. `iterationBound: {DEFAULT_ITERATION_BOUND}` (the default)"
            ));
            cx.push(d);
        }
        bound.map(IterationBound)
    }
}
