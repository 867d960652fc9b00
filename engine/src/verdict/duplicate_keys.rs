//! Duplicate keys anywhere in an artifact make it invalid.
//!
//! JSON leaves duplicate keys undefined and serde_json keeps the last one, so an artifact
//! could list an UNMET row and then repeat `requirements` with clean rows: a reader that
//! keeps the first sees FAIL, spur would see PASS. One pass over the document, before any
//! row is read, refuses every such artifact and names the key and its line.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A repeated key: its name and the line (1-based) where the repeat ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    pub(crate) key: String,
    pub(crate) line: usize,
}

/// The first repeated key of any object in `bytes`, when `bytes` is JSON.
///
/// Documents that are not JSON give `None` here: the parser that follows reports them as
/// malformed with its own message.
pub(crate) fn first_duplicate_key(bytes: &[u8]) -> Option<DuplicateKey> {
    match serde_json::from_slice::<DuplicateFree>(bytes) {
        Ok(DuplicateFree) => None,
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            let message = e.to_string();
            let key = message
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split(SUFFIX).next())
                .unwrap_or_default()
                .to_owned();
            Some(DuplicateKey {
                key,
                line: e.line(),
            })
        }
        Err(_) => None,
    }
}

const PREFIX: &str = "duplicate key ";
const SUFFIX: &str = " at line ";

/// Walks a JSON document and fails at the first object that repeats a key.
struct DuplicateFree;

impl<'de> Deserialize<'de> for DuplicateFree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DuplicateFreeVisitor)
    }
}

struct DuplicateFreeVisitor;

impl<'de> Visitor<'de> for DuplicateFreeVisitor {
    type Value = DuplicateFree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_unit<E: de::Error>(self) -> Result<DuplicateFree, E> {
        Ok(DuplicateFree)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DuplicateFree, A::Error> {
        while seq.next_element::<DuplicateFree>()?.is_some() {}
        Ok(DuplicateFree)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DuplicateFree, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                // Quoted with Rust's escaping, so a key holding the suffix stays one token.
                return Err(de::Error::custom(format!("{PREFIX}{key:?}")));
            }
            map.next_value::<DuplicateFree>()?;
            seen.insert(key);
        }
        Ok(DuplicateFree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_repeated_top_level_key_and_its_line() {
        let text =
            "{\n  \"requirements\": [],\n  \"verdict\": \"PASS\",\n  \"requirements\": []\n}";
        let dup = first_duplicate_key(text.as_bytes()).unwrap();
        assert_eq!(dup.key, "\"requirements\"");
        assert_eq!(dup.line, 4);
    }

    #[test]
    fn finds_a_repeated_key_inside_a_row() {
        let text = r#"{"requirements": [{"id": "R1", "status": "UNMET", "status": "MET"}]}"#;
        let dup = first_duplicate_key(text.as_bytes()).unwrap();
        assert_eq!(dup.key, "\"status\"");
        assert_eq!(dup.line, 1);
    }

    #[test]
    fn the_same_key_in_two_objects_is_not_a_duplicate() {
        let text = r#"{"requirements": [{"id": "R1"}, {"id": "R2"}], "checks": [{"id": "c"}]}"#;
        assert_eq!(first_duplicate_key(text.as_bytes()), None);
    }

    #[test]
    fn malformed_json_is_left_to_the_parser() {
        assert_eq!(first_duplicate_key(b"{\"a\": "), None);
        assert_eq!(first_duplicate_key(b"not json"), None);
    }

    #[test]
    fn escaped_keys_that_spell_the_same_string_are_duplicates() {
        let text = r#"{"wbs": "a", "w\u0062s": "b"}"#;
        let dup = first_duplicate_key(text.as_bytes()).unwrap();
        assert_eq!(dup.key, "\"wbs\"");
    }
}
