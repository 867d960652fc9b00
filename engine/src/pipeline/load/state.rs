//! A state (`id`, `description`, `pause`, `onEnter`, `onExit`) and its actions (`kind`,
//! `options`, `onError`). A state without a valid id is left out (the finding says why).

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::action_kind::ActionKind;
use crate::pipeline::model::{Action, OnError, State};
use crate::source::Located;
use crate::yaml::{Fields, FromNode, Loader, Node};

use super::option_reader::OptionReader;
use super::scalars::StateRef;
use super::{ACTION_KEYS, STATE_KEYS};

impl FromNode for State {
    const EXPECTED: &'static str = "a mapping";

    fn from_node(cx: &mut Loader<'_>, node: &Node, _what: &str) -> Option<Self> {
        let fields = cx.fields(node, "a state", STATE_KEYS)?;
        let id = match fields.get("id") {
            Some(id) => cx.read::<StateRef>(id, "a state `id`")?.0,
            None => {
                cx.missing(&fields, "id", "state");
                return None;
            }
        };
        let what = format!("state `{}`", id.value);
        let description = cx.field(&fields, "description", &what).flatten();
        let pause = cx
            .field::<Option<bool>>(&fields, "pause", &what)
            .flatten()
            .unwrap_or(false);
        let on_enter = cx.field(&fields, "onEnter", &what).unwrap_or_default();
        let on_exit = cx.field(&fields, "onExit", &what).unwrap_or_default();
        Some(State {
            id,
            description,
            pause,
            on_enter,
            on_exit,
            span: fields.span,
        })
    }
}

impl FromNode for Action {
    const EXPECTED: &'static str = "a mapping";

    fn from_node(cx: &mut Loader<'_>, node: &Node, _what: &str) -> Option<Self> {
        let fields = cx.fields(node, "an action", ACTION_KEYS)?;
        let written = cx.kind_field(&fields, "action")?;
        let options = cx.options(&fields, node);
        let mut r = OptionReader::new(cx.source, &mut cx.diagnostics, "action", &written, &options);
        let kind = Located::new(ActionKind::read(&written.value, &mut r), written.span);
        let missing_options = r.finish();
        let on_error = fields
            .get("onError")
            .and_then(|n| cx.read::<Option<Located<OnError>>>(n, "`onError`"))
            .flatten();
        Some(Action {
            kind,
            options,
            missing_options,
            on_error,
            span: fields.span,
        })
    }
}

impl Loader<'_> {
    /// The `kind` of an action or guard: a non-empty string.
    pub(super) fn kind_field(
        &mut self,
        fields: &Fields<'_>,
        what: &str,
    ) -> Option<Located<String>> {
        let Some(node) = fields.get("kind") else {
            self.missing(fields, "kind", what);
            return None;
        };
        let kind = self.read::<Located<String>>(node, &format!("the `kind` of a {what}"))?;
        if kind.value.trim().is_empty() {
            self.push(Diagnostic::error(
                Code::CheckWrongType,
                self.source,
                node.pointed(),
                format!("the `kind` of a {what} must not be empty"),
            ));
            return None;
        }
        Some(kind)
    }
}
