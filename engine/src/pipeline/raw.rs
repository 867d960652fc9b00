//! The raw YAML document: a generic tree of nodes, each with the byte span of the YAML node
//! it came from. serde-saphyr parses into it (`Spanned` keeps the spans, which are lost
//! inside tagged enums and `deny_unknown_fields` structs); the loader then types it by hand,
//! so that every type error, unknown key and duplicate key is reported with its exact span
//! and several findings are reported at once instead of the first serde error.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::source::Span;

/// One YAML node with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: NodeValue,
    pub span: Span,
}

/// The value of a YAML node. Mapping entries keep their order and any repeated key, so
/// the loader can report duplicates with both locations.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl NodeValue {
    /// The YAML type name, for "expected X, found Y" messages.
    pub fn type_name(&self) -> &'static str {
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

fn span_of<T>(spanned: &Spanned<T>) -> Span {
    let span = spanned.referenced.span();
    match (span.byte_offset(), span.byte_len()) {
        (Some(offset), Some(len)) => Span::new(
            usize::try_from(offset).unwrap_or(usize::MAX),
            usize::try_from(len).unwrap_or(0),
        ),
        _ => Span::default(),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<NodeValue>::deserialize(deserializer)?;
        let span = span_of(&spanned);
        Ok(Node {
            value: spanned.value,
            span,
        })
    }
}

impl<'de> Deserialize<'de> for NodeValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = NodeValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<NodeValue, E> {
        Ok(NodeValue::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<NodeValue, E> {
        Ok(match i64::try_from(v) {
            Ok(v) => NodeValue::Number(v.into()),
            Err(_) => NodeValue::String(v.to_string()),
        })
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<NodeValue, E> {
        Ok(match u64::try_from(v) {
            Ok(v) => NodeValue::Number(v.into()),
            Err(_) => NodeValue::String(v.to_string()),
        })
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NodeValue, E> {
        Ok(serde_json::Number::from_f64(v).map_or(NodeValue::Null, NodeValue::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<NodeValue, E> {
        Ok(NodeValue::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<NodeValue, E> {
        Ok(NodeValue::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<NodeValue, D::Error> {
        NodeValue::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(NodeValue::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Node>()? {
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(NodeValue::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_byte_spans_order_and_repeated_keys() {
        let text = "a: 1\nb: \"x y\"\nc:\n  - p\na: 2\n";
        let opts = serde_saphyr::options! {
            duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        };
        let node: Node = serde_saphyr::from_str_with_options(text, opts).unwrap();
        let NodeValue::Map(entries) = node.value else {
            panic!("not a map")
        };
        let keys: Vec<(String, Span)> = entries
            .iter()
            .map(|(k, _)| (format!("{:?}", k.value), k.span))
            .collect();
        assert_eq!(keys.len(), 4);
        assert_eq!(keys[3].1, Span::new(19, 1));
        assert_eq!(entries[1].1.span, Span::new(8, 5));
        assert_eq!(entries[1].1.value, NodeValue::String("x y".into()));
        assert_eq!(entries[3].1.value, NodeValue::Number(2.into()));
    }
}
