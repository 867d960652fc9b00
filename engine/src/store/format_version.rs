//! Format versions of spur's line-oriented files (the task ledger, the audit log, run
//! journals): each record carries `"v"`, read before the rest so that a record of a newer
//! format is named as such instead of as a malformed record of this one.

use serde::Deserialize;

/// A record's format version, read alone from its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineVersion {
    /// The line has no `v` (files written before formats were versioned).
    Absent,
    /// The version this spur reads.
    Supported,
    /// A version this spur does not know (newer, or not one spur ever wrote).
    Unknown(u64),
}

/// Read `v` from one JSON line without reading the rest of it. A line that is not a JSON
/// object, or whose `v` is not a non-negative integer, is a parse error.
pub(crate) fn line_version(line: &[u8], supported: u64) -> Result<LineVersion, serde_json::Error> {
    #[derive(Deserialize)]
    struct Probe {
        v: Option<u64>,
    }
    // A derived struct would also accept an array (`[1]` as `{"v":1}`).
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(serde::de::Error::custom("expected a JSON object"));
    }
    let probe: Probe = serde_json::from_slice(line)?;
    Ok(match probe.v {
        None => LineVersion::Absent,
        Some(v) if v == supported => LineVersion::Supported,
        Some(v) => LineVersion::Unknown(v),
    })
}

/// The sentence naming a record spur cannot read because of its version.
pub(crate) fn unknown_version(found: u64, supported: u64) -> String {
    if found > supported {
        format!(
            "it was written by a newer spur (format {found}); this spur reads format {supported}"
        )
    } else {
        format!(
            "its format version {found} is not one spur writes; this spur reads format {supported}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_version_alone() {
        assert_eq!(
            line_version(br#"{"v":1,"x":[1,{"y":2}]}"#, 1).unwrap(),
            LineVersion::Supported
        );
        assert_eq!(line_version(br#"{"x":1}"#, 1).unwrap(), LineVersion::Absent);
        assert_eq!(
            line_version(br#"{"v":2,"new":"shape"}"#, 1).unwrap(),
            LineVersion::Unknown(2)
        );
        assert!(line_version(br#"{"v":"1"}"#, 1).is_err());
        assert!(line_version(b"[1]", 1).is_err());
        assert!(unknown_version(2, 1).contains("newer spur (format 2)"));
    }
}
