//! The one parser of verdict artifacts (DESIGN §7): bytes → missing, malformed, invalid
//! (with a reason and the rejected rows) or valid (normalised). Never panics on input.

use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::store::digest::sha256_hex;
use serde_json::Value;

use super::artifact::{
    AcceptanceCriterion, Artifact, Check, CheckStatus, EvidenceType, Requirement, RowStatus,
    Severity, Verdict,
};
use super::raw::{Loose, ObjectOnly, ParsedRows, RawArtifact, RawRow};

/// Artifacts larger than this are refused without being read.
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// The four outcomes of reading an artifact.
#[derive(Debug, Clone, PartialEq)]
pub enum ArtifactOutcome {
    /// Absent, empty or whitespace only.
    Missing {
        detail: MissingDetail,
    },
    /// Not JSON.
    Malformed {
        error: String,
    },
    /// JSON, but not a verdict artifact.
    Invalid(Invalidity),
    Valid(Artifact),
}

/// Which way an artifact is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingDetail {
    Absent,
    Empty,
    Whitespace,
}

impl MissingDetail {
    pub fn as_str(self) -> &'static str {
        match self {
            MissingDetail::Absent => "file does not exist",
            MissingDetail::Empty => "file is empty",
            MissingDetail::Whitespace => "file holds only whitespace",
        }
    }
}

/// Why a JSON document is not a valid artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalidity {
    /// Problems with the artifact as a whole (root type, top-level fields, size, reading).
    pub problems: Vec<String>,
    /// Rows that were rejected, in file order.
    pub rejected_rows: Vec<RejectedRow>,
    /// The artifact's `wbs` when it could be read, for the warning.
    pub wbs: Option<String>,
}

/// The array a row sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    Requirements,
    AcceptanceCriteria,
    Checks,
}

impl Section {
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Requirements => "requirements",
            Section::AcceptanceCriteria => "acceptanceCriteria",
            Section::Checks => "checks",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rejected row and the fields that made it invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedRow {
    pub section: Section,
    pub index: usize,
    pub problems: Vec<FieldProblem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field name, or `row` when the row itself is not an object.
    pub field: &'static str,
    pub problem: String,
}

impl RejectedRow {
    pub fn fields(&self) -> Vec<&'static str> {
        let mut fields: Vec<&'static str> = Vec::new();
        for p in &self.problems {
            if !fields.contains(&p.field) {
                fields.push(p.field);
            }
        }
        fields
    }
}

/// How many rejected rows a reason or warning spells out before summarising the rest.
const SHOWN_ROWS: usize = 5;

impl Invalidity {
    /// One line naming the failure mode, bounded whatever the artifact holds.
    pub fn reason(&self) -> String {
        let mut parts: Vec<String> = self.problems.iter().take(SHOWN_ROWS).cloned().collect();
        if self.problems.len() > SHOWN_ROWS {
            parts.push(format!(
                "{} more problems",
                self.problems.len() - SHOWN_ROWS
            ));
        }
        if !self.rejected_rows.is_empty() {
            let shown: Vec<String> = self
                .rejected_rows
                .iter()
                .take(SHOWN_ROWS)
                .map(|row| {
                    let detail: Vec<String> = row
                        .problems
                        .iter()
                        .map(|p| format!("{}: {}", p.field, p.problem))
                        .collect();
                    format!("{}[{}] ({})", row.section, row.index, detail.join("; "))
                })
                .collect();
            let more = self.rejected_rows.len().saturating_sub(SHOWN_ROWS);
            let tail = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            parts.push(format!(
                "{} rejected {}: {}{}",
                self.rejected_rows.len(),
                plural(self.rejected_rows.len(), "row", "rows"),
                shown.join(", "),
                tail
            ));
        }
        parts.join("; ")
    }
}

impl ArtifactOutcome {
    pub fn kind(&self) -> OutcomeKind {
        match self {
            ArtifactOutcome::Missing { .. } => OutcomeKind::Missing,
            ArtifactOutcome::Malformed { .. } => OutcomeKind::Malformed,
            ArtifactOutcome::Invalid(_) => OutcomeKind::Invalid,
            ArtifactOutcome::Valid(_) => OutcomeKind::Valid,
        }
    }

