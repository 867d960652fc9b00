//! Writing verdict artifacts: whole artifacts from producers, and `checks[]` rows put
//! by verify gates to an artifact that already exists. Both atomic (temp + fsync + rename).

use std::path::Path;

use serde_json::Value;

use super::artifact::{Artifact, Check};
use super::read::MAX_ARTIFACT_BYTES;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::write_atomic;
use crate::store::bounded_read::{read_bounded, ReadError};

/// Why an artifact could not be written or updated.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactWriteError {
    /// Reading or writing the artifact failed.
    #[error("could not write verdict artifact {path}: {source}")]
    Io {
        /// The artifact's path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The artifact is not a JSON object whose `checks` can be replaced.
    #[error("cannot append checks to {path}: {problem}")]
    NotAppendable {
        /// The artifact's path.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
}

coded_diagnostic! {
    ArtifactWriteError {
        Self::Io { .. } => Code::VerdictWriteFailed;
        Self::NotAppendable { .. } => Code::VerdictNotAppendable,
            help("checks are appended to an existing artifact whose root is a JSON object; write the artifact first");
    }
}

/// Write `artifact` as canonical JSON, atomically.
pub(crate) fn write_artifact(path: &Path, artifact: &Artifact) -> Result<(), ArtifactWriteError> {
    write_atomic(path, artifact.to_json().as_bytes()).map_err(|source| ArtifactWriteError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// What [`replace_checks`] read and wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChecksReplaced {
    /// The artifact's bytes as read.
    pub read: Vec<u8>,
    /// The bytes written in their place.
    pub written: Vec<u8>,
}

/// Put `rows` into the `checks` array of the existing artifact at `path` (the array is
/// created when the artifact has none): rows with the same names as `rows`, or named in
/// `removed`, are dropped first, so a re-run replaces its rows instead of duplicating them.
/// Every other field is kept as it was. Atomic: readers see the old or the new file.
pub(crate) fn replace_checks(
    path: &Path,
    rows: &[Check],
    removed: &[String],
) -> Result<ChecksReplaced, ArtifactWriteError> {
    let not_appendable = |problem: String| ArtifactWriteError::NotAppendable {
        path: path.display().to_string(),
        problem,
    };
    let bytes = read_bounded(path, MAX_ARTIFACT_BYTES).map_err(|e| match e {
        ReadError::TooLarge {
            size: Some(size), ..
        } => not_appendable(format!("it is {size} bytes, above the limit")),
        ReadError::TooLarge { size: None, .. } => {
            not_appendable("it grew above the limit while being read".to_owned())
        }
        other => not_appendable(format!("cannot read it: {other}")),
    })?;
    let mut doc: Value = serde_json::from_slice(&bytes)
        .map_err(|e| not_appendable(format!("it is not JSON: {e}")))?;
    let root = doc
        .as_object_mut()
        .ok_or_else(|| not_appendable("its root is not an object".to_owned()))?;
    let checks = root
        .entry("checks")
        .or_insert_with(|| Value::Array(Vec::new()));
    let array = checks
        .as_array_mut()
        .ok_or_else(|| not_appendable("its `checks` field is not an array".to_owned()))?;
    let replaced: Vec<&str> = rows
        .iter()
        .map(|r| r.name.as_str())
        .chain(removed.iter().map(String::as_str))
        .collect();
    array.retain(|row| !row_name(row).is_some_and(|n| replaced.contains(&n)));
    for row in rows {
        array.push(serde_json::to_value(row).map_err(|e| not_appendable(e.to_string()))?);
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| not_appendable(e.to_string()))?;
    text.push('\n');
    write_atomic(path, text.as_bytes()).map_err(|source| ArtifactWriteError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(ChecksReplaced {
        read: bytes,
        written: text.into_bytes(),
    })
}

/// A raw check row's name with the contract's precedence: `name`, then `check`, then `id`.
fn row_name(row: &Value) -> Option<&str> {
    ["name", "check", "id"]
        .iter()
        .find_map(|key| row.get(key).and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{parse_artifact, ArtifactOutcome, CheckStatus, Severity};

    #[test]
    fn appends_checks_keeping_other_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        std::fs::write(
            &path,
            r#"{"wbs":"T","verdict":"PASS","requirements":[],"extra":{"kept":true},"checks":[{"name":"a","status":"pass"}]}"#,
        )
        .unwrap();
        let row = Check {
            name: "build".into(),
            status: CheckStatus::Fail,
            evidence: Some(".spur/run/build.log".into()),
            severity: Some(Severity::Blocker),
        };
        replace_checks(&path, std::slice::from_ref(&row), &[]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"kept\": true"), "{text}");
        let ArtifactOutcome::Valid(artifact) = parse_artifact(text.as_bytes()) else {
            panic!("still valid")
        };
        assert_eq!(artifact.checks.len(), 2);
        assert_eq!(artifact.checks[1], row);
        // Again with the same name (under its `check` alias too): replaced, not duplicated.
        replace_checks(&path, std::slice::from_ref(&row), &["a".to_owned()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let ArtifactOutcome::Valid(artifact) = parse_artifact(text.as_bytes()) else {
            panic!("still valid")
        };
        assert_eq!(artifact.checks, vec![row]);
    }

    #[test]
    fn refuses_to_append_to_a_non_object() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        std::fs::write(&path, "[]").unwrap();
        let err = replace_checks(&path, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("root is not an object"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[]");
        assert!(replace_checks(&dir.path().join("absent.json"), &[], &[]).is_err());
    }

    #[test]
    fn refuses_to_read_a_fifo_or_a_device() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = replace_checks(&fifo, &[], &[]).unwrap_err();
        assert!(
            err.to_string().contains("it is a FIFO, not a regular file"),
            "{err}"
        );
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = replace_checks(&zero, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
    }
}
