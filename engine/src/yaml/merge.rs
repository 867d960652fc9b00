//! Merge keys: `<<: *defaults` (or `<<: [*a, *b]`) brings the entries of the merged
//! mappings into the mapping that names them, except the keys it writes itself; among
//! several merged mappings the first wins. Configuration is read with them resolved;
//! pipelines are not (there `<<` is an ordinary, unknown key).

use std::collections::HashSet;

use crate::yaml::{Node, NodeValue};

/// Resolve every merge key in the tree, innermost first. A `<<` whose value is not a
/// mapping or a list of mappings stays an ordinary key, for the reader to report.
pub(crate) fn resolve_merge_keys(node: &mut Node) {
    match &mut node.value {
        NodeValue::Seq(items) => items.iter_mut().for_each(resolve_merge_keys),
        NodeValue::Map(entries) => {
            for (_, value) in entries.iter_mut() {
                resolve_merge_keys(value);
            }
            if entries.iter().any(|(k, v)| is_merge(k, v)) {
                *entries = merged(std::mem::take(entries));
            }
        }
        _ => {}
    }
}

fn merged(entries: Vec<(Node, Node)>) -> Vec<(Node, Node)> {
    let mut taken: HashSet<String> = entries
        .iter()
        .filter(|(k, v)| !is_merge(k, v))
        .filter_map(|(k, _)| k.key_text())
        .collect();
    let mut out = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        if !is_merge(&key, &value) {
            out.push((key, value));
            continue;
        }
        let sources = match value.value {
            NodeValue::Map(inner) => vec![inner],
            NodeValue::Seq(items) => items
                .into_iter()
                .filter_map(|item| match item.value {
                    NodeValue::Map(inner) => Some(inner),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for (inner_key, inner_value) in sources.into_iter().flatten() {
            let fresh = inner_key.key_text().is_some_and(|k| taken.insert(k));
            if fresh {
                out.push((inner_key, inner_value));
            }
        }
    }
    out
}

/// `<<` with a mapping or a list of only mappings.
fn is_merge(key: &Node, value: &Node) -> bool {
    matches!(&key.value, NodeValue::String(k) if k == "<<")
        && match &value.value {
            NodeValue::Map(_) => true,
            NodeValue::Seq(items) => items.iter().all(|i| matches!(i.value, NodeValue::Map(_))),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse, Limits};

    fn keys_and_values(text: &str) -> Vec<(String, String)> {
        let limits = Limits {
            max_nodes: 1_000,
            max_depth: 8,
            max_aliases: 8,
        };
        let mut root = parse(text, limits).unwrap().unwrap();
        resolve_merge_keys(&mut root);
        let NodeValue::Map(entries) = root.value else {
            panic!("not a map")
        };
        let Some((_, target)) = entries.into_iter().last() else {
            panic!("empty")
        };
        let NodeValue::Map(entries) = target.value else {
            panic!("not a map")
        };
        entries
            .iter()
            .map(|(k, v)| (k.key_text().unwrap(), v.key_text().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn merged_entries_join_where_the_key_is_and_written_keys_win() {
        let pairs = keys_and_values("a: &a {x: 1, y: 2}\nt: {y: 9, <<: *a, z: 3}\n");
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(pairs, [("y", "9"), ("x", "1"), ("z", "3")]);
    }

    #[test]
    fn the_first_of_several_merged_mappings_wins_and_nested_merges_resolve() {
        let text = "a: &a {x: 1}\nb: &b {<<: *a, x: 2, w: 4}\nt: {<<: [*b, *a]}\n";
        let pairs = keys_and_values(text);
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(pairs, [("x", "2"), ("w", "4")]);
        let plain = keys_and_values("t: {<<: 5}\n");
        assert_eq!(plain, [("<<".to_owned(), "5".to_owned())]);
    }
}
