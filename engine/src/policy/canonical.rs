//! The canonical form of a policy: the `verify` and `doneGate` sections of a config's YAML
//! tree (anchors, aliases and merge keys resolved by the YAML reader) written as compact
//! JSON, mapping entries in the order of the file. Comments, quoting style, layout and the
//! other sections do not change it; every value the gate and verify read does. JSON is
//! YAML, so the canonical text reads back through the same config reader.

use serde_json::Value;

use crate::yaml::{Node, NodeValue};

/// The top-level sections that make the policy, in the order the canonical form has them.
pub(crate) const SECTIONS: [&str; 2] = ["verify", "doneGate"];

/// The canonical text of the policy of a config whose YAML root is `root` (`None`: an
/// empty file). A root that is not a mapping has no policy sections: `{}`.
pub(crate) fn canonical_text(root: Option<&Node>) -> String {
    let mut out = String::from("{");
    if let Some(NodeValue::Map(entries)) = root.map(|r| &r.value) {
        let mut first = true;
        for section in SECTIONS {
            for (key, value) in entries {
                if key.key_text().as_deref() != Some(section) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                push_string(&mut out, section);
                out.push(':');
                push_node(&mut out, value);
            }
        }
    }
    out.push('}');
    out
}

fn push_string(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned()));
}

fn push_node(out: &mut String, node: &Node) {
    match &node.value {
        NodeValue::Null => out.push_str("null"),
        NodeValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        NodeValue::Number(n) => out.push_str(&n.to_string()),
        NodeValue::String(s) => push_string(out, s),
        NodeValue::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_node(out, item);
            }
            out.push(']');
        }
        NodeValue::Map(entries) => {
            out.push('{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let name = key.key_text().unwrap_or_else(|| {
                    let mut inner = String::new();
                    push_node(&mut inner, key);
                    inner
                });
                push_string(out, &name);
                out.push(':');
                push_node(out, value);
            }
            out.push('}');
        }
    }
}

/// What differs between two policies, key by key: `verify.gates.tests removed`,
/// `doneGate.fingerprintExclude added`, `verify.gates.lint.command changed`. Empty when
/// only the order of keys differs.
pub(crate) fn changes(old: &Value, new: &Value) -> Vec<String> {
    let mut found = Vec::new();
    diff(old, new, "", Detail::Names, &mut found);
    found
}

/// [`changes`] for a person reviewing them, with the values: `verify.gates: 2 gates → 1
/// (removed: lint)`, `doneGate.fingerprintExclude added: **`,
/// `doneGate.externalVerdicts: deny → allow`.
pub(crate) fn described_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut found = Vec::new();
    diff(old, new, "", Detail::Values, &mut found);
    found
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Detail {
    Names,
    Values,
}

/// The map of gates, whose count a reviewer reads first.
const GATES: &str = "verify.gates";

/// The most characters of a value a described change shows.
const MAX_SHOWN: usize = 80;

fn diff(old: &Value, new: &Value, path: &str, detail: Detail, found: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let removed: Vec<&String> = old.keys().filter(|k| !new.contains_key(*k)).collect();
            let added: Vec<&String> = new.keys().filter(|k| !old.contains_key(*k)).collect();
            let counted = detail == Detail::Values
                && path == GATES
                && !(removed.is_empty() && added.is_empty());
            if counted {
                found.push(gate_count(old.len(), new.len(), &removed, &added));
            }
            for (key, value) in old {
                match new.get(key) {
                    None if counted => {}
                    None if detail == Detail::Values => {
                        for (path, value) in leaves(value, &at(key)) {
                            found.push(format!("{path} removed (was {})", shown(value)));
                        }
                    }
                    None => found.push(format!("{} removed", at(key))),
                    Some(other) => diff(value, other, &at(key), detail, found),
                }
            }
            for key in added.into_iter().filter(|_| !counted) {
                match (detail, new.get(key)) {
                    (Detail::Values, Some(value)) => {
                        for (path, value) in leaves(value, &at(key)) {
                            found.push(format!("{path} added: {}", shown(value)));
                        }
                    }
                    _ => found.push(format!("{} added", at(key))),
                }
            }
        }
        _ if old == new => {}
        _ => {
            let name = if path.is_empty() { "the policy" } else { path };
            found.push(match detail {
                Detail::Names => format!("{name} changed"),
                Detail::Values => format!("{name}: {} → {}", shown(old), shown(new)),
            });
        }
    }
}

/// Every value of a policy on a line of its own, for a person: `verify.gates.tests.command:
/// cargo test`, `doneGate.fingerprintExclude: *.log, target/**`; an empty mapping as `{}`.
pub(crate) fn fields(value: &Value) -> Vec<String> {
    leaves(value, "")
        .into_iter()
        .filter(|(path, _)| !path.is_empty())
        .map(|(path, value)| format!("{path}: {}", shown(value)))
        .collect()
}

/// The values of `value` under `path` that are not non-empty mappings, each with its path.
fn leaves<'a>(value: &'a Value, path: &str) -> Vec<(String, &'a Value)> {
    match value {
        Value::Object(entries) if !entries.is_empty() => entries
            .iter()
            .flat_map(|(key, inner)| {
                let at = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                leaves(inner, &at)
            })
            .collect(),
        _ => vec![(path.to_owned(), value)],
    }
}

