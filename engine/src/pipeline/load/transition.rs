//! A transition (`from`, `to`, `description`, `trigger`, `guard`, `terminalReason`) and
//! its guard (`kind`, `options`). A missing or invalid `from`/`to` becomes an empty
//! reference at the mapping, which the checker skips: the finding is already made.

use crate::pipeline::guard_kind::GuardKind;
use crate::pipeline::model::{Guard, TerminalReason, Transition};
use crate::source::Located;
use crate::yaml::{Fields, FromNode, Loader, Node};

use super::option_reader::OptionReader;
use super::scalars::StateRef;
use super::{GUARD_KEYS, TRANSITION_KEYS};

impl Loader<'_> {
    /// Transition number `index` (from 0) of `transitions`.
    pub(super) fn transition(&mut self, node: &Node, index: usize) -> Option<Transition> {
        let fields = self.fields(node, "a transition", TRANSITION_KEYS)?;
        let what = format!("transition #{}", index + 1);
        let from = self.state_ref_or_empty(&fields, "from", &what);
        let to = self.state_ref_or_empty(&fields, "to", &what);
        let description = self.field(&fields, "description", &what).flatten();
        let trigger = self.field(&fields, "trigger", &what).flatten();
        let guard = fields
            .get("guard")
            .and_then(|n| self.read::<Option<Guard>>(n, "`guard`"))
            .flatten();
        let terminal_reason = fields
            .get("terminalReason")
            .and_then(|n| self.read::<Located<TerminalReason>>(n, "`terminalReason`"));
        Some(Transition {
            from,
            to,
            description,
            trigger,
            guard,
            terminal_reason,
            span: fields.span,
        })
    }

    /// A required state reference; when missing or invalid, an empty placeholder.
    pub(super) fn state_ref_or_empty(
        &mut self,
        fields: &Fields<'_>,
        key: &str,
        what: &str,
    ) -> Located<String> {
        match fields.get(key) {
            Some(node) => self
                .field::<StateRef>(fields, key, what)
                .map_or_else(|| Located::new(String::new(), node.span), |r| r.0),
            None => {
                self.missing(fields, key, what);
                Located::new(String::new(), fields.anchor())
            }
        }
    }
}

impl FromNode for Guard {
    const EXPECTED: &'static str = "a mapping";

    fn from_node(cx: &mut Loader<'_>, node: &Node, _what: &str) -> Option<Self> {
        let fields = cx.fields(node, "a guard", GUARD_KEYS)?;
        let written = cx.kind_field(&fields, "guard")?;
        let options = cx.options(&fields, node);
        let mut r = OptionReader::new(cx.source, &mut cx.diagnostics, "guard", &written, &options);
        let kind = Located::new(GuardKind::read(&written.value, &mut r), written.span);
        let missing_options = r.finish();
        Some(Guard {
            kind,
            options,
            missing_options,
            span: fields.span,
        })
    }
}
