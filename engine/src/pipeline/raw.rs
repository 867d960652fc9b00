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

/// Limits on what one parse may build.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most nodes, alias expansions included (an alias bomb hits this).
    pub max_nodes: usize,
    /// Deepest nesting of lists and mappings.
    pub max_depth: usize,
    /// Most aliases.
    pub max_aliases: usize,
}

/// Why a document could not be parsed into a node tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// YAML syntax error.
    Syntax { message: String, span: Span },
    /// Nested deeper than [`Limits::max_depth`].
    TooDeep { span: Span },
    /// More nodes (alias expansions included) or aliases than allowed.
    TooLarge { span: Span },
    /// More than one document.
    MultipleDocuments { span: Span },
    /// `*name` with no `&name` before it.
    UnknownAnchor { name: String, span: Span },
}

/// Parse one YAML document into a node tree, straight from the parser's events (three
/// times faster than going through serde), enforcing `limits` as it goes: nesting depth,
/// node count including alias expansions, alias count. Plain scalars resolve by the YAML
/// 1.2 core schema (null, booleans, integers, floats); quoted and block scalars are
/// strings. Merge keys (`<<`) are ordinary keys.
pub fn parse(text: &str, limits: Limits) -> Result<Option<Node>, ParseError> {
    use serde_saphyr::granit_parser::{Event, Parser};
    let mut options = serde_saphyr::granit_parser::Options::default();
    options.flow_nesting_limit = limits.max_depth + 2;
    options.block_nesting_limit = limits.max_depth + 2;
    let parser = Parser::new_from_str_with_options(text, options);
    let mut builder = TreeBuilder {
        limits,
        stack: Vec::new(),
        anchors: std::collections::HashMap::new(),
        nodes: 0,
        aliases: 0,
        root: None,
    };
    let mut documents = 0usize;
    for event in parser {
        let (event, span) = event.map_err(|e| {
            let offset = e.marker().byte_offset().unwrap_or(0).min(text.len());
            let message = e.info();
            let span = Span::new(offset, 0);
            if message.contains("nesting") || message.contains("recursion") {
                ParseError::TooDeep { span }
            } else {
                ParseError::Syntax { message, span }
            }
        })?;
        let span = byte_span(&span, text.len());
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(ParseError::MultipleDocuments { span });
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                let is_str_tag = tag.as_ref().is_some_and(|t| t.suffix() == "str");
                let value =
                    if style == serde_saphyr::granit_parser::ScalarStyle::Plain && !is_str_tag {
                        resolve_plain(&value)
                    } else {
                        NodeValue::String(value.into_owned())
                    };
                builder.leaf(Node { value, span }, anchor)?;
            }
            Event::SequenceStart(_, anchor, _) => {
                builder.open(NodeValue::Seq(Vec::new()), span, anchor)?
            }
            Event::MappingStart(_, anchor, _) => {
                builder.open(NodeValue::Map(Vec::new()), span, anchor)?
            }
            Event::SequenceEnd | Event::MappingEnd => builder.close(span)?,
            Event::Alias(id) => builder.alias(id, span)?,
            Event::UnresolvedAlias(name) => {
                return Err(ParseError::UnknownAnchor {
                    name: name.into_owned(),
                    span,
                })
            }
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }
    Ok(builder.root)
}

fn byte_span(span: &serde_saphyr::granit_parser::Span, text_len: usize) -> Span {
    match span.byte_range() {
        Some(range) => {
            let start = range.start.min(text_len);
            Span::new(start, range.end.min(text_len).saturating_sub(start))
        }
        None => Span::default(),
    }
}

