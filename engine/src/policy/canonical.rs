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
    diff(old, new, "", &mut found);
    found
}

fn diff(old: &Value, new: &Value, path: &str, found: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, value) in old {
                match new.get(key) {
                    None => found.push(format!("{} removed", at(key))),
                    Some(other) => diff(value, other, &at(key), found),
                }
            }
            for key in new.keys().filter(|k| !old.contains_key(*k)) {
                found.push(format!("{} added", at(key)));
            }
        }
        _ if old == new => {}
        _ => found.push(format!(
            "{} changed",
            if path.is_empty() { "the policy" } else { path }
        )),
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
}
