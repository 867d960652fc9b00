//! `options:` of an action or a guard, read as written: a tree of values with spans, keys
//! in order, a repeated option reported with both places.

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::model::{OptionValue, Options};
use crate::source::Located;
use crate::yaml::{Fields, Loader, Node, NodeValue};

impl Loader<'_> {
    /// The `options` field of an action or guard (empty when absent), pointing at the
    /// `kind` key when there are none.
    pub(super) fn options(&mut self, fields: &Fields<'_>, owner: &Node) -> Options {
        match fields.get("options") {
            None
            | Some(Node {
                value: NodeValue::Null,
                ..
            }) => Options {
                entries: Vec::new(),
                span: fields.key("kind").map_or(owner.span, |k| k.span),
            },
            Some(node) => match self.option_value(node) {
                OptionValue::Map(options) => options,
                _ => {
                    self.wrong_type(node, "`options`", "a mapping");
                    Options {
                        entries: Vec::new(),
                        span: node.span,
                    }
                }
            },
        }
    }

    fn option_value(&mut self, node: &Node) -> OptionValue {
        match &node.value {
            NodeValue::Null => OptionValue::Null(node.span),
            NodeValue::Bool(b) => OptionValue::Bool(Located::new(*b, node.span)),
            NodeValue::Number(n) => OptionValue::Number(Located::new(n.clone(), node.span)),
            NodeValue::String(s) => OptionValue::String(Located::new(s.clone(), node.span)),
            NodeValue::Seq(items) => OptionValue::List(
                items.iter().map(|i| self.option_value(i)).collect(),
                node.extent(),
            ),
            NodeValue::Map(entries) => {
                let mut options = Options {
                    entries: Vec::with_capacity(entries.len()),
                    span: node.extent(),
                };
                for (key, value) in entries {
                    let Some(name) = key.key_text() else {
                        self.wrong_type(key, "an option name", "a string");
                        continue;
                    };
                    if let Some((first, _)) = options.entries.iter().find(|(k, _)| k.value == name)
                    {
                        let d = Diagnostic::error(
                            Code::CheckDuplicateKey,
                            self.source,
                            key.span,
                            format!("duplicate option `{name}`"),
                        )
                        .label("declared again here")
                        .secondary(first.span, "first declared here")
                        .help("YAML keys must be unique; remove one of them");
                        self.push(d);
                        continue;
                    }
                    let value = self.option_value(value);
                    options.entries.push((Located::new(name, key.span), value));
                }
                OptionValue::Map(options)
            }
        }
    }
}