/// YAML 1.2 core schema resolution of a plain scalar.
fn resolve_plain(text: &str) -> NodeValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return NodeValue::Null,
        "true" | "True" | "TRUE" => return NodeValue::Bool(true),
        "false" | "False" | "FALSE" => return NodeValue::Bool(false),
        _ => {}
    }
    let bytes = text.as_bytes();
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let unsigned = bytes
        .strip_prefix(b"-")
        .or_else(|| bytes.strip_prefix(b"+"))
        .unwrap_or(bytes);
    if digits(unsigned) {
        if let Ok(n) = text.trim_start_matches('+').parse::<i64>() {
            return NodeValue::Number(n.into());
        }
        if let Ok(n) = text.trim_start_matches('+').parse::<u64>() {
            return NodeValue::Number(n.into());
        }
    }
    if let Some(hex) = text.strip_prefix("0x") {
        if let Ok(n) = u64::from_str_radix(hex, 16) {
            return NodeValue::Number(n.into());
        }
    }
    if let Some(oct) = text.strip_prefix("0o") {
        if let Ok(n) = u64::from_str_radix(oct, 8) {
            return NodeValue::Number(n.into());
        }
    }
    // Floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let looks_float = {
        let (mantissa, exponent) = match unsigned.iter().position(|b| *b == b'e' || *b == b'E') {
            Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
            None => (unsigned, None),
        };
        let mantissa_ok = match mantissa.iter().position(|b| *b == b'.') {
            Some(i) => {
                let (int, frac) = (&mantissa[..i], &mantissa[i + 1..]);
                (int.is_empty() && digits(frac))
                    || (digits(int) && (frac.is_empty() || digits(frac)))
            }
            None => digits(mantissa),
        };
        let exponent_ok = exponent.is_none_or(|e| {
            digits(
                e.strip_prefix(b"-")
                    .or_else(|| e.strip_prefix(b"+"))
                    .unwrap_or(e),
            )
        });
        mantissa_ok && exponent_ok
    };
    if looks_float {
        if let Some(n) = text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return NodeValue::Number(n);
        }
    }
    NodeValue::String(text.to_owned())
}

struct TreeBuilder {
    limits: Limits,
    /// Open collections with their start span and anchor id; a mapping's pending key is
    /// the last pushed node awaiting its value.
    stack: Vec<(Node, usize, Option<Node>)>,
    anchors: std::collections::HashMap<usize, (Node, usize)>,
    nodes: usize,
    aliases: usize,
    root: Option<Node>,
}

impl TreeBuilder {
    fn count(&mut self, n: usize, span: Span) -> Result<(), ParseError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            return Err(ParseError::TooLarge { span });
        }
        Ok(())
    }

    fn open(&mut self, value: NodeValue, span: Span, anchor: usize) -> Result<(), ParseError> {
        self.count(1, span)?;
        if self.stack.len() >= self.limits.max_depth {
            return Err(ParseError::TooDeep { span });
        }
        self.stack.push((Node { value, span }, anchor, None));
        Ok(())
    }

    fn close(&mut self, end: Span) -> Result<(), ParseError> {
        let Some((mut node, anchor, _)) = self.stack.pop() else {
            return Ok(());
        };
        // Block collections start with an empty span: extend it to the closing event.
        let stop = end.offset.max(node.span.end());
        if node.span.len == 0 {
            node.span = Span::new(node.span.offset, stop.saturating_sub(node.span.offset));
        }
        self.finish(node, anchor)
    }

    fn leaf(&mut self, node: Node, anchor: usize) -> Result<(), ParseError> {
        self.count(1, node.span)?;
        self.finish(node, anchor)
    }

    fn alias(&mut self, id: usize, span: Span) -> Result<(), ParseError> {
        self.aliases += 1;
        if self.aliases > self.limits.max_aliases {
            return Err(ParseError::TooLarge { span });
        }
        let Some(size) = self.anchors.get(&id).map(|(_, size)| *size) else {
            return Err(ParseError::UnknownAnchor {
                name: format!("#{id}"),
                span,
            });
        };
        // Count before cloning: a bomb stops here, before the copy is made.
        self.count(size, span)?;
        let Some(mut copy) = self.anchors.get(&id).map(|(node, _)| node.clone()) else {
            return Ok(());
        };
        copy.span = span;
        self.attach(copy)
    }

    fn finish(&mut self, node: Node, anchor: usize) -> Result<(), ParseError> {
        if anchor != 0 {
            let size = size_of(&node);
            self.anchors.insert(anchor, (node.clone(), size));
        }
        self.attach(node)
    }

    fn attach(&mut self, node: Node) -> Result<(), ParseError> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some((parent, _, pending)) => match &mut parent.value {
                NodeValue::Seq(items) => items.push(node),
                NodeValue::Map(entries) => match pending.take() {
                    Some(key) => entries.push((key, node)),
                    None => *pending = Some(node),
                },
                _ => {}
            },
        }
        Ok(())
    }
}

