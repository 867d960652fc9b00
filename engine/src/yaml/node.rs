//! The YAML document as a generic tree of nodes, each with the byte span it came from.
//! Readers type this tree; keeping every mapping entry in order, repeated keys included,
//! is what lets them report a duplicate key with both places.

use crate::source::Span;

/// One YAML node with its span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: NodeValue,
    pub(crate) span: Span,
}

/// The value of a YAML node. Mapping entries keep their order and any repeated key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeValue {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl NodeValue {
    /// The YAML type name, for "expected X, found Y" messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            NodeValue::Null => "null",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Number(_) => "a number",
            NodeValue::String(_) => "a string",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a mapping",
        }
    }
}

impl Node {
    /// The full extent of the node (an alias copy keeps the span of the alias).
    pub(crate) fn extent(&self) -> Span {
        let start = self.span.offset;
        let mut end = self.span.end();
        match &self.value {
            NodeValue::Seq(items) => {
                for item in items {
                    end = end.max(item.extent().end());
                }
            }
            NodeValue::Map(entries) => {
                for (k, v) in entries {
                    end = end.max(k.span.end()).max(v.extent().end());
                }
            }
            _ => {}
        }
        Span::new(start, end.saturating_sub(start))
    }

    /// Where a diagnostic points for this node: its extent, never empty.
    pub(crate) fn pointed(&self) -> Span {
        let span = self.extent();
        if span.len == 0 {
            Span::new(span.offset, 1)
        } else {
            span
        }
    }

    /// The text of a scalar used as a key (`1: x` → "1"); `None` for a collection.
    pub(crate) fn key_text(&self) -> Option<String> {
        match &self.value {
            NodeValue::String(s) => Some(s.clone()),
            NodeValue::Number(n) => Some(n.to_string()),
            NodeValue::Bool(b) => Some(b.to_string()),
            NodeValue::Null => Some("null".into()),
            NodeValue::Seq(_) | NodeValue::Map(_) => None,
        }
    }
}
