//! Reading a verdict artifact: the file (opened non-blocking, checked on its descriptor,
//! capped, through `store::bounded_read`), its bytes, then one of the four outcomes. The
//! one parser of artifacts; it never panics on input.

use std::path::Path;

use serde_json::Value;

use super::artifact::{AcceptanceCriterion, Artifact, Check, Requirement, Verdict};
use super::duplicate_keys::first_duplicate_key;
use super::outcome::{
    ArtifactOutcome, FieldProblem, Invalidity, MissingDetail, RejectedRow, Section,
};
use super::raw::{FromRawRow, Loose, ObjectOnly, ParsedRows, RawArtifact, RawRow};
use super::rows::{brief, brief_str};
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::digest::sha256_hex;

/// Artifacts larger than this are refused without being read.
pub(crate) const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// An artifact read from disk: its outcome and, when bytes were read, their sha256.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArtifactRead {
    pub(crate) outcome: ArtifactOutcome,
    /// Lower-case hex sha256 of the bytes read; `None` when nothing was read.
    pub(crate) sha256: Option<String>,
}

/// Read and parse the artifact at `path` (any path; no containment rule).
pub fn read_artifact(path: &Path) -> ArtifactOutcome {
    read_artifact_file(path, None).outcome
}

/// Read and parse the artifact at `path`. With `within`, the path must resolve (symlinks
/// followed) under that directory, else the artifact is invalid: the done gate reads only
/// artifacts inside the project. What is opened is the resolved path that was checked.
pub(crate) fn read_artifact_file(path: &Path, within: Option<&Path>) -> ArtifactRead {
    let unread = |outcome| ArtifactRead {
        outcome,
        sha256: None,
    };
    let absent = || ArtifactOutcome::Missing {
        detail: MissingDetail::Absent,
    };
    let resolved;
    let opened = match within {
        None => path,
        Some(root) => {
            resolved = match std::fs::canonicalize(path) {
                Ok(p) => p,
                // Absent, or a dangling symlink: nothing to read.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return unread(absent()),
                Err(e) => {
                    return unread(ArtifactOutcome::invalid(format!(
                        "could not resolve the artifact path: {e}"
                    )))
                }
            };
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            if !resolved.starts_with(&root) {
                return unread(ArtifactOutcome::invalid(format!(
                    "the artifact path resolves to {}, outside the project {}; a verdict artifact must live inside the project",
                    resolved.display(),
                    root.display()
                )));
            }
            &resolved
        }
    };
    match read_bounded(opened, MAX_ARTIFACT_BYTES) {
        Ok(bytes) => ArtifactRead {
            sha256: Some(sha256_hex(&bytes)),
            outcome: parse_artifact(&bytes),
        },
        Err(ReadError::Missing) => unread(absent()),
        Err(ReadError::NotRegular { .. }) => unread(ArtifactOutcome::invalid(
            "the artifact path is not a regular file".to_owned(),
        )),
        Err(ReadError::TooLarge { size, .. }) => {
            unread(too_large(size.unwrap_or(MAX_ARTIFACT_BYTES + 1)))
        }
        Err(e) => unread(ArtifactOutcome::invalid(format!(
            "could not read the artifact: {e}"
        ))),
    }
}

fn too_large(len: u64) -> ArtifactOutcome {
    ArtifactOutcome::invalid(format!(
        "the artifact is {len} bytes, above the {} MiB limit; it was not read",
        MAX_ARTIFACT_BYTES / (1024 * 1024)
    ))
}

/// Parse artifact bytes.
pub fn parse_artifact(bytes: &[u8]) -> ArtifactOutcome {
    if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
        return too_large(bytes.len() as u64);
    }
    if bytes.is_empty() {
        return ArtifactOutcome::Missing {
            detail: MissingDetail::Empty,
        };
    }
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return ArtifactOutcome::Missing {
            detail: MissingDetail::Whitespace,
        };
    }
    // serde_json keeps the last of repeated keys; an artifact must not say two things.
    if let Some(duplicate) = first_duplicate_key(bytes) {
        return ArtifactOutcome::invalid(format!(
            "duplicate key {} at line {}: each key may appear once per object",
            duplicate.key, duplicate.line
        ));
    }
    // Fast path: straight into borrowed raw rows. It only fails for documents that are
    // malformed or shaped wrong (a non-object root, a section or row of the wrong type);
    // those take the `Value` path, which words every problem.
    if let Ok(ObjectOnly(raw)) = serde_json::from_slice::<ObjectOnly<RawArtifact<'_>>>(bytes) {
        return validate(raw);
    }
    // serde_json bounds nesting (128 levels), so deep arrays are an error, not a crash.
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return ArtifactOutcome::Malformed {
                error: e.to_string(),
            }
        }
    };
    parse_value(&value)
}