    /// The failure mode in words, `None` for a valid artifact.
    pub fn reason(&self) -> Option<String> {
        match self {
            ArtifactOutcome::Missing { detail } => Some(format!(
                "missing verify verdict artifact ({})",
                detail.as_str()
            )),
            ArtifactOutcome::Malformed { error } => Some(format!("malformed JSON: {error}")),
            ArtifactOutcome::Invalid(invalidity) => Some(invalidity.reason()),
            ArtifactOutcome::Valid(_) => None,
        }
    }

    pub fn artifact(&self) -> Option<&Artifact> {
        match self {
            ArtifactOutcome::Valid(artifact) => Some(artifact),
            _ => None,
        }
    }
}

/// The outcome without its payload (for JSON and matching).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    Missing,
    Malformed,
    Invalid,
    Valid,
}

impl OutcomeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Missing => "missing",
            OutcomeKind::Malformed => "malformed",
            OutcomeKind::Invalid => "invalid",
            OutcomeKind::Valid => "valid",
        }
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An artifact read from disk: its outcome and, when bytes were read, their sha256.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactRead {
    pub outcome: ArtifactOutcome,
    /// Lower-case hex sha256 of the bytes read; `None` when nothing was read.
    pub sha256: Option<String>,
}

/// Read and parse the artifact at `path` (any path; no containment rule).
pub fn read_artifact(path: &Path) -> ArtifactOutcome {
    read_artifact_file(path, None).outcome
}

/// Read and parse the artifact at `path`. With `within`, the path must resolve (symlinks
/// followed) under that directory, else the artifact is invalid: the done gate reads only
/// artifacts inside the project.
pub fn read_artifact_file(path: &Path, within: Option<&Path>) -> ArtifactRead {
    let unread = |outcome| ArtifactRead {
        outcome,
        sha256: None,
    };
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unread(ArtifactOutcome::Missing {
                detail: MissingDetail::Absent,
            })
        }
        Err(e) => return unread(invalid(format!("could not read the artifact: {e}"))),
    }
    if let Some(root) = within {
        let resolved = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink: nothing to read.
                return unread(ArtifactOutcome::Missing {
                    detail: MissingDetail::Absent,
                });
            }
            Err(e) => return unread(invalid(format!("could not resolve the artifact path: {e}"))),
        };
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        if !resolved.starts_with(&root) {
            return unread(invalid(format!(
                "the artifact path resolves to {}, outside the project {}; a verdict artifact must live inside the project",
                resolved.display(),
                root.display()
            )));
        }
    }
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unread(ArtifactOutcome::Missing {
                detail: MissingDetail::Absent,
            })
        }
        Err(e) => return unread(invalid(format!("could not read the artifact: {e}"))),
    };
    if !metadata.is_file() {
        return unread(invalid(
            "the artifact path is not a regular file".to_owned(),
        ));
    }
    if metadata.len() > MAX_ARTIFACT_BYTES {
        return unread(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_ARTIFACT_BYTES + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return unread(invalid(format!("could not read the artifact: {e}")));
    }
    ArtifactRead {
        sha256: Some(sha256_hex(&bytes)),
        outcome: parse_artifact(&bytes),
    }
}

fn too_large(len: u64) -> ArtifactOutcome {
    invalid(format!(
        "the artifact is {len} bytes, above the {} MiB limit; it was not read",
        MAX_ARTIFACT_BYTES / (1024 * 1024)
    ))
}