/// `verify.gates: 3 gates → 0 (removed: build, lint, tests)`.
fn gate_count(old: usize, new: usize, removed: &[&String], added: &[&String]) -> String {
    let plural = |n: usize| if n == 1 { "gate" } else { "gates" };
    let mut which = Vec::new();
    if !removed.is_empty() {
        which.push(format!("removed: {}", join(removed)));
    }
    if !added.is_empty() {
        which.push(format!("added: {}", join(added)));
    }
    format!(
        "{GATES}: {old} {} → {new} ({})",
        plural(old),
        which.join("; ")
    )
}

fn join(keys: &[&String]) -> String {
    keys.iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as a reviewer reads it: a string bare, a list of strings as its items, anything
/// else as compact JSON; cut at [`MAX_SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    };
    match text.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or_default()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_config;

    fn canonical(yaml: &str) -> String {
        canonical_text(parse_config(yaml).unwrap().as_ref())
    }

    #[test]
    fn only_the_policy_sections_in_file_order_without_style_or_comments() {
        let a = canonical(
            "agents: {a: x}\ndoneGate:\n  externalVerdicts: allow # yes\nverify:\n  gates:\n    tests: {command: 'cargo test', timeoutMs: 60000}\n    lint:\n",
        );
        assert_eq!(
            a,
            r#"{"verify":{"gates":{"tests":{"command":"cargo test","timeoutMs":60000},"lint":null}},"doneGate":{"externalVerdicts":"allow"}}"#
        );
        let b = canonical(
            "verify: {gates: {tests: {command: \"cargo test\", timeoutMs: 60000}, lint: ~}}\ndoneGate: {externalVerdicts: allow}\nagents: {b: y}\n",
        );
        assert_eq!(a, b);
        assert_eq!(canonical(""), "{}");
        // A scalar keeps its YAML type: `60_000` is a string the reader converts.
        assert!(canonical("verify: {gates: {t: {timeoutMs: 60_000}}}").contains(r#""60_000""#));
        assert_eq!(canonical("agents: {}\n"), "{}");
        // Merge keys are resolved.
        assert_eq!(
            canonical("d: &d {timeoutMs: 5}\nverify: {gates: {t: {<<: *d, command: x}}}\n"),
            r#"{"verify":{"gates":{"t":{"timeoutMs":5,"command":"x"}}}}"#
        );
    }

    #[test]
    fn the_canonical_text_reads_back_as_the_same_policy() {
        let text = canonical(
            "verify:\n  parallelism: 2\n  gates:\n    build: {command: make}\n    tests: {command: 'make \"test\"', needs: [build], readOnly: yes}\ndoneGate:\n  fingerprintExclude: ['*.log']\n",
        );
        assert_eq!(canonical(&text), text);
    }

    #[test]
    fn changes_name_each_key() {
        let old: Value = serde_json::from_str(
            r#"{"verify":{"gates":{"tests":{"command":"t"},"lint":{"command":"l"}}}}"#,
        )
        .unwrap();
        let new: Value = serde_json::from_str(
            r#"{"verify":{"gates":{"lint":{"command":"L"}}},"doneGate":{"fingerprintExclude":["**"]}}"#,
        )
        .unwrap();
        assert_eq!(
            changes(&old, &new),
            [
                "verify.gates.lint.command changed",
                "verify.gates.tests removed",
                "doneGate added"
            ]
        );
        assert!(changes(&old, &old).is_empty());
    }

    #[test]
    fn described_changes_show_the_values_and_count_the_gates() {
        let old: Value = serde_json::from_str(
            r#"{"verify":{"gates":{"tests":{"command":"t"},"lint":{"command":"l"},"build":{"command":"b"}}},"doneGate":{"externalVerdicts":"deny"}}"#,
        )
        .unwrap();
        let new: Value = serde_json::from_str(
            r#"{"verify":{"gates":{}},"doneGate":{"externalVerdicts":"allow","fingerprintExclude":["**"]}}"#,
        )
        .unwrap();
        assert_eq!(
            described_changes(&old, &new),
            [
                "doneGate.externalVerdicts: deny → allow",
                "doneGate.fingerprintExclude added: **",
                "verify.gates: 3 gates → 0 (removed: build, lint, tests)",
            ]
        );
        let gone: Value = serde_json::from_str(r#"{}"#).unwrap();
        let long = "x".repeat(100);
        let one: Value = serde_json::from_str(&format!(
            r#"{{"verify":{{"gates":{{"t":{{"command":"{long}"}}}}}}}}"#
        ))
        .unwrap();
        let described = described_changes(&one, &gone);
        assert_eq!(described.len(), 1, "{described:?}");
        assert!(
            described[0].starts_with("verify.gates.t.command removed (was xxx"),
            "{described:?}"
        );
        assert!(described[0].ends_with("…)"), "{described:?}");
        assert_eq!(
            fields(&new),
            [
                "doneGate.externalVerdicts: allow",
                "doneGate.fingerprintExclude: **",
                "verify.gates: {}"
            ]
        );
        assert!(fields(&gone).is_empty());
        assert_eq!(
            described_changes(&gone, &one)[0].chars().count(),
            "verify.gates.t.command added: ".chars().count() + MAX_SHOWN + 1
        );
    }
}
