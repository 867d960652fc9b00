//! The `verify:` section as written: every value with its span, read through the YAML
//! typer (which reports wrong types and unknown or repeated keys), nothing checked yet.

use std::collections::HashMap;

use crate::source::{Located, SourceFile, Span};
use crate::yaml::{Fields, FromNode, Loader, Loose, Node, NodeValue, UnknownKeys};

const VERIFY_KEYS: &[&str] = &["gates", "parallelism"];
const GATE_KEYS: &[&str] = &[
    "command",
    "executable",
    "args",
    "needs",
    "timeoutMs",
    "readOnly",
    "severity",
    "enabled",
    "expectFile",
    "findingsFile",
];

/// `verify:` as written, each value with its span.
pub(super) struct RawVerify {
    pub(crate) parallelism: Option<Located<u64>>,
    /// Gate names in file order (a repeated name is reported and left out), with the
    /// gate, or `None` when its fields did not read.
    pub(crate) gates: Vec<(Located<String>, Option<RawGate>)>,
}

impl RawVerify {
    /// `None` when the file has no `verify:` (or it is null), or it is not a mapping.
    pub(super) fn read(cx: &mut Loader<'_>, root: &Node) -> Option<Self> {
        let top = cx.fields_with(
            root,
            "the configuration file",
            &["verify"],
            UnknownKeys::Ignore,
        )?;
        let verify = top.get("verify").filter(|n| n.value != NodeValue::Null)?;
        let fields = cx.fields(verify, "`verify`", VERIFY_KEYS)?;
        let parallelism = fields
            .get("parallelism")
            .and_then(|n| cx.read::<Option<Located<Loose<u64>>>>(n, "`verify.parallelism`"))
            .flatten()
            .map(unloose);
        let gates = fields
            .get("gates")
            .map(|n| read_gates(cx, n))
            .unwrap_or_default();
        Some(Self { parallelism, gates })
    }
}

fn read_gates(cx: &mut Loader<'_>, node: &Node) -> Vec<(Located<String>, Option<RawGate>)> {
    let entries = match &node.value {
        NodeValue::Map(entries) => entries,
        NodeValue::Null => return Vec::new(),
        _ => {
            cx.wrong_type(node, "`verify.gates`", "a mapping of gate name to gate");
            return Vec::new();
        }
    };
    let mut first: HashMap<String, Span> = HashMap::new();
    let mut gates = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let Some(Loose(name)) = cx.read::<Loose<String>>(key, "a gate name") else {
            continue;
        };
        if let Some(first) = first.get(&name) {
            cx.duplicate_key(key.span, &name, "`verify.gates`", *first);
            continue;
        }
        first.insert(name.clone(), key.span);
        let gate = RawGate::read(cx, value, &name);
        gates.push((Located::new(name, key.span), gate));
    }
    gates
}

/// One gate as written; a field left out is `None`.
#[derive(Default)]
pub(super) struct RawGate {
    pub(crate) command: Option<Located<String>>,
    pub(crate) executable: Option<Located<String>>,
    /// With where the list opens.
    pub(crate) args: Option<(Span, Vec<String>)>,
    pub(crate) needs: Option<(Span, Vec<Located<String>>)>,
    pub(crate) timeout_ms: Option<Located<u64>>,
    pub(crate) read_only: Option<bool>,
    pub(crate) severity: Option<Located<String>>,
    pub(crate) enabled: Option<bool>,
    pub(crate) expect_file: Option<Located<String>>,
    pub(crate) findings_file: Option<Located<String>>,
}

impl RawGate {
    /// `None` when something in it is reported (a null gate is all defaults).
    fn read(cx: &mut Loader<'_>, node: &Node, name: &str) -> Option<Self> {
        if node.value == NodeValue::Null {
            return Some(Self::default());
        }
        let before = cx.diagnostics.len();
        let what = format!("gate `{name}`");
        let fields = cx.fields(node, &what, GATE_KEYS)?;
        let text = |cx: &mut Loader<'_>, key| {
            field::<Located<Loose<String>>>(cx, &fields, key, &what).map(unloose)
        };
        let flag =
            |cx: &mut Loader<'_>, key| field::<Loose<bool>>(cx, &fields, key, &what).map(|f| f.0);
        let gate = Self {
            command: text(cx, "command"),
            executable: text(cx, "executable"),
            args: list(cx, &fields, "args", &what)
                .map(|(span, args)| (span, args.into_iter().map(|a| a.value).collect())),
            needs: list(cx, &fields, "needs", &what),
            timeout_ms: field::<Located<Loose<u64>>>(cx, &fields, "timeoutMs", &what).map(unloose),
            read_only: flag(cx, "readOnly"),
            severity: text(cx, "severity"),
            enabled: flag(cx, "enabled"),
            expect_file: text(cx, "expectFile"),
            findings_file: text(cx, "findingsFile"),
        };
        (cx.diagnostics.len() == before).then_some(gate)
    }
}

/// Field `key` of `what`; `None` when absent, null or reported.
fn field<T: FromNode>(
    cx: &mut Loader<'_>,
    fields: &Fields<'_>,
    key: &str,
    what: &str,
) -> Option<T> {
    cx.field::<Option<T>>(fields, key, what).flatten()
}

/// A list of strings with where it opens; `None` when absent, null or not a list.
fn list(
    cx: &mut Loader<'_>,
    fields: &Fields<'_>,
    key: &str,
    what: &str,
) -> Option<(Span, Vec<Located<String>>)> {
    let node = fields.get(key).filter(|n| n.value != NodeValue::Null)?;
    let items = cx.read::<Vec<Located<Loose<String>>>>(node, &format!("`{key}` of {what}"))?;
    Some((
        opening(cx.source, node),
        items.into_iter().map(unloose).collect(),
    ))
}

/// Where a list opens, for a diagnostic about the list as a whole: its `[`, or (empty)
/// the first `-` of a block list, rather than every line of the block.
fn opening(source: &SourceFile, node: &Node) -> Span {
    let block = source
        .text()
        .get(node.span.offset..)
        .is_some_and(|t| t.starts_with('-'));
    if block {
        Span::new(node.span.offset, 0)
    } else {
        node.span
    }
}

fn unloose<T>(value: Located<Loose<T>>) -> Located<T> {
    Located::new(value.value.0, value.span)
}