fn invalid(problem: String) -> ArtifactOutcome {
    ArtifactOutcome::Invalid(Invalidity {
        problems: vec![problem],
        rejected_rows: Vec::new(),
        wbs: None,
    })
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
    // Fast path: straight into borrowed raw rows. It only fails for documents that are
    // malformed or shaped wrong (a non-object root, a section or row of the wrong type,
    // a duplicate key); those take the `Value` path, which words every problem.
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
pub fn parse_value(value: &Value) -> ArtifactOutcome {
    let Some(root) = value.as_object() else {
        return invalid(format!(
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

/// A row kind the parser can build from a raw row object.
pub(crate) trait FromRawRow: Sized {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>>;
}

impl FromRawRow for Requirement {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        requirement(row)
    }
}

impl FromRawRow for AcceptanceCriterion {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        acceptance_criterion(row)
    }
}

impl FromRawRow for Check {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        check(row)
    }
}

fn requirement(row: &RawRow<'_>) -> Result<Requirement, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let id = row_id(row, &mut problems);
    let status = row_status(row, &mut problems);
    match (id, status) {
        (Some(id), Some(status)) if problems.is_empty() => Ok(Requirement {
            id,
            status,
            evidence: evidence(row),
        }),
        _ => Err(problems),
    }
}

fn acceptance_criterion(row: &RawRow<'_>) -> Result<AcceptanceCriterion, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let id = row_id(row, &mut problems);
    let status = row_status(row, &mut problems);
    let evidence_type = match &row.evidence_type {
        None => None,
        Some(Loose::Str(s)) => {
            let parsed = EvidenceType::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "evidenceType",
                    problem: format!(
                        "{} is not test, command, static-ref, manual-review, llm-judge, n/a or a `+` compound of them",
                        brief_str(s)
                    ),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "evidenceType",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    match (id, status) {
        (Some(id), Some(status)) if problems.is_empty() => Ok(AcceptanceCriterion {
            id,
            status,
            evidence_type,
            evidence: evidence(row),
        }),
        _ => Err(problems),
    }
}

fn check(row: &RawRow<'_>) -> Result<Check, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    // Precedence name → check → id; the first non-empty string wins.
    let name = [&row.name, &row.check, &row.id]
        .into_iter()
        .find_map(|field| field.as_ref().and_then(Loose::non_blank))
        .map(str::to_owned);
    if name.is_none() {
        problems.push(FieldProblem {
            field: "name",
            problem: "a check needs a label: a non-empty string `name`, `check` or `id`".to_owned(),
        });
    }
    let status = match &row.status {
        None => {
            problems.push(FieldProblem {
                field: "status",
                problem: "a check needs a status".to_owned(),
            });
            None
        }
        Some(Loose::Str(s)) => {
            let parsed = CheckStatus::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "status",
                    problem: format!("{} is not pass, fail or warn", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "status",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    let severity = match &row.severity {
        None => None,
        Some(Loose::Str(s)) => {
            let parsed = Severity::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "severity",
                    problem: format!("{} is not blocker, major, minor or advisory", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "severity",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    match (name, status) {
        (Some(name), Some(status)) if problems.is_empty() => Ok(Check {
            name,
            status,
            evidence: evidence(row),
            severity,
        }),
        _ => Err(problems),
    }
}

/// The row identifier: `id`, or its compatibility alias `scenario`. Both present must be
/// equal strings; anything else is a conflict.
fn row_id(row: &RawRow<'_>, problems: &mut Vec<FieldProblem>) -> Option<String> {
    match (&row.id, &row.scenario) {
        (None, None) => {
            problems.push(FieldProblem {
                field: "id",
                problem: "a row needs an `id` (or its alias `scenario`)".to_owned(),
            });
            None
        }
        (Some(value), None) | (None, Some(value)) => {
            let field = if row.id.is_some() { "id" } else { "scenario" };
            let parsed = value.non_blank().map(str::to_owned);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field,
                    problem: format!("must be a non-empty string, found {}", brief(value)),
                });
            }
            parsed
        }
        (Some(id), Some(scenario)) => match (id.non_blank(), scenario.non_blank()) {
            (Some(a), Some(b)) if a == b => Some(a.to_owned()),
            _ => {
                let problem = format!(
                    "`id` {} and `scenario` {} conflict: both present, they must be equal strings",
                    brief(id),
                    brief(scenario)
                );
                problems.push(FieldProblem {
                    field: "id",
                    problem,
                });
                problems.push(FieldProblem {
                    field: "scenario",
                    problem: "conflicts with `id`".to_owned(),
                });
                None
            }
        },
    }
}

fn row_status(row: &RawRow<'_>, problems: &mut Vec<FieldProblem>) -> Option<RowStatus> {
    match &row.status {
        None => {
            problems.push(FieldProblem {
                field: "status",
                problem: "a row needs a status".to_owned(),
            });
            None
        }
        Some(Loose::Str(s)) => {
            let parsed = RowStatus::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "status",
                    problem: format!("{} is not MET, PARTIAL, UNMET or N/A", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "status",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    }
}

/// Evidence is kept only when it is a string; anything else counts as absent (hollow).
fn evidence(row: &RawRow<'_>) -> Option<String> {
    row.evidence
        .as_ref()
        .and_then(Loose::as_str)
        .map(str::to_owned)
}

/// A short rendering of a value for messages: scalars shown (truncated), containers named.
fn brief(value: &Loose<'_>) -> String {
    match value {
        Loose::Str(s) => brief_str(s),
        Loose::Other { shown, .. } => shown.clone(),
    }
}

const SHOWN_CHARS: usize = 40;

fn brief_str(s: &str) -> String {
    if s.chars().count() > SHOWN_CHARS {
        let head: String = s.chars().take(SHOWN_CHARS).collect();
        format!("{head:?}…")
    } else {
        format!("{s:?}")
    }
}

pub(crate) fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(text: &str) -> ArtifactOutcome {
        parse_artifact(text.as_bytes())
    }

    fn reason_of(text: &str) -> String {
        match outcome(text) {
            ArtifactOutcome::Invalid(invalidity) => invalidity.reason(),
            other => panic!("expected invalid, got {other:?}"),
        }
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
    fn normalises_case_and_aliases() {
        let text = r#"{"wbs":"T","verdict":"partial","requirements":[
            {"scenario":"Scenario: a","status":"met","evidence":"x:1"},
            {"id":"R2","scenario":"R2","status":"n/a","evidence":"x"}],
          "acceptanceCriteria":[{"id":"AC-1","status":"Partial","evidenceType":"TEST+Static-Ref","evidence":"y"}],
          "checks":[{"name":"","check":"lint","id":"z","status":"WARN","severity":"MAJOR"},
                    {"id":"only-id","status":"Pass"}]}"#;
        let ArtifactOutcome::Valid(a) = outcome(text) else {
            panic!("valid expected")
        };
        assert_eq!(a.verdict, Verdict::Partial);
        assert_eq!(a.requirements[0].id, "Scenario: a");
        assert_eq!(a.requirements[0].status, RowStatus::Met);
        assert_eq!(a.requirements[1].status, RowStatus::NotApplicable);
        assert_eq!(a.acceptance_criteria[0].status, RowStatus::Partial);
        assert_eq!(
            a.acceptance_criteria[0]
                .evidence_type
                .as_ref()
                .map(ToString::to_string),
            Some("test+static-ref".to_owned())
        );
        // name is empty, so `check` wins over `id`.
        assert_eq!(a.checks[0].name, "lint");
        assert_eq!(a.checks[0].status, CheckStatus::Warn);
        assert_eq!(a.checks[0].severity, Some(Severity::Major));
        assert_eq!(a.checks[1].name, "only-id");
    }

    #[test]
    fn reports_every_rejected_row_but_bounds_the_reason() {
        let rows: Vec<String> = (0..50).map(|i| format!(r#"{{"id":"R{i}"}}"#)).collect();
        let text = format!(
            r#"{{"wbs":"T","verdict":"PASS","requirements":[{}]}}"#,
            rows.join(",")
        );
        let ArtifactOutcome::Invalid(invalidity) = outcome(&text) else {
            panic!("invalid expected")
        };
        assert_eq!(invalidity.rejected_rows.len(), 50);
        let reason = invalidity.reason();
        assert!(
            reason.starts_with("50 rejected rows: requirements[0]"),
            "{reason}"
        );
        assert!(reason.ends_with("and 45 more"), "{reason}");
        assert!(reason.len() < 600, "{}", reason.len());
    }

    #[test]
    fn long_values_are_truncated_in_messages() {
        let long = "x".repeat(10_000);
        let reason = reason_of(&format!(
            r#"{{"wbs":"T","verdict":"{long}","requirements":[]}}"#
        ));
        assert!(reason.len() < 200, "{reason}");
        assert!(reason.contains('…'));
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
}