/// Validate and normalise an already-parsed JSON document.
pub(crate) fn parse_value(value: &Value) -> ArtifactOutcome {
    let Some(root) = value.as_object() else {
        return ArtifactOutcome::invalid(format!(
            "the JSON root is {}, not an object",
            json_type(value)
        ));
    };
    let mut problems = Vec::new();
    let sections = Sections {
        requirements: section_of(root.get("requirements"), "requirements", &mut problems),
        acceptance_criteria: section_of(
            root.get("acceptanceCriteria"),
            "acceptanceCriteria",
            &mut problems,
        ),
        checks: section_of(root.get("checks"), "checks", &mut problems),
    };
    assemble(
        root.get("wbs").and_then(Loose::from_value),
        root.get("verdict").and_then(Loose::from_value),
        sections,
        root.get("source").filter(|v| !v.is_null()).cloned(),
        problems,
    )
}

fn json_type(value: &Value) -> &'static str {
    Loose::from_value(value).map_or("null", |l| l.type_name())
}

/// A section of a `Value` document: `None` when absent; a non-array is a problem.
fn section_of<T: FromRawRow>(
    value: Option<&Value>,
    key: &str,
    problems: &mut Vec<String>,
) -> Option<ParsedRows<T>> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::Array(rows)) => {
            let mut parsed = ParsedRows::default();
            for (index, row) in rows.iter().enumerate() {
                let result = match row.as_object() {
                    Some(object) => T::from_raw(&RawRow::from_map(object)),
                    None => Err(vec![FieldProblem {
                        field: "row",
                        problem: format!("a row must be an object, found {}", json_type(row)),
                    }]),
                };
                parsed.push(index, result);
            }
            Some(parsed)
        }
        Some(other) => {
            problems.push(format!(
                "`{key}` must be an array, found {}",
                json_type(other)
            ));
            Some(ParsedRows::default())
        }
    }
}

/// Rows of each section, already validated; `None` for an absent section.
struct Sections {
    requirements: Option<ParsedRows<Requirement>>,
    acceptance_criteria: Option<ParsedRows<AcceptanceCriterion>>,
    checks: Option<ParsedRows<Check>>,
}

fn validate(raw: RawArtifact<'_>) -> ArtifactOutcome {
    let sections = Sections {
        requirements: raw.requirements,
        acceptance_criteria: raw.acceptance_criteria,
        checks: raw.checks,
    };
    assemble(raw.wbs, raw.verdict, sections, raw.source, Vec::new())
}

fn assemble(
    wbs: Option<Loose<'_>>,
    verdict: Option<Loose<'_>>,
    sections: Sections,
    source: Option<Value>,
    mut problems: Vec<String>,
) -> ArtifactOutcome {
    let mut rejected = Vec::new();

    let wbs = match wbs {
        None => {
            problems.push("`wbs` is absent".to_owned());
            None
        }
        Some(value) => match value.non_blank() {
            Some(s) => Some(s.to_owned()),
            None => {
                problems.push(format!(
                    "`wbs` must be a non-empty string, found {}",
                    brief(&value)
                ));
                None
            }
        },
    };

    let verdict = match verdict {
        None => {
            problems.push("`verdict` is absent".to_owned());
            None
        }
        Some(Loose::Str(s)) => {
            let parsed = Verdict::parse(&s);
            if parsed.is_none() {
                problems.push(format!(
                    "`verdict` {} is not PASS, PARTIAL, FAIL or UNKNOWN",
                    brief_str(&s)
                ));
            }
            parsed
        }
        Some(other) => {
            problems.push(format!(
                "`verdict` must be a string, found {}",
                brief(&other)
            ));
            None
        }
    };

    if sections.requirements.is_none() {
        problems.push("`requirements` is absent".to_owned());
    }
    let requirements = take_rows(sections.requirements, Section::Requirements, &mut rejected);
    let acceptance_criteria = take_rows(
        sections.acceptance_criteria,
        Section::AcceptanceCriteria,
        &mut rejected,
    );
    let checks = take_rows(sections.checks, Section::Checks, &mut rejected);

    match (wbs, verdict) {
        (Some(wbs), Some(verdict)) if problems.is_empty() && rejected.is_empty() => {
            ArtifactOutcome::Valid(Artifact {
                wbs,
                verdict,
                requirements,
                acceptance_criteria,
                checks,
                source,
            })
        }
        (wbs, _) => ArtifactOutcome::Invalid(Invalidity {
            problems,
            rejected_rows: rejected,
            wbs,
        }),
    }
}

