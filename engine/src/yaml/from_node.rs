//! Typing the node tree: [`FromNode`] reads one value from a node and reports, rather than
//! returns, what is wrong with it, so one pass over a file collects every finding. The
//! [`Loader`] holds the source, the codes its file reports under, and the findings so far.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{Located, SourceFile};
use crate::yaml::{Node, NodeValue};

/// The codes a kind of file reports its generic findings under (each file has its own
/// namespace: `spur::check::…` for pipelines, `spur::verify::…` for the verify config).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Codes {
    /// A value of the wrong type.
    pub(crate) wrong_type: Code,
    /// A required key that is not there.
    pub(crate) missing_key: Code,
    /// A key the reader does not know (or one that is not a string).
    pub(crate) unknown_key: Code,
    /// A key written twice in one mapping.
    pub(crate) duplicate_key: Code,
}

/// One load in progress: the text being read and what was found wrong with it so far.
pub(crate) struct Loader<'s> {
    pub(crate) source: &'s SourceFile,
    pub(crate) codes: Codes,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl<'s> Loader<'s> {
    pub(crate) fn new(source: &'s SourceFile, codes: Codes) -> Self {
        Self {
            source,
            codes,
            diagnostics: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// `{what} must be {expected}, found {type}`, pointing at the whole node.
    pub(crate) fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        let d = Diagnostic::error(
            self.codes.wrong_type,
            self.source,
            node.pointed(),
            format!(
                "{what} must be {expected}, found {}",
                node.value.type_name()
            ),
        )
        .label(format!("expected {expected}"));
        self.push(d);
    }

    /// Read `node` as a `T`; `what` names it in messages ("`pause` of state `a`").
    pub(crate) fn read<T: FromNode>(&mut self, node: &Node, what: &str) -> Option<T> {
        T::from_node(self, node, what)
    }

    /// The items of a list node, each read by `item` (with its index); null is the empty
    /// list, anything else is reported as not `expected`.
    pub(crate) fn items<T>(
        &mut self,
        node: &Node,
        what: &str,
        expected: &str,
        mut item: impl FnMut(&mut Self, &Node, usize) -> Option<T>,
    ) -> Option<Vec<T>> {
        match &node.value {
            NodeValue::Seq(items) => Some(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| item(self, n, i))
                    .collect(),
            ),
            NodeValue::Null => Some(Vec::new()),
            _ => {
                self.wrong_type(node, what, expected);
                None
            }
        }
    }
}

/// A value the loader reads from one node. `None` means the problem was reported.
pub(crate) trait FromNode: Sized {
    /// What a node must be to hold this value, for "… must be X, found Y".
    const EXPECTED: &'static str;
    /// The same for a list of these values.
    const LIST_EXPECTED: &'static str = "a list";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self>;
}

impl FromNode for String {
    const EXPECTED: &'static str = "a string";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        match &node.value {
            NodeValue::String(s) => Some(s.clone()),
            _ => {
                cx.wrong_type(node, what, Self::EXPECTED);
                None
            }
        }
    }
}

impl FromNode for bool {
    const EXPECTED: &'static str = "`true` or `false`";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        match &node.value {
            NodeValue::Bool(b) => Some(*b),
            _ => {
                cx.wrong_type(node, what, Self::EXPECTED);
                None
            }
        }
    }
}

/// Null reads as `None`.
impl<T: FromNode> FromNode for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        match node.value {
            NodeValue::Null => Some(None),
            _ => T::from_node(cx, node, what).map(Some),
        }
    }
}

/// The value with the span of its node.
impl<T: FromNode> FromNode for Located<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    const LIST_EXPECTED: &'static str = T::LIST_EXPECTED;

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        T::from_node(cx, node, what).map(|value| Located::new(value, node.span))
    }
}

/// A list (null is empty); items that do not read are reported and left out.
impl<T: FromNode> FromNode for Vec<T> {
    const EXPECTED: &'static str = T::LIST_EXPECTED;

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let item_what = format!("an item of {what}");
        cx.items(node, what, Self::EXPECTED, |cx, item, _| {
            T::from_node(cx, item, &item_what)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse, Limits};

    const CODES: Codes = Codes {
        wrong_type: Code::CheckWrongType,
        missing_key: Code::CheckMissingKey,
        unknown_key: Code::CheckUnknownKey,
        duplicate_key: Code::CheckDuplicateKey,
    };

    fn read<T: FromNode>(text: &str) -> (Option<T>, Vec<String>) {
        let source = SourceFile::new("t.yaml", text.to_owned());
        let limits = Limits {
            max_nodes: 100,
            max_depth: 8,
            max_aliases: 8,
        };
        let node = parse(text, limits).unwrap().unwrap();
        let mut cx = Loader::new(&source, CODES);
        let value = cx.read::<T>(&node, "`x`");
        let messages = cx.diagnostics.iter().map(|d| d.message.clone()).collect();
        (value, messages)
    }

    #[test]
    fn reads_values_and_reports_the_wrong_type_with_what_was_found() {
        assert_eq!(read::<String>("abc").0.as_deref(), Some("abc"));
        assert_eq!(
            read::<bool>("3").1,
            ["`x` must be `true` or `false`, found a number"]
        );
        assert_eq!(read::<Option<bool>>("~").0, Some(None));
        let (located, _) = read::<Located<String>>("  abc");
        assert_eq!(located.unwrap().span.offset, 2);
    }

    #[test]
    fn a_list_keeps_the_items_that_read_and_reports_the_others() {
        let (items, messages) = read::<Vec<String>>("[a, 1, b]");
        assert_eq!(items.unwrap(), ["a", "b"]);
        assert_eq!(
            messages,
            ["an item of `x` must be a string, found a number"]
        );
        assert_eq!(read::<Vec<String>>("~").0.unwrap(), Vec::<String>::new());
        assert_eq!(
            read::<Vec<String>>("a").1,
            ["`x` must be a list, found a string"]
        );
    }
}
