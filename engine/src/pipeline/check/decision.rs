//! `decision:` of `hitl.confirm` / `hitl.select`, checked as the reference checks it before
//! any provider is asked: `mode` is `never` (nothing else) or `evidence` (a `statusVar`
//! that is an identifier and not the answer var, a non-empty list of distinct declared
//! producer states under `evidenceNodes`, and a state that does not pause).

use super::Context;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::action_kind::{ActionKind, DecisionOptions};
use crate::pipeline::model::{Action, OptionValue, State};
use crate::pipeline::templated::Templated;
use crate::source::Span;
use crate::template::is_identifier;

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for state in &p.states {
        for action in state.on_enter.iter().chain(&state.on_exit) {
            let (decision, var) = match &action.kind.value {
                ActionKind::HitlConfirm(o) => (o.decision.as_ref(), o.var.as_ref()),
                ActionKind::HitlSelect(o) => (o.decision.as_ref(), o.var.as_ref()),
                _ => continue,
            };
            match (decision, action.options.get("decision")) {
                (Some(decision), _) => check_decision(cx, state, action, decision, var),
                (None, Some(written)) => {
                    let d = error(cx, written.span(), "`decision` must be a mapping")
                        .label("not a mapping")
                        .help("write `decision: {mode: never}` or `decision: {mode: evidence, statusVar: …, evidenceNodes: […]}`");
                    cx.push(d);
                }
                (None, None) => {}
            }
        }
    }
}

fn error(cx: &Context<'_>, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::CheckDecision, &cx.pipeline.source, span, message)
}

fn check_decision(
    cx: &mut Context<'_>,
    state: &State,
    action: &Action,
    decision: &DecisionOptions,
    var: Option<&Templated<String>>,
) {
    let at = action
        .options
        .get("decision")
        .map_or(action.kind.span, OptionValue::span);
    let Some(mode) = decision.mode.as_ref().and_then(Templated::written_str) else {
        let d = error(cx, at, "`decision` has no `mode`")
            .label("no mode")
            .help("`mode: never` (the operator answers) or `mode: evidence`");
        cx.push(d);
        return;
    };
    match mode.value.as_str() {
        "never" => {
            let extra: Vec<&str> = [
                ("statusVar", decision.status_var.is_some()),
                ("evidenceNodes", decision.evidence_nodes.is_some()),
                ("summaryArtifact", decision.summary_artifact.is_some()),
            ]
            .into_iter()
            .filter_map(|(k, set)| set.then_some(k))
            .collect();
            if !extra.is_empty() {
                let d = error(
                    cx,
                    mode.span,
                    format!(
                        "decision mode `never` takes no further options (got {})",
                        extra.join(", ")
                    ),
                )
                .label("mode never")
                .help("remove them, or use `mode: evidence`");
                cx.push(d);
            }
        }
        "evidence" => evidence(cx, state, mode.span, decision, var),
        other => {
            let d = error(cx, mode.span, format!("unknown decision mode `{other}`"))
                .label("not a decision mode")
                .help(match did_you_mean(other, ["never", "evidence"]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "modes: never, evidence".to_owned(),
                });
            cx.push(d);
        }
    }
}

fn evidence(
    cx: &mut Context<'_>,
    state: &State,
    mode: Span,
    decision: &DecisionOptions,
    var: Option<&Templated<String>>,
) {
    if state.pause {
        let d = error(
            cx,
            mode,
            format!(
                "decision mode `evidence` in state `{}`, which pauses",
                state.id.value
            ),
        )
        .label("evidence mode needs a state that does not pause")
        .help("remove `pause: true` from the state, or use `mode: never`");
        cx.push(d);
    }
    let answer_var = var
        .and_then(Templated::written_str)
        .map_or("__hitlAnswer", |v| v.value.as_str());
    match decision
        .status_var
        .as_ref()
        .and_then(Templated::written_str)
    {
        None => {
            let d = error(cx, mode, "decision mode `evidence` needs a `statusVar`")
                .label("no statusVar")
                .help("name the var that records `accepted` or `deferred`: `statusVar: decisionStatus`");
            cx.push(d);
        }
        Some(status) if !is_identifier(&status.value) => {
            let d = error(
                cx,
                status.span,
                format!("`statusVar` `{}` is not a var name", status.value),
            )
            .label("not an identifier")
            .help("var names match ^[A-Za-z_][A-Za-z0-9_]*$");
            cx.push(d);
        }
        Some(status) if status.value == answer_var || status.value == "__hitlAnswer" => {
            let d = error(
                cx,
                status.span,
                format!("`statusVar` `{}` is the answer var", status.value),
            )
            .label("the answer lands here too")
            .help("name a var of its own, e.g. `decisionStatus`");
            cx.push(d);
        }
        Some(_) => {}
    }
    let nodes = decision
        .evidence_nodes
        .as_ref()
        .map(|n| (n.written(), n.written().span()));
    let items = match nodes {
        Some((OptionValue::List(items, _), _)) if !items.is_empty() => items,
        Some((_, span)) => {
            let d = error(
                cx,
                span,
                "`evidenceNodes` must be a non-empty list of states",
            )
            .label("not a non-empty list")
            .help("list the states whose actions produce the evidence: `evidenceNodes: [assess]`");
            cx.push(d);
            return;
        }
        None => {
            let d = error(cx, mode, "decision mode `evidence` needs `evidenceNodes`")
                .label("no evidenceNodes")
                .help(
                    "list the states whose actions produce the evidence: `evidenceNodes: [assess]`",
                );
            cx.push(d);
            return;
        }
    };
    let ids: Vec<&str> = cx
        .pipeline
        .states
        .iter()
        .map(|s| s.id.value.as_str())
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    for item in items {
        let OptionValue::String(node) = item else {
            let d = error(
                cx,
                item.span(),
                "an `evidenceNodes` entry must be a state id",
            )
            .label("not a string");
            cx.push(d);
            continue;
        };
        if seen.contains(&node.value.as_str()) {
            let d = error(
                cx,
                node.span,
                format!("producer state `{}` is listed twice", node.value),
            )
            .label("duplicate")
            .help("list each producer state once");
            cx.push(d);
            continue;
        }
        seen.push(&node.value);
        if !ids.contains(&node.value.as_str()) {
            let d = error(
                cx,
                node.span,
                format!("producer state `{}` is not a declared state", node.value),
            )
            .label("no such state");
            let d = match did_you_mean(&node.value, ids.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("declared states: {}", ids.join(", "))),
            };
            cx.push(d);
        }
    }
}
