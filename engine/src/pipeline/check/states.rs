//! State references: duplicate ids, unknown `initialState`/`from`/`to`/terminal/failure
//! states (with did-you-mean), failure states that are not terminal, an initial state that
//! is a declared terminal, and transitions out of a declared terminal state.

use std::collections::HashMap;

use super::Context;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::source::Located;

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    let mut first: HashMap<&str, &Located<String>> = HashMap::with_capacity(p.states.len());
    for state in &p.states {
        if let Some(earlier) = first.get(state.id.value.as_str()) {
            let d = Diagnostic::error(
                Code::CheckDuplicateState,
                &p.source,
                state.id.span,
                format!("state `{}` is declared twice", state.id.value),
            )
            .label("declared again here")
            .secondary(earlier.span, "first declared here")
            .help("state ids must be unique; rename or remove one of them");
            cx.push(d);
        } else {
            first.insert(&state.id.value, &state.id);
        }
    }
    let ids: Vec<&str> = p.states.iter().map(|s| s.id.value.as_str()).collect();
    let unknown = |cx: &mut Context<'_>, r: &Located<String>, what: &str| {
        // An empty reference stands for a missing or invalid one, already reported.
        if r.value.is_empty() || first.contains_key(r.value.as_str()) {
            return;
        }
        let d = Diagnostic::error(
            Code::CheckUnknownState,
            &p.source,
            r.span,
            format!("{what} `{}` is not a declared state", r.value),
        )
        .label("no such state");
        let d = match did_you_mean(&r.value, ids.iter().copied()) {
            Some(s) => d.help(format!("did you mean `{s}`?")),
            None if ids.is_empty() => d.help("declare the state under `states:`"),
            None => d.help(format!("declared states: {}", ids.join(", "))),
        };
        cx.push(d);
    };
    unknown(cx, &p.initial_state, "initialState");
    for t in &p.terminal_states {
        unknown(cx, t, "terminal state");
    }
    for f in &p.failure_states {
        unknown(cx, f, "failure state");
    }
    for t in &p.transitions {
        unknown(cx, &t.from, "transition source");
        unknown(cx, &t.to, "transition target");
    }

    // A run that starts where it ends does no work: the reference engine refuses it. Its
    // transition-flow driver does not: a node's action runs before the terminal check.
    let flow = p.dialect == crate::pipeline::model::Dialect::TransitionFlow;
    if let Some(term) = p
        .terminal_states
        .iter()
        .find(|t| t.value == p.initial_state.value)
        .filter(|_| !flow)
    {
        let d = Diagnostic::error(
            Code::CheckInitialTerminal,
            &p.source,
            p.initial_state.span,
            format!(
                "initial state `{}` is a terminal state",
                p.initial_state.value
            ),
        )
        .label("a run would end where it starts")
        .secondary(term.span, "declared terminal here")
        .help("start in a state that has transitions, or remove it from `terminalStates`");
        cx.push(d);
    }

    for f in &p.failure_states {
        let declared_terminal = p.terminal_states.iter().any(|t| t.value == f.value);
        let has_exit = p.transitions.iter().any(|t| t.from.value == f.value);
        if !declared_terminal && has_exit && first.contains_key(f.value.as_str()) {
            let d = Diagnostic::error(
                Code::CheckFailureNotTerminal,
                &p.source,
                f.span,
                format!("failure state `{}` is not a terminal state", f.value),
            )
            .label("has outgoing transitions")
            .help("failureStates must be terminal: list it under `terminalStates` and remove its transitions, or drop it from `failureStates`");
            cx.push(d);
        }
    }

    for t in &p.transitions {
        if let Some(term) = p.terminal_states.iter().find(|s| s.value == t.from.value) {
            let d = Diagnostic::error(
                Code::CheckTransitionFromTerminal,
                &p.source,
                t.from.span,
                format!("transition out of terminal state `{}`", t.from.value),
            )
            .label("a run never leaves a terminal state")
            .secondary(term.span, "declared terminal here")
            .help("remove the transition, or remove the state from `terminalStates`");
            cx.push(d);
        }
    }
}
