//! Text → node tree, straight from the parser's events, under limits: nesting depth, node
//! count including alias expansions, alias count. An alias bomb or a 100,000-deep `[[[…`
//! stops at the limit, before the memory is spent.

use std::collections::HashMap;

use super::{Node, NodeValue, ParseError};
use crate::source::Span;

/// Limits on what one parse may build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Most nodes, alias expansions included (an alias bomb hits this).
    pub(crate) max_nodes: usize,
    /// Deepest nesting of lists and mappings.
    pub(crate) max_depth: usize,
    /// Most aliases.
    pub(crate) max_aliases: usize,
}

/// Parse one YAML document into a node tree, straight from the parser's events (three
/// times faster than going through serde), enforcing `limits` as it goes: nesting depth,
/// node count including alias expansions, alias count. Plain scalars resolve by the YAML
/// 1.2 core schema (null, booleans, integers, floats); quoted and block scalars are
/// strings. Merge keys (`<<`) are ordinary keys here (configuration resolves them after).
pub(crate) fn parse(text: &str, limits: Limits) -> Result<Option<Node>, ParseError> {
    use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};
    let mut options = serde_saphyr::granit_parser::Options::default();
    options.flow_nesting_limit = limits.max_depth + 2;
    options.block_nesting_limit = limits.max_depth + 2;
    let parser = Parser::new_from_str_with_options(text, options);
    let mut builder = TreeBuilder {
        limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
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
                let value = if style == ScalarStyle::Plain && !is_str_tag {
                    super::core_schema::resolve_plain(&value)
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

struct TreeBuilder {
    limits: Limits,
    /// Open collections with their start span and anchor id; a mapping's pending key is
    /// the last pushed node awaiting its value.
    stack: Vec<(Node, usize, Option<Node>)>,
    anchors: HashMap<usize, (Node, usize)>,
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

    fn to_json(node: &Node) -> serde_json::Value {
        use serde_json::Value;
        match &node.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Number(n) => Value::Number(n.clone()),
            NodeValue::String(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
            NodeValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .filter_map(|(k, v)| Some((k.key_text()?, to_json(v))))
                    .collect(),
            ),
        }
    }

    /// Every single-line plain scalar's span is exactly its text in the source.
    fn assert_plain_spans(node: &Node, text: &str) {
        match &node.value {
            NodeValue::Seq(items) => items.iter().for_each(|i| assert_plain_spans(i, text)),
            NodeValue::Map(entries) => entries.iter().for_each(|(k, v)| {
                assert_plain_spans(k, text);
                assert_plain_spans(v, text);
            }),
            NodeValue::String(s) => {
                let slice = &text[node.span.offset..node.span.end()];
                let plain = !slice.starts_with(['"', '\'', '|', '>', '!', '*']);
                if plain && !slice.contains('\n') {
                    assert_eq!(slice, s, "at {:?}", node.span);
                }
            }
            _ => assert!(node.span.end() <= text.len()),
        }
    }

    #[test]
    fn reads_real_pipelines_as_serde_saphyr_does_with_exact_scalar_spans() {
        for text in [
            include_str!("../../../examples/corpus/task-pipeline.yaml"),
            include_str!("../../../examples/corpus/feature-verification.yaml"),
            include_str!("../../../examples/corpus/decision-routing-example.yaml"),
            "a: [1, -2, 0x1F, 1.5, .5, 1e3, true, ~, null, '', \"q\", !!str 3]\nb: {k: v}\n",
        ] {
            let node = parse(text, LIMITS).unwrap().unwrap();
            let serde: serde_json::Value = serde_saphyr::from_str(text).unwrap();
            assert_eq!(to_json(&node), serde);
            assert_plain_spans(&node, text);
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
        let node = parse(text, LIMITS).unwrap().unwrap();
        let NodeValue::Map(entries) = &node.value else {
            panic!("not a map")
        };
        let keys: Vec<(Option<String>, Span)> = entries
            .iter()
            .map(|(k, _)| (k.key_text(), k.span))
            .collect();
        assert_eq!(keys.len(), 4);
        assert_eq!(keys[3], (Some("a".into()), Span::new(23, 1)));
        assert_eq!(entries[1].1.span, Span::new(8, 5));
        assert_eq!(entries[1].1.value, NodeValue::String("x y".into()));
        assert_eq!(entries[3].1.value, NodeValue::Number(2.into()));
        // A block list starts at its first dash.
        assert_eq!(entries[2].1.extent().offset, 19);
    }
}
