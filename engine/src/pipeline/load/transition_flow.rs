//! The `transition-flow` dialect, loaded into the one model with every span kept: a node
//! (`id`, `description`, `type`, `action`, `pause`) is a state whose `onEnter` is its one
//! action, an edge (`from`, `to`, `description`, `condition`) a transition whose guard is its
//! condition, `initialNode` the initial state and `terminalNodes` the terminal states. The
//! reference's driver runs a flow as spur runs states: the node's action, then `pause`, then
//! terminal (declared, or no outgoing edge), then the first edge whose condition passes, in
//! declaration order. `extensions` (modules in the reference's language) is an error that
//! points at spur's plugins.

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::model::{Action, Guard, State, Transition};
use crate::source::Located;
use crate::yaml::{Fields, Loader, Node};

use super::scalars::StateRef;
use super::Graph;

/// Top-level keys of a transition-flow (the reference's schema, with `defaultOnError`,
/// which its driver reads, and spur's `secrets`).
pub(crate) const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "kind",
    "name",
    "version",
    "description",
    "initialNode",
    "terminalNodes",
    "iterationBound",
    "defaultOnError",
    "vars",
    "env",
    "secrets",
    "nodes",
    "edges",
    "extensions",
];
const NODE_KEYS: &[&str] = &["id", "description", "type", "action", "pause"];
const NODE_TYPES: &[&str] = &["action", "gate", "parallel", "decision"];
const EDGE_KEYS: &[&str] = &["from", "to", "description", "condition"];

impl Loader<'_> {
    /// The transition-flow dialect's graph.
    pub(super) fn nodes_and_edges(&mut self, top: &Fields<'_>) -> Graph {
        if let (Some(key), Some(value)) = (top.key("extensions"), top.get("extensions")) {
            let end = value.pointed().end();
            let span =
                crate::source::Span::new(key.span.offset, end.saturating_sub(key.span.offset));
            let d = Diagnostic::error(
                Code::CheckExtensions,
                self.source,
                span,
                "`extensions` (modules in the reference engine's language) are not loaded by spur",
            )
            .label("not loaded")
            .help(
                "spur runs plugins from PATH instead: an action kind `x` runs `spur-action-x`, \
                 a condition kind `y` runs `spur-guard-y` (book: Writing plugins); remove \
                 `extensions` once each custom kind has its plugin",
            );
            self.push(d);
        }
        let initial_state = self.state_ref_or_empty(top, "initialNode", "the pipeline");
        let terminal_states = self.state_list(top, "terminalNodes");
        let states = match top.get("nodes") {
            Some(node) => self
                .items(node, "`nodes`", "a list", |cx, item, _| cx.flow_node(item))
                .unwrap_or_default(),
            None => {
                self.missing(top, "nodes", "the pipeline");
                Vec::new()
            }
        };
        let transitions = match top.get("edges") {
            Some(node) => self
                .items(node, "`edges`", "a list", |cx, item, i| {
                    cx.flow_edge(item, i)
                })
                .unwrap_or_default(),
            None => {
                self.missing(top, "edges", "the pipeline");
                Vec::new()
            }
        };
        Graph {
            initial_state,
            terminal_states,
            failure_states: Vec::new(),
            states,
            transitions,
        }
    }

    /// A node: a state with at most one action.
    fn flow_node(&mut self, node: &Node) -> Option<State> {
        let fields = self.fields(node, "a node", NODE_KEYS)?;
        let id = match fields.get("id") {
            Some(id) => self.read::<StateRef>(id, "a node `id`")?.0,
            None => {
                self.missing(&fields, "id", "node");
                return None;
            }
        };
        let what = format!("node `{}`", id.value);
        let description = self.field(&fields, "description", &what).flatten();
        if let Some(ty) = fields.get("type") {
            // Descriptive in the reference: its driver runs every type alike.
            let written = self.read::<Located<String>>(ty, &format!("`type` of {what}"));
            if let Some(written) = written.filter(|t| !NODE_TYPES.contains(&t.value.as_str())) {
                self.wrong_type(
                    ty,
                    &format!("`type` of {what} (`{}`)", written.value),
                    "action, gate, parallel or decision",
                );
            }
        }
        let pause = self
            .field::<Option<bool>>(&fields, "pause", &what)
            .flatten()
            .unwrap_or(false);
        let on_enter = fields
            .get("action")
            .and_then(|n| self.read::<Option<Action>>(n, "`action`"))
            .flatten()
            .into_iter()
            .collect();
        Some(State {
            id,
            description,
            pause,
            on_enter,
            on_exit: Vec::new(),
            span: fields.span,
        })
    }

    /// Edge number `index` (from 0): a transition whose guard is its `condition`.
    fn flow_edge(&mut self, node: &Node, index: usize) -> Option<Transition> {
        let fields = self.fields(node, "an edge", EDGE_KEYS)?;
        let what = format!("edge #{}", index + 1);
        let from = self.state_ref_or_empty(&fields, "from", &what);
        let to = self.state_ref_or_empty(&fields, "to", &what);
        let description = self.field(&fields, "description", &what).flatten();
        let guard = fields
            .get("condition")
            .and_then(|n| self.read::<Option<Guard>>(n, "`condition`"))
            .flatten();
        Some(Transition {
            from,
            to,
            description,
            trigger: None,
            guard,
            terminal_reason: None,
            span: fields.span,
        })
    }
}
