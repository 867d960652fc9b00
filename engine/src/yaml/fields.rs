//! A mapping read as named fields: unknown keys (with did-you-mean), duplicate keys (both
//! places) and non-string keys are reported once, here, and every field is then read
//! through [`FromNode`].

use crate::diagnostic::{did_you_mean, Diagnostic, Severity};
use crate::source::Span;
use crate::yaml::{FromNode, Loader, Node, NodeValue};

/// What a mapping's keys that the reader does not know are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnknownKeys {
    /// An error (with did-you-mean): the mapping is the reader's alone.
    Error,
    /// A warning (with did-you-mean): the key is ignored.
    Warn,
    /// Nothing: the keys belong to other readers of the same file, duplicates included.
    Ignore,
}

/// The known entries of a mapping, first occurrence of each key.
pub(crate) struct Fields<'n> {
    entries: Vec<(&'n str, &'n Node, &'n Node)>,
    /// The mapping's extent (first key to last value).
    pub(crate) span: Span,
}

impl<'n> Fields<'n> {
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }

    /// The key node of `key`.
    pub(crate) fn key(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, _)| *k)
    }

    /// Where to point when the mapping lacks a key: its first key.
    pub(crate) fn anchor(&self) -> Span {
        self.entries.first().map_or(self.span, |(_, k, _)| k.span)
    }
}

impl Loader<'_> {
    /// The entries of a mapping node with the keys in `known`, any other key an error.
    /// `None` (reported) when the node is not a mapping.
    pub(crate) fn fields<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        known: &[&str],
    ) -> Option<Fields<'n>> {
        self.fields_with(node, what, known, UnknownKeys::Error)
    }

    /// Like [`Loader::fields`], with the other keys reported as `unknown` says.
    pub(crate) fn fields_with<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        known: &[&str],
        unknown: UnknownKeys,
    ) -> Option<Fields<'n>> {
        let NodeValue::Map(entries) = &node.value else {
            self.wrong_type(node, what, "a mapping");
            return None;
        };
        let severity = match unknown {
            UnknownKeys::Error => Severity::Error,
            UnknownKeys::Warn => Severity::Warning,
            UnknownKeys::Ignore => Severity::Info,
        };
        let report = unknown != UnknownKeys::Ignore;
        let mut fields = Fields {
            entries: Vec::with_capacity(entries.len()),
            span: node.extent(),
        };
        for (key, value) in entries {
            let NodeValue::String(name) = &key.value else {
                if report {
                    let d = Diagnostic::new(
                        severity,
                        self.codes.unknown_key,
                        self.source,
                        key.span,
                        format!(
                            "{what} keys must be strings, found {}",
                            key.value.type_name()
                        ),
                    )
                    .label("not a known key")
                    .help(format!("known keys: {}", known.join(", ")));
                    self.push(d);
                }
                continue;
            };
            if !known.contains(&name.as_str()) {
                if report {
                    let mut d = Diagnostic::new(
                        severity,
                        self.codes.unknown_key,
                        self.source,
                        key.span,
                        format!("unknown key `{name}` in {what}"),
                    )
                    .label("unknown key");
                    d = match did_you_mean(name, known.iter().copied()) {
                        Some(s) => d.help(format!("did you mean `{s}`?")),
                        None => d.help(format!("known keys: {}", known.join(", "))),
                    };
                    self.push(d);
                }
                continue;
            }
            if let Some((_, first, _)) = fields.entries.iter().find(|(k, _, _)| k == name) {
                self.duplicate_key(key.span, name, what, first.span);
                continue;
            }
            fields.entries.push((name.as_str(), key, value));
        }
        Some(fields)
    }

    /// `duplicate key `{name}` in {what}`, at the repeated key, pointing at the first too.
    pub(crate) fn duplicate_key(&mut self, again: Span, name: &str, what: &str, first: Span) {
        let d = Diagnostic::error(
            self.codes.duplicate_key,
            self.source,
            again,
            format!("duplicate key `{name}` in {what}"),
        )
        .label("declared again here")
        .secondary(first, "first declared here")
        .help("YAML keys must be unique; remove one of them");
        self.push(d);
    }

    /// `{what} has no `{key}``, at the mapping's first key.
    pub(crate) fn missing(&mut self, fields: &Fields<'_>, key: &str, what: &str) {
        let d = Diagnostic::error(
            self.codes.missing_key,
            self.source,
            fields.anchor(),
            format!("{what} has no `{key}`"),
        )
        .label(format!("this {what} needs `{key}`"))
        .help(format!("add `{key}:`"));
        self.push(d);
    }

    /// Field `key` of `what` read as a `T`; `None` when absent or reported.
    pub(crate) fn field<T: FromNode>(
        &mut self,
        fields: &Fields<'_>,
        key: &str,
        what: &str,
    ) -> Option<T> {
        let node = fields.get(key)?;
        self.read(node, &format!("`{key}` of {what}"))
    }

    /// Like [`Loader::field`], and a missing field is reported.
    pub(crate) fn required<T: FromNode>(
        &mut self,
        fields: &Fields<'_>,
        key: &str,
        what: &str,
    ) -> Option<T> {
        if fields.get(key).is_none() {
            self.missing(fields, key, what);
            return None;
        }
        self.field(fields, key, what)
    }
}