fn take_rows<T>(
    parsed: Option<ParsedRows<T>>,
    section: Section,
    rejected: &mut Vec<RejectedRow>,
) -> Vec<T> {
    let Some(parsed) = parsed else {
        return Vec::new();
    };
    rejected.extend(
        parsed
            .rejected
            .into_iter()
            .map(|(index, problems)| RejectedRow {
                section,
                index,
                problems,
            }),
    );
    parsed.rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::OutcomeKind;

    fn outcome(text: &str) -> ArtifactOutcome {
        parse_artifact(text.as_bytes())
    }

    const REQ: &str = r#"[{"id":"R1","status":"MET","evidence":"a:1"}]"#;

    #[test]
    fn every_parse_outcome() {
        // (case, text, expected outcome kind, fragment of the reason)
        let cases: Vec<(&str, String, OutcomeKind, &str)> = vec![
            ("empty", String::new(), OutcomeKind::Missing, "empty"),
            ("whitespace", " \n\t ".into(), OutcomeKind::Missing, "whitespace"),
            ("bad JSON", "{\"wbs\":".into(), OutcomeKind::Malformed, "EOF"),
            ("NaN literal", "{\"verdict\": NaN}".into(), OutcomeKind::Malformed, "expected value"),
            ("array root", "[1,2]".into(), OutcomeKind::Invalid, "root is an array"),
            ("string root", "\"PASS\"".into(), OutcomeKind::Invalid, "root is a string"),
            ("requirements absent", r#"{"wbs":"T","verdict":"PASS"}"#.into(), OutcomeKind::Invalid, "`requirements` is absent"),
            ("requirements not array", r#"{"wbs":"T","verdict":"PASS","requirements":{}}"#.into(), OutcomeKind::Invalid, "`requirements` must be an array, found an object"),
            ("AC not array", format!(r#"{{"wbs":"T","verdict":"PASS","requirements":{REQ},"acceptanceCriteria":"x"}}"#), OutcomeKind::Invalid, "`acceptanceCriteria` must be an array"),
            ("checks not array", format!(r#"{{"wbs":"T","verdict":"PASS","requirements":{REQ},"checks":7}}"#), OutcomeKind::Invalid, "`checks` must be an array"),
            ("verdict NaN-like", format!(r#"{{"wbs":"T","verdict":"NaN","requirements":{REQ}}}"#), OutcomeKind::Invalid, "`verdict` \"NaN\" is not PASS"),
            ("verdict absent", format!(r#"{{"wbs":"T","requirements":{REQ}}}"#), OutcomeKind::Invalid, "`verdict` is absent"),
            ("verdict number", format!(r#"{{"wbs":"T","verdict":1,"requirements":{REQ}}}"#), OutcomeKind::Invalid, "`verdict` must be a string, found a number 1"),
            ("wbs absent", format!(r#"{{"verdict":"PASS","requirements":{REQ}}}"#), OutcomeKind::Invalid, "`wbs` is absent"),
            ("row not object", r#"{"wbs":"T","verdict":"PASS","requirements":["R1"]}"#.into(), OutcomeKind::Invalid, "requirements[0] (row: a row must be an object, found a string)"),
            ("row lacks status", r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1"}]}"#.into(), OutcomeKind::Invalid, "status: a row needs a status"),
            ("row status invalid", r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"DONE"}]}"#.into(), OutcomeKind::Invalid, "\"DONE\" is not MET"),
            ("row status wrong type", r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":true}]}"#.into(), OutcomeKind::Invalid, "must be a string, found a boolean true"),
            ("row lacks id and scenario", r#"{"wbs":"T","verdict":"PASS","requirements":[{"status":"MET"}]}"#.into(), OutcomeKind::Invalid, "needs an `id`"),
            ("id/scenario conflict", r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","scenario":"R2","status":"MET"}]}"#.into(), OutcomeKind::Invalid, "conflict"),
            ("scenario not a string beside id", r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","scenario":1,"status":"MET"}]}"#.into(), OutcomeKind::Invalid, "conflict"),
            ("bad evidenceType", r#"{"wbs":"T","verdict":"PASS","requirements":[],"acceptanceCriteria":[{"id":"A","status":"MET","evidenceType":"vibes"}]}"#.into(), OutcomeKind::Invalid, "evidenceType: \"vibes\""),
            ("check without label", r#"{"wbs":"T","verdict":"PASS","requirements":[],"checks":[{"status":"pass","name":""}]}"#.into(), OutcomeKind::Invalid, "a check needs a label"),
            ("check bad severity", r#"{"wbs":"T","verdict":"PASS","requirements":[],"checks":[{"name":"x","status":"pass","severity":"critical"}]}"#.into(), OutcomeKind::Invalid, "\"critical\" is not blocker"),
            ("check bad status", r#"{"wbs":"T","verdict":"PASS","requirements":[],"checks":[{"name":"x","status":"skip"}]}"#.into(), OutcomeKind::Invalid, "\"skip\" is not pass, fail or warn"),
            ("valid minimal", format!(r#"{{"wbs":"T","verdict":"pass","requirements":{REQ}}}"#), OutcomeKind::Valid, ""),
            ("empty arrays are valid", r#"{"wbs":"T","verdict":"FAIL","requirements":[],"acceptanceCriteria":[],"checks":[]}"#.into(), OutcomeKind::Valid, ""),
        ];
        for (case, text, kind, fragment) in cases {
            let got = outcome(&text);
            assert_eq!(got.kind(), kind, "{case}: {got:?}");
            let reason = got.reason().unwrap_or_default();
            assert!(
                reason.contains(fragment),
                "{case}: reason {reason:?} lacks {fragment:?}"
            );
        }
    }

    #[test]
    fn the_fast_path_and_the_value_path_agree() {
        let documents = [
            r#"{"wbs":"T","verdict":"pass","requirements":[{"id":"R1","status":"met","evidence":"a\u0041:1"}]}"#,
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":7,"extra":[1,{"a":2}]}],"acceptanceCriteria":null}"#,
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":1.5e3,"status":false}],"checks":[{"name":"","check":"c","status":"warn","severity":null}]}"#,
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","scenario":"R1","status":"MET","evidence":"x"}],"source":{"answer":"a.md"}}"#,
            r#"{"wbs":" ","verdict":{},"requirements":[]}"#,
        ];
        for text in documents {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(outcome(text), parse_value(&value), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_crash() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(outcome(&text).kind(), OutcomeKind::Malformed);
    }

    #[test]
    fn non_utf8_is_malformed() {
        assert_eq!(
            parse_artifact(&[0xff, 0xfe, b'{']).kind(),
            OutcomeKind::Malformed
        );
    }

    #[test]
    fn serialises_to_the_canonical_shape_and_reparses_equal() {
        let text = r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}],
          "acceptanceCriteria":[{"scenario":"S","status":"MET","evidenceType":"test","evidence":"t:2"}],
          "checks":[{"check":"lint","status":"pass","severity":"minor","evidence":"ok"}],"source":"answer.md"}"#;
        let ArtifactOutcome::Valid(a) = outcome(text) else {
            panic!("valid expected")
        };
        let json = a.to_json();
        assert!(json.contains("\"acceptanceCriteria\""), "{json}");
        assert!(json.contains("\"evidenceType\": \"test\""), "{json}");
        assert_eq!(outcome(&json), ArtifactOutcome::Valid(a));
    }

    fn read_at(path: &Path) -> ArtifactRead {
        read_artifact_file(path, path.parent())
    }

    #[test]
    fn a_fifo_at_the_artifact_path_is_invalid_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let read = read_at(&path);
        assert_eq!(read.sha256, None);
        assert_eq!(
            read.outcome.reason().as_deref(),
            Some("the artifact path is not a regular file")
        );
    }

    #[test]
    fn a_symlink_to_dev_zero_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        // Outside the project for the done gate, not a regular file for anyone else.
        assert!(read_at(&path)
            .outcome
            .reason()
            .unwrap()
            .contains("outside the project"));
        assert_eq!(
            read_artifact(&path).reason().as_deref(),
            Some("the artifact path is not a regular file")
        );
    }

    #[test]
    fn absent_and_dangling_are_missing_and_a_large_file_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        assert_eq!(read_at(&path).outcome.kind(), OutcomeKind::Missing);
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &path).unwrap();
        assert_eq!(read_at(&path).outcome.kind(), OutcomeKind::Missing);
        assert_eq!(read_artifact(&path).kind(), OutcomeKind::Missing);
        std::fs::remove_file(&path).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_ARTIFACT_BYTES + 1).unwrap();
        let read = read_at(&path);
        assert_eq!(read.sha256, None);
        assert!(
            read.outcome
                .reason()
                .unwrap()
                .contains("above the 64 MiB limit; it was not read"),
            "{:?}",
            read.outcome
        );
    }

    #[test]
    fn a_valid_artifact_is_read_with_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        let text = format!(r#"{{"wbs":"T","verdict":"PASS","requirements":{REQ}}}"#);
        std::fs::write(&path, &text).unwrap();
        let read = read_at(&path);
        assert_eq!(read.outcome.kind(), OutcomeKind::Valid);
        assert_eq!(read.sha256, Some(sha256_hex(text.as_bytes())));
    }
}
