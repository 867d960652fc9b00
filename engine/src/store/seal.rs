//! A sealed line: one JSON object of a task ledger, the audit log or a run journal whose
//! last two fields are `"key"` (the id of the key that sealed it) and `"mac"`, the
//! HMAC-SHA256 under that key of every byte of the line before `,"mac":`. So an edit
//! anywhere in a sealed line, its own last line included, needs the key to go unnoticed.
//!
//! Lines written before keyed chains are *unkeyed*: their chain value (what the next
//! line's `prev` names) is the sha256 of their bytes, as it always was. A sealed line's
//! chain value is its `mac`.

use crate::store::chain_key::{ChainKey, KeyAtHand};
use crate::store::digest::sha256_hex;

const KEY_FIELD: &str = ",\"key\":\"";
const MAC_FIELD: &str = ",\"mac\":\"";

/// Close `open` (a JSON object's text without its closing brace) with the key's id and the
/// MAC of everything before `,"mac":`: the sealed line, without a newline.
pub fn seal(open: &str, key: &ChainKey) -> String {
    let signed = format!("{open}{KEY_FIELD}{}\"", key.id());
    let mac = key.mac_hex(signed.as_bytes());
    format!("{signed}{MAC_FIELD}{mac}\"}}")
}

/// The seal at the end of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seal<'a> {
    /// The id of the key it names.
    pub(crate) key_id: &'a str,
    /// Its MAC, as written.
    pub(crate) mac: &'a str,
    /// The bytes the MAC covers.
    pub(crate) signed: &'a [u8],
}

/// The seal a line ends with, if it ends with one: `,"key":"<id>","mac":"<hex>"}`, the id
/// and the MAC made of nothing but lowercase hex digits, as spur writes them (so neither
/// can hide a quote, and neither can be spelt another way: an `A` for an `a` decodes to the
/// same MAC, but it is an edit of the line).
pub(crate) fn find_seal(line: &[u8]) -> Option<Seal<'_>> {
    let text = std::str::from_utf8(line).ok()?;
    let body = text.strip_suffix("\"}")?;
    let mac_at = body.rfind(MAC_FIELD)?;
    let mac = body.get(mac_at + MAC_FIELD.len()..)?;
    let signed = body.get(..mac_at)?;
    let key_at = signed.rfind(KEY_FIELD)?;
    let key_id = signed.get(key_at + KEY_FIELD.len()..)?.strip_suffix('"')?;
    let hex = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    (hex(mac) && mac.len() == 64 && hex(key_id)).then_some(Seal {
        key_id,
        mac,
        signed: signed.as_bytes(),
    })
}

/// What checking a seal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SealCheck {
    /// The MAC is the key's.
    Valid,
    /// The key that sealed it is not at hand (why).
    Unverifiable(String),
    /// The key is at hand and the MAC is not its MAC of the line: the line was edited, or
    /// sealed by something without the key.
    Forged,
}

/// Check `seal` with the key at hand.
pub(crate) fn check(seal: &Seal<'_>, key: &KeyAtHand) -> SealCheck {
    if let Some(why) = key.cannot_check(seal.key_id) {
        return SealCheck::Unverifiable(why);
    }
    match key {
        KeyAtHand::Key(key) if key.verifies(seal.signed, seal.mac) => SealCheck::Valid,
        _ => SealCheck::Forged,
    }
}

/// What the next line's `prev` must name: a sealed line's MAC, an unkeyed line's sha256.
pub fn chain_value(line: &[u8]) -> String {
    match find_seal(line) {
        Some(seal) => seal.mac.to_owned(),
        None => sha256_hex(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ChainKey {
        let dir = tempfile::tempdir().unwrap();
        crate::store::chain_key::KeyFile::at(dir.path().join("k"))
            .create()
            .unwrap()
    }

    #[test]
    fn a_sealed_line_checks_and_chains_by_its_mac() {
        let key = key();
        let line = seal(r#"{"a":1,"b":"x""#, &key);
        assert!(line.starts_with(r#"{"a":1,"b":"x","key":""#), "{line}");
        let found = find_seal(line.as_bytes()).unwrap();
        assert_eq!(found.key_id, key.id());
        assert_eq!(
            check(&found, &KeyAtHand::Key(key.clone())),
            SealCheck::Valid
        );
        assert_eq!(chain_value(line.as_bytes()), found.mac);
        let plain = br#"{"a":1}"#;
        assert_eq!(find_seal(plain), None);
        assert_eq!(chain_value(plain), sha256_hex(plain));
    }

    #[test]
    fn a_seal_spelt_in_upper_case_is_no_seal() {
        let key = key();
        let line = seal(r#"{"a":1"#, &key);
        let at = line.rfind(r#""mac":""#).unwrap() + 7;
        let letter = line[at..].find(|c: char| c.is_ascii_lowercase()).unwrap() + at;
        let mut upper = line.clone();
        upper.replace_range(letter..=letter, &line[letter..=letter].to_ascii_uppercase());
        assert_eq!(find_seal(upper.as_bytes()), None);
        let id_at = line.find(r#""key":""#).unwrap() + 7;
        let mut id_upper = line.clone();
        if let Some(i) = line[id_at..].find(|c: char| c.is_ascii_lowercase()) {
            id_upper.replace_range(
                id_at + i..=id_at + i,
                &line[id_at + i..=id_at + i].to_ascii_uppercase(),
            );
            assert_eq!(find_seal(id_upper.as_bytes()), None);
        }
    }

    #[test]
    fn an_edit_is_forged_and_another_key_is_unverifiable() {
        let key = key();
        let line = seal(r#"{"to":"review""#, &key).replace("review", "done!!");
        let found = find_seal(line.as_bytes()).unwrap();
        assert_eq!(check(&found, &KeyAtHand::Key(key)), SealCheck::Forged);
        let other = self::key();
        match check(&found, &KeyAtHand::Key(other)) {
            SealCheck::Unverifiable(why) => {
                assert!(why.contains("the key file holds key"), "{why}")
            }
            found => panic!("{found:?}"),
        }
        let missing = KeyAtHand::Missing { file: "/k".into() };
        assert!(matches!(
            check(&found, &missing),
            SealCheck::Unverifiable(_)
        ));
    }
}
