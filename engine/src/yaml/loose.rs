//! Scalars read leniently, as `.spur/config.yaml` has always been read: a string may be
//! written as a number or a boolean (`args: [--jobs, 4]`), a flag as `yes`/`no`/`on`/`off`
//! in any quoting, a count quoted or with underscores (`"5"`, `60_000`, `0x10`).
//! Pipelines are typed strictly and do not use these.

use crate::diagnostic::Diagnostic;
use crate::yaml::{FromNode, Loader, Node, NodeValue};

/// A value read leniently (see the module).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loose<T>(pub(crate) T);

impl FromNode for Loose<String> {
    const EXPECTED: &'static str = "a string";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        match &node.value {
            NodeValue::String(s) => Some(Loose(s.clone())),
            NodeValue::Number(_) | NodeValue::Bool(_) => Some(Loose(scalar_text(cx, node)?)),
            _ => {
                cx.wrong_type(node, what, Self::EXPECTED);
                None
            }
        }
    }
}

impl FromNode for Loose<bool> {
    const EXPECTED: &'static str = "`true` or `false`";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let flag = match &node.value {
            NodeValue::Bool(b) => Some(*b),
            NodeValue::String(s) => yes_no(s),
            _ => None,
        };
        if flag.is_none() {
            not_a(cx, node, what, Self::EXPECTED);
        }
        flag.map(Loose)
    }
}

impl FromNode for Loose<u64> {
    const EXPECTED: &'static str = "a whole number of 0 or more";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let count = match &node.value {
            NodeValue::Number(n) => n.as_u64(),
            NodeValue::String(s) => unsigned(s),
            _ => None,
        };
        if count.is_none() {
            not_a(cx, node, what, Self::EXPECTED);
        }
        count.map(Loose)
    }
}

/// The text of a number or boolean as written (`1.50` stays `1.50`); through an alias,
/// whose span is the alias, the value's own spelling.
fn scalar_text(cx: &Loader<'_>, node: &Node) -> Option<String> {
    let written = cx
        .source
        .text()
        .get(node.span.offset..node.span.end())
        .filter(|t| !t.is_empty() && !t.starts_with(['*', '!']));
    written.map(str::to_owned).or_else(|| node.key_text())
}

/// A scalar of the right kind whose text is not a value of it says what it found.
fn not_a(cx: &mut Loader<'_>, node: &Node, what: &str, expected: &str) {
    let shown = match &node.value {
        NodeValue::String(s) => Some(format!("{s:?}")),
        NodeValue::Number(_) | NodeValue::Bool(_) => scalar_text(cx, node),
        _ => None,
    };
    let Some(shown) = shown else {
        cx.wrong_type(node, what, expected);
        return;
    };
    let d = Diagnostic::error(
        cx.codes.wrong_type,
        cx.source,
        node.pointed(),
        format!("{what} must be {expected}, not {shown}"),
    )
    .label(format!("expected {expected}"));
    cx.push(d);
}

/// YAML 1.1 booleans, in any case: true/yes/y/on and false/no/n/off.
fn yes_no(text: &str) -> Option<bool> {
    let t = trim(text);
    let is = |words: [&str; 4]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if is(["true", "yes", "y", "on"]) {
        Some(true)
    } else if is(["false", "no", "n", "off"]) {
        Some(false)
    } else {
        None
    }
}

/// An unsigned integer: decimal with no leading zero, or `0x`/`0o`/`0b`; `_` may separate
/// digits; a leading `+` is allowed.
fn unsigned(text: &str) -> Option<u64> {
    let t = trim(text);
    let t = t.strip_prefix('+').unwrap_or(t);
    let prefixed =
        |lower: &str, upper: &str| t.strip_prefix(lower).or_else(|| t.strip_prefix(upper));
    let (radix, digits) = if let Some(d) = prefixed("0x", "0X") {
        (16, d)
    } else if let Some(d) = prefixed("0o", "0O") {
        (8, d)
    } else if let Some(d) = prefixed("0b", "0B") {
        (2, d)
    } else if t.len() > 1 && t.starts_with('0') {
        return None;
    } else {
        (10, t)
    };
    let bytes = digits.as_bytes();
    let mut value: u64 = 0;
    let mut seen = false;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let between = i > 0
                && bytes.get(i - 1).is_some_and(|p| *p != b'_')
                && bytes.get(i + 1).is_some_and(|n| *n != b'_');
            if !between {
                return None;
            }
            continue;
        }
        let digit = char::from(*b).to_digit(radix)?;
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(digit))?;
        seen = true;
    }
    seen.then_some(value)
}

/// The padding a scalar may carry around its value.
fn trim(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::source::SourceFile;
    use crate::yaml::{parse, Codes, Limits};

    /// Read the value of key `x` of a one-line-per-key mapping.
    fn read<T>(text: &str) -> (Option<T>, Vec<String>)
    where
        Loose<T>: FromNode,
    {
        let source = SourceFile::new("c.yaml", text.to_owned());
        let limits = Limits {
            max_nodes: 100,
            max_depth: 8,
            max_aliases: 8,
        };
        let codes = Codes {
            wrong_type: Code::CheckWrongType,
            missing_key: Code::CheckMissingKey,
            unknown_key: Code::CheckUnknownKey,
            duplicate_key: Code::CheckDuplicateKey,
        };
        let root = parse(text, limits).unwrap().unwrap();
        let NodeValue::Map(entries) = &root.value else {
            panic!("not a map")
        };
        let (_, x) = entries
            .iter()
            .find(|(k, _)| k.key_text().as_deref() == Some("x"))
            .unwrap();
        let mut cx = Loader::new(&source, codes);
        let value = cx.read::<Loose<T>>(x, "`x`").map(|l| l.0);
        let messages = cx.diagnostics.iter().map(|d| d.message.clone()).collect();
        (value, messages)
    }

    #[test]
    fn a_string_may_be_written_as_any_scalar_and_keeps_its_spelling() {
        for (text, want) in [
            ("x: make", "make"),
            ("x: 4", "4"),
            ("x: 1.50", "1.50"),
            ("x: True", "True"),
            ("x: 0x10", "0x10"),
            ("a: &n 7\nx: *n", "7"),
        ] {
            assert_eq!(read::<String>(text).0.as_deref(), Some(want), "{text}");
        }
        assert_eq!(
            read::<String>("x: ~").1,
            ["`x` must be a string, found null"]
        );
    }

    #[test]
    fn flags_and_counts_take_the_usual_spellings() {
        for (text, want) in [
            ("yes", true),
            ("\"off\"", false),
            ("Y", true),
            ("false", false),
        ] {
            assert_eq!(read::<bool>(&format!("x: {text}")).0, Some(want), "{text}");
        }
        assert_eq!(
            read::<bool>("x: 1").1,
            ["`x` must be `true` or `false`, not 1"]
        );
        for (text, want) in [
            ("5", 5),
            ("\"5\"", 5),
            ("60_000", 60_000),
            ("0x10", 16),
            ("0b11", 3),
            ("+7", 7),
        ] {
            assert_eq!(read::<u64>(&format!("x: {text}")).0, Some(want), "{text}");
        }
        for text in [
            "-1",
            "1.5",
            "1e3",
            "abc",
            "99999999999999999999999",
            "1__0",
            "_1",
            "\"007\"",
            "[]",
        ] {
            assert_eq!(read::<u64>(&format!("x: {text}")).0, None, "{text}");
        }
        assert_eq!(
            read::<u64>("x: abc").1,
            ["`x` must be a whole number of 0 or more, not \"abc\""]
        );
    }
}
