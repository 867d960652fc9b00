//! Graph checks (through [`TransitionGraph`]): unreachable states (warning), states from
//! which no terminal state can be reached (error: a run there loops until the iteration
//! bound), and transitions shadowed by an earlier unconditional one (warning).

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::graph::TransitionGraph;

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    let graph = TransitionGraph::new(p);
    if graph.initial().is_some() {
        for i in graph.unreachable_states() {
            let Some(state) = p.states.get(i) else {
                continue;
            };
            let d = Diagnostic::warning(
                Code::CheckUnreachableState,
                &p.source,
                state.id.span,
                format!("state `{}` can never be entered", state.id.value),
            )
            .label("unreachable from the initial state")
            .help(format!(
                "add a transition to it, or remove it; runs start at `{}`",
                p.initial_state.value
            ));
            cx.push(d);
        }
    }
    for i in graph.states_that_cannot_terminate() {
        let Some(state) = p.states.get(i) else {
            continue;
        };
        let d = Diagnostic::error(
            Code::CheckTrapState,
            &p.source,
            state.id.span,
            format!("no terminal state can be reached from state `{}`", state.id.value),
        )
        .label("every path from here loops forever")
        .help(format!(
            "a run entering it cycles until the iteration bound ({}); add a transition to a terminal state",
            p.iteration_bound.value
        ));
        cx.push(d);
    }
    for s in graph.shadowed_transitions() {
        let (Some(t), Some(by)) = (
            p.transitions.get(s.transition),
            p.transitions.get(s.shadowed_by),
        ) else {
            continue;
        };
        let d = Diagnostic::warning(
            Code::CheckShadowedTransition,
            &p.source,
            t.from.span,
            format!(
                "transition `{}` → `{}` can never be taken",
                t.from.value, t.to.value
            ),
        )
        .label("never tried")
        .secondary(by.from.span, "this earlier transition always passes")
        .help("transitions are tried in order and the first passing one wins; move this one up or give the earlier one a guard");
        cx.push(d);
    }
}