fn size_of(node: &Node) -> usize {
    1 + match &node.value {
        NodeValue::Seq(items) => items.iter().map(size_of).sum(),
        NodeValue::Map(entries) => entries.iter().map(|(k, v)| size_of(k) + size_of(v)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_nodes: 200_000,
        max_depth: 48,
        max_aliases: 1_000,
    };

    /// Same values and the same scalar spans (collection spans differ by design: the fast
    /// parser extends them to the whole collection).
    fn assert_same(fast: &Node, serde: &Node) {
        match (&fast.value, &serde.value) {
            (NodeValue::Seq(a), NodeValue::Seq(b)) => {
                assert_eq!(a.len(), b.len());
                a.iter().zip(b).for_each(|(x, y)| assert_same(x, y));
            }
            (NodeValue::Map(a), NodeValue::Map(b)) => {
                assert_eq!(a.len(), b.len());
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    assert_same(ka, kb);
                    assert_same(va, vb);
                }
            }
            (a, b) => {
                assert_eq!(a, b);
                assert_eq!(fast.span, serde.span, "{a:?}");
            }
        }
    }

    #[test]
    fn fast_parser_matches_serde_saphyr_on_real_pipelines() {
        for text in [
            include_str!("../../../examples/corpus/task-pipeline.yaml"),
            include_str!("../../../examples/corpus/feature-verification.yaml"),
            include_str!("../../../examples/corpus/decision-routing-example.yaml"),
            "a: [1, -2, 0x1F, 1.5, .5, 1e3, true, ~, null, '', \"q\", !!str 3]\nb: {k: v}\n",
        ] {
            let fast = parse(text, LIMITS).unwrap().unwrap();
            let serde: Node = serde_saphyr::from_str(text).unwrap();
            assert_same(&fast, &serde);
        }
    }

    #[test]
    fn an_alias_copies_its_anchor_and_points_at_the_alias() {
        let node = parse("b: &x {k: v}\nc: *x\n", LIMITS).unwrap().unwrap();
        let NodeValue::Map(entries) = node.value else {
            panic!("not a map")
        };
        assert_eq!(entries[1].1.value, entries[0].1.value);
        assert_eq!(entries[1].1.span, Span::new(16, 2));
    }

    #[test]
    fn stops_alias_bombs_at_the_node_limit() {
        let mut yaml = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, next) in ["a", "b", "c", "d", "e", "f", "g"]
            .windows(2)
            .map(|w| (w[0], w[1]))
        {
            yaml.push_str(&format!(
                "{next}: &{next} [{}]\n",
                vec![format!("*{prev}"); 10].join(", ")
            ));
        }
        assert!(matches!(
            parse(&yaml, LIMITS),
            Err(ParseError::TooLarge { .. })
        ));
    }

    #[test]
    fn stops_deep_nesting_and_second_documents() {
        assert!(matches!(
            parse(&"[".repeat(10_000), LIMITS),
            Err(ParseError::TooDeep { .. })
        ));
        assert!(matches!(
            parse("a: 1\n---\nb: 2\n", LIMITS),
            Err(ParseError::MultipleDocuments { .. })
        ));
        assert!(parse("a: *nope\n", LIMITS).is_err());
    }

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
        assert_eq!(keys[3].1, Span::new(23, 1));
        assert_eq!(entries[1].1.span, Span::new(8, 5));
        assert_eq!(entries[1].1.value, NodeValue::String("x y".into()));
        assert_eq!(entries[3].1.value, NodeValue::Number(2.into()));
    }
}
