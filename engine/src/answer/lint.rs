//! The answer lint: every row checked against the task file and the project tree, with a
//! diagnostic per problem tied to the row's line. Rows that pass come out typed (statuses
//! and evidence types parsed, AC cells resolved to their criterion) for derivation.

use std::collections::HashMap;

use super::ac_identity::{AcIndex, Resolution};
use super::anchor::{scan_evidence, AnchorChecker, AnchorProblem};
use super::diagnostic::{shorten, AnswerDiagnostic};
use super::parse::{AcRow, Answer, RequirementRow};
use super::table::unwrap_code;
use super::task_file::TaskFile;
use crate::diagnostic::Code;
use crate::verdict::{EvidenceKind, EvidenceType, RowStatus};

/// A requirement row that can be derived from: id known, status valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LintedRequirement {
    pub(crate) line: usize,
    pub(crate) id: String,
    pub(crate) status: RowStatus,
    pub(crate) evidence: String,
}

/// An AC row that can be derived from: resolved to one criterion, status and type valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LintedAc {
    pub(crate) line: usize,
    /// Index of the criterion in the task file's list.
    pub(crate) criterion: usize,
    pub(crate) status: RowStatus,
    pub(crate) evidence_type: EvidenceType,
    pub(crate) evidence: String,
}

/// The lint's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintReport {
    pub(crate) requirements: Vec<LintedRequirement>,
    pub(crate) acceptance: Vec<LintedAc>,
    /// Sorted by line; findings about the file as a whole come last.
    pub diagnostics: Vec<AnswerDiagnostic>,
}

impl LintReport {
    pub(crate) fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// Whether any finding is an error (the answer fails the lint).
    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }
}

/// Lint `answer` against `task`, checking anchors with `anchors`.
pub fn lint(answer: &Answer, task: &TaskFile, anchors: &mut AnchorChecker) -> LintReport {
    let mut report = LintReport {
        diagnostics: answer.diagnostics.clone(),
        ..LintReport::default()
    };
    lint_requirements(answer, task, anchors, &mut report);
    lint_acceptance(answer, task, anchors, &mut report);
    report
        .diagnostics
        .sort_by_key(|d| d.line.unwrap_or(usize::MAX));
    report
}

fn lint_requirements(
    answer: &Answer,
    task: &TaskFile,
    anchors: &mut AnchorChecker,
    report: &mut LintReport,
) {
    let known: HashMap<&str, usize> = task
        .requirements
        .iter()
        .map(|r| (r.id.as_str(), r.line))
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for row in &answer.requirements {
        let id = unwrap_code(&row.id).to_owned();
        let mut ok = true;
        let diag = |code, message: String| {
            AnswerDiagnostic::new(code, message).at_row(row.line, &row.text)
        };
        if !known.contains_key(id.as_str()) {
            ok = false;
            report.diagnostics.push(
                diag(
                    Code::AnswerUnknownRequirement,
                    format!(
                        "`{}` is not a requirement of {}",
                        shorten(&id),
                        task.path.display()
                    ),
                )
                .with_help(format!("the task's requirements are {}", id_list(task))),
            );
        } else if let Some(first) = seen.get(&id) {
            ok = false;
            report.diagnostics.push(
                diag(
                    Code::AnswerDuplicateRequirement,
                    format!("{id} already has a row (line {first})"),
                )
                .with_help("keep one row per requirement"),
            );
        } else {
            seen.insert(id.clone(), row.line);
        }
        let status = requirement_status(row, report);
        let evidence = lint_evidence(row.line, &row.text, &row.evidence, status, anchors, report);
        if let (true, Some(status), Some(evidence)) = (ok, status, evidence) {
            report.requirements.push(LintedRequirement {
                line: row.line,
                id,
                status,
                evidence,
            });
        }
    }
    for requirement in &task.requirements {
        if !seen.contains_key(&requirement.id) {
            let mut d = AnswerDiagnostic::new(
                Code::AnswerMissingRequirement,
                format!(
                    "requirement {} ({}:{}) has no row",
                    requirement.id,
                    task.path.display(),
                    requirement.line
                ),
            )
            .with_help(match answer.requirements_table {
                Some(_) => format!(
                    "add `| {} | MET | <file:line> |` (or PARTIAL/UNMET) to the requirements table",
                    requirement.id
                ),
                None => "the answer has no `| Req | Status | Evidence |` table".to_owned(),
            });
            d.line = answer.requirements_table;
            report.diagnostics.push(d);
        }
    }
}

fn lint_acceptance(
    answer: &Answer,
    task: &TaskFile,
    anchors: &mut AnchorChecker,
    report: &mut LintReport,
) {
    let index = AcIndex::new(&task.acceptance);
    let mut covered: HashMap<usize, usize> = HashMap::new();
    // "Did you mean" costs an edit distance per criterion; a hostile answer of thousands of
    // unresolved rows gets hints on the first ones only.
    let mut suggestions_left = MAX_SUGGESTIONS;
    for row in &answer.acceptance {
        let diag = |code, message: String| {
            AnswerDiagnostic::new(code, message).at_row(row.line, &row.text)
        };
        let shown = shorten(unwrap_code(&row.id));
        let criterion = match index.resolve(&row.id) {
            Resolution::One(i) => Some(i),
            Resolution::Unresolved => {
                let closest = if suggestions_left > 0 {
                    suggestions_left -= 1;
                    index.closest(&row.id)
                } else {
                    None
                };
                let mut d = diag(
                    Code::AnswerUnresolvedAc,
                    format!("`{shown}` names no acceptance criterion of the task"),
                );
                d = match closest.and_then(|i| task.acceptance.get(i)) {
                    Some(ac) => d.with_help(format!(
                        "paraphrases do not resolve; did you mean `{}`?{}",
                        ac.label,
                        alias_hint(ac)
                    )),
                    None => d.with_help(
                        "use the checklist label, its bare title, `Scenario: <title>` or its `AC-N` alias",
                    ),
                };
                report.diagnostics.push(d);
                None
            }
            Resolution::Ambiguous(candidates) => {
                let names: Vec<String> = candidates
                    .iter()
                    .filter_map(|&i| task.acceptance.get(i))
                    .map(|ac| format!("`{}` (line {})", ac.label, ac.line))
                    .collect();
                report.diagnostics.push(
                    diag(
                        Code::AnswerAmbiguousAc,
                        format!(
                            "`{shown}` names {} criteria: {}",
                            names.len(),
                            names.join(", ")
                        ),
                    )
                    .with_help("use the full checklist label or an `AC-N` alias"),
                );
                None
            }
            Resolution::UndeclaredTags { index, tags } => {
                let label = task.acceptance.get(index).map_or("", |a| a.label.as_str());
                report.diagnostics.push(
                    diag(
                        Code::AnswerUndeclaredAcTag,
                        format!(
                            "`{shown}` adds {} that the task does not give `{label}`",
                            tags.iter()
                                .map(|t| format!("[{t}]"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                    )
                    .with_help(
                        "an answer cannot re-tag a criterion; drop the tag or change the task",
                    ),
                );
                None
            }
        };
        let criterion = criterion.and_then(|i| match covered.get(&i) {
            Some(first) => {
                report.diagnostics.push(
                    diag(
                        Code::AnswerDuplicateAc,
                        format!(
                            "`{}` already has a row (line {first})",
                            task.acceptance.get(i).map_or("", |a| a.label.as_str())
                        ),
                    )
                    .with_help("keep one row per acceptance criterion"),
                );
                None
            }
            None => {
                covered.insert(i, row.line);
                Some(i)
            }
        });
        let status = ac_status(row, report);
        let evidence_type = evidence_type(row, report);
        let evidence = lint_evidence(row.line, &row.text, &row.evidence, status, anchors, report);
        if let (Some(criterion), Some(status), Some(evidence_type), Some(evidence)) =
            (criterion, status, evidence_type, evidence)
        {
            report.acceptance.push(LintedAc {
                line: row.line,
                criterion,
                status,
                evidence_type,
                evidence,
            });
        }
    }
    for (i, ac) in task.acceptance.iter().enumerate() {
        if !covered.contains_key(&i) {
            let mut d = AnswerDiagnostic::new(
                Code::AnswerMissingAc,
                format!(
                    "acceptance criterion `{}` ({}:{}) has no row",
                    ac.label,
                    task.path.display(),
                    ac.line
                ),
            )
            .with_help(match answer.acceptance_table {
                Some(_) => format!("add a row for it to the AC table{}", alias_hint(ac)),
                None => "the answer has no `| AC | Status | Evidence Type | Evidence |` table"
                    .to_owned(),
            });
            d.line = answer.acceptance_table;
            report.diagnostics.push(d);
        }
    }
}

/// How many unresolved AC cells get a "did you mean" hint.
const MAX_SUGGESTIONS: usize = 50;

fn alias_hint(ac: &super::task_file::TaskAc) -> String {
    match ac.parts.aliases.first() {
        Some(alias) => format!(" (alias `{alias}`)"),
        None => String::new(),
    }
}

fn id_list(task: &TaskFile) -> String {
    let ids: Vec<&str> = task.requirements.iter().map(|r| r.id.as_str()).collect();
    if ids.len() > 20 {
        let first: Vec<&str> = ids.iter().take(20).copied().collect();
        format!("{}, … ({} in all)", first.join(", "), ids.len())
    } else {
        ids.join(", ")
    }
}

fn requirement_status(row: &RequirementRow, report: &mut LintReport) -> Option<RowStatus> {
    let written = unwrap_code(&row.status);
    let status = exact_status(written).filter(|s| *s != RowStatus::NotApplicable);
    if status.is_none() {
        let help = match RowStatus::parse(written) {
            Some(RowStatus::NotApplicable) => {
                "N/A is only for acceptance criteria; a requirement is MET, PARTIAL or UNMET"
                    .to_owned()
            }
            Some(s) => format!("write it in upper case: {s}"),
            None => "a requirement's status is MET, PARTIAL or UNMET".to_owned(),
        };
        report.diagnostics.push(
            AnswerDiagnostic::new(
                Code::AnswerInvalidStatus,
                format!("`{}` is not a requirement status", shorten(written)),
            )
            .at_row(row.line, &row.text)
            .with_help(help),
        );
    }
    status
}

fn ac_status(row: &AcRow, report: &mut LintReport) -> Option<RowStatus> {
    let written = unwrap_code(&row.status);
    let status = exact_status(written);
    if status.is_none() {
        let help = match RowStatus::parse(written) {
            Some(s) => format!("write it in upper case: {s}"),
            None => "an acceptance criterion's status is MET, PARTIAL, UNMET or N/A".to_owned(),
        };
        report.diagnostics.push(
            AnswerDiagnostic::new(
                Code::AnswerInvalidStatus,
                format!(
                    "`{}` is not an acceptance-criterion status",
                    shorten(written)
                ),
            )
            .at_row(row.line, &row.text)
            .with_help(help),
        );
    }
    status
}

/// Upper case exactly, as the contract writes it.
fn exact_status(written: &str) -> Option<RowStatus> {
    RowStatus::parse(written).filter(|s| s.as_str() == written)
}

/// `test`, `command`, `static-ref`, `manual-review`, `llm-judge`, `n/a`, or a `+` compound
/// of distinct kinds other than `n/a` (`test+static-ref`; spaces around `+` allowed).
fn evidence_type(row: &AcRow, report: &mut LintReport) -> Option<EvidenceType> {
    let written = unwrap_code(&row.evidence_type);
    let mut kinds = Vec::new();
    let mut problem = None;
    for part in written.split('+').map(str::trim) {
        match EvidenceKind::parse(part) {
            Some(kind) if kind.as_str() == part => {
                if kinds.contains(&kind) {
                    problem = Some(format!("`{part}` appears twice"));
                }
                kinds.push(kind);
            }
            Some(kind) => problem = Some(format!("write `{}` in lower case", kind.as_str())),
            None => {
                problem = Some(
                    "the kinds are test, command, static-ref, manual-review, llm-judge and n/a, joined with `+`"
                        .to_owned(),
                )
            }
        }
    }
    if problem.is_none() && kinds.len() > 1 && kinds.contains(&EvidenceKind::NotApplicable) {
        problem = Some("`n/a` stands alone; it cannot be part of a compound".to_owned());
    }
    match (problem, EvidenceType::new(kinds)) {
        (None, Some(t)) => Some(t),
        (problem, _) => {
            report.diagnostics.push(
                AnswerDiagnostic::new(
                    Code::AnswerInvalidEvidenceType,
                    format!("`{}` is not an evidence type", shorten(written)),
                )
                .at_row(row.line, &row.text)
                .with_help(problem.unwrap_or_else(|| "give an evidence type".to_owned())),
            );
            None
        }
    }
}

/// Check an evidence cell: not empty, every citation concrete and existing, no globs or
/// directory summaries, and at least one citation on a MET row. Returns the evidence when
/// it has no error.
fn lint_evidence(
    line: usize,
    text: &str,
    evidence: &str,
    status: Option<RowStatus>,
    anchors: &mut AnchorChecker,
    report: &mut LintReport,
) -> Option<String> {
    let before = report.diagnostics.len();
    // Only the findings this cell adds (counting all of them per row would be quadratic).
    let added_error = |report: &LintReport| {
        report
            .diagnostics
            .get(before..)
            .is_some_and(|new| new.iter().any(AnswerDiagnostic::is_error))
    };
    let diag = |code, message: String| AnswerDiagnostic::new(code, message).at_row(line, text);
    let substance = evidence.trim_matches(|c: char| c.is_whitespace() || "`-—–.…*_".contains(c));
    if substance.is_empty() {
        report.diagnostics.push(
            diag(
                Code::AnswerEmptyEvidence,
                "the evidence cell is empty".to_owned(),
            )
            .with_help(
                "cite the file:line that shows it, or say why it is not met / not applicable",
            ),
        );
        return None;
    }
    let scan = scan_evidence(evidence);
    for glob in &scan.globs {
        report.diagnostics.push(
            diag(
                Code::AnswerGlobAnchor,
                format!("`{}` is a glob, not an anchor", shorten(glob)),
            )
            .with_help("expand it into the specific files and lines the verification read, e.g. `src/a.rs:12`"),
        );
    }
    for citation in &scan.citations {
        if let Err(problem) = anchors.check_citation(citation) {
            report
                .diagnostics
                .push(anchor_diagnostic(problem, line, text));
        }
    }
    for path in &scan.bare_paths {
        if let Err(problem) = anchors.check_bare_path(path) {
            report
                .diagnostics
                .push(anchor_diagnostic(problem, line, text));
        }
    }
    // A rejected glob or directory already says why the row has no anchor.
    let attempted = !scan.globs.is_empty() || added_error(report);
    if status == Some(RowStatus::Met) && scan.citations.is_empty() && !attempted {
        report.diagnostics.push(
            diag(
                Code::AnswerMissingAnchor,
                "a MET row cites no `file:line` or `file:start-end`".to_owned(),
            )
            .with_help(
                "cite the concrete lines that show it, e.g. `tests/cli.rs:42` or `src/a.rs:10-24`",
            ),
        );
    }
    (!added_error(report)).then(|| evidence.trim().to_owned())
}

fn anchor_diagnostic(problem: AnchorProblem, line: usize, text: &str) -> AnswerDiagnostic {
    let (code, message, help) = match problem {
        AnchorProblem::FileMissing { path } => (
            Code::AnswerAnchorFileMissing,
            format!("`{}` does not exist under the project root", shorten(&path)),
            "cite a file that exists, relative to the project root",
        ),
        AnchorProblem::Directory { path } => (
            Code::AnswerDirectoryAnchor,
            format!("`{}` is a directory, not a file", shorten(&path)),
            "a directory summary is not an anchor: cite the specific files and lines",
        ),
        AnchorProblem::OutsideProject { path } => (
            Code::AnswerAnchorOutsideProject,
            format!("`{}` is outside the project root", shorten(&path)),
            "cite files inside the project, relative to its root",
        ),
        AnchorProblem::LineOutOfRange { citation, lines } => (
            Code::AnswerAnchorLineOutOfRange,
            format!(
                "`{}` cites lines the file does not have (it has {lines} line{})",
                shorten(&citation),
                if lines == 1 { "" } else { "s" }
            ),
            "lines count from 1 and a range is start-end with start ≤ end ≤ the file's line count",
        ),
    };
    AnswerDiagnostic::new(code, message)
        .at_row(line, text)
        .with_help(help)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::parse::parse_answer;
    use crate::answer::task_file::parse_task_file;
    use std::fs;
    use std::path::Path;

    struct Fixture {
        _tmp: tempfile::TempDir,
        checker: AnchorChecker,
        task: TaskFile,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("src")).unwrap();
        fs::write(tmp.path().join("src/a.rs"), "1\n2\n3\n4\n5\n").unwrap();
        let task = parse_task_file(
            Path::new("task.md"),
            "## Requirements\n- R1 a\n- R2 b\n## Acceptance Criteria\n- [ ] AC-1: CLI emits JSON\n- [ ] [advisory] Docs\n",
        )
        .unwrap();
        Fixture {
            checker: AnchorChecker::new(tmp.path()).unwrap(),
            _tmp: tmp,
            task,
        }
    }

    fn run(rows_req: &str, rows_ac: &str) -> LintReport {
        let mut f = fixture();
        let text = format!(
            "Verdict: PASS\n\n| Req | Status | Evidence |\n|---|---|---|\n{rows_req}\n| AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n{rows_ac}"
        );
        lint(&parse_answer(&text), &f.task, &mut f.checker)
    }

    fn codes(report: &LintReport) -> Vec<Code> {
        report.diagnostics.iter().map(|d| d.code).collect()
    }

    const GOOD_REQ: &str = "| R1 | MET | `src/a.rs:1` |\n| R2 | PARTIAL | src/a.rs:2-3 |\n";
    const GOOD_AC: &str =
        "| AC-1 | MET | test | `src/a.rs:4` |\n| Docs | N/A | n/a | not shipped yet |\n";

    #[test]
    fn a_clean_answer_has_no_diagnostics_and_typed_rows() {
        let report = run(GOOD_REQ, GOOD_AC);
        assert_eq!(codes(&report), []);
        assert_eq!(report.requirements.len(), 2);
        assert_eq!(report.acceptance[1].criterion, 1);
        assert_eq!(report.acceptance[1].status, RowStatus::NotApplicable);
    }

    #[test]
    fn missing_duplicate_and_unknown_requirements() {
        let report = run(
            "| R1 | MET | src/a.rs:1 |\n| R1 | MET | src/a.rs:1 |\n| R7 | MET | src/a.rs:1 |\n",
            GOOD_AC,
        );
        assert_eq!(
            codes(&report),
            [
                Code::AnswerMissingRequirement,
                Code::AnswerDuplicateRequirement,
                Code::AnswerUnknownRequirement
            ]
        );
        assert_eq!(report.diagnostics[0].line, Some(3), "at the table header");
        assert!(report.diagnostics[0].message.contains("R2"));
        assert_eq!(report.diagnostics[1].line, Some(6));
    }

    #[test]
    fn invalid_statuses_and_evidence_types() {
        let report = run(
            "| R1 | met | src/a.rs:1 |\n| R2 | N/A | src/a.rs:1 |\n",
            "| AC-1 | DONE | Test | src/a.rs:1 |\n| Docs | MET | static-ref+n/a | src/a.rs:1 |\n",
        );
        assert_eq!(
            codes(&report),
            [
                Code::AnswerInvalidStatus,
                Code::AnswerInvalidStatus,
                Code::AnswerInvalidStatus,
                Code::AnswerInvalidEvidenceType,
                Code::AnswerInvalidEvidenceType
            ]
        );
        assert_eq!(
            report.diagnostics[0].help.as_deref(),
            Some("write it in upper case: MET")
        );
    }

    #[test]
    fn compound_evidence_types_are_accepted() {
        let report = run(GOOD_REQ, "| AC-1 | MET | test + static-ref | src/a.rs:4 |\n| Docs | MET | manual-review | src/a.rs:1 |\n");
        assert_eq!(codes(&report), []);
        assert_eq!(
            report.acceptance[0].evidence_type.to_string(),
            "test+static-ref"
        );
    }

    #[test]
    fn empty_evidence_and_met_without_anchor() {
        let report = run(
            "| R1 | MET |   |\n| R2 | MET | the parser handles it |\n",
            "| AC-1 | UNMET | test | no evidence found |\n| Docs | N/A | n/a | — |\n",
        );
        assert_eq!(
            codes(&report),
            [
                Code::AnswerEmptyEvidence,
                Code::AnswerMissingAnchor,
                Code::AnswerEmptyEvidence
            ]
        );
    }

    #[test]
    fn anchors_must_be_concrete_and_exist() {
        let report = run(
            "| R1 | MET | src/*.rs:1 |\n| R2 | MET | src/a.rs:6 and src/b.rs:1 and src/:1 |\n",
            "| AC-1 | MET | test | see src/ and src/a.rs:2 |\n| Docs | N/A | n/a | src/nope.md |\n",
        );
        assert_eq!(
            codes(&report),
            [
                Code::AnswerGlobAnchor,
                Code::AnswerAnchorLineOutOfRange,
                Code::AnswerAnchorFileMissing,
                Code::AnswerDirectoryAnchor,
                Code::AnswerDirectoryAnchor,
                Code::AnswerAnchorFileMissing
            ]
        );
    }

    #[test]
    fn ac_resolution_problems_are_row_diagnostics() {
        let report = run(
            GOOD_REQ,
            "| CLI outputs JSON | MET | test | src/a.rs:1 |\n| [advisory] AC-1 | MET | test | src/a.rs:1 |\n| AC-1 | MET | test | src/a.rs:1 |\n| AC-1 | MET | test | src/a.rs:1 |\n",
        );
        assert_eq!(
            codes(&report),
            [
                Code::AnswerMissingAc,
                Code::AnswerUnresolvedAc,
                Code::AnswerUndeclaredAcTag,
                Code::AnswerDuplicateAc
            ]
        );
        assert!(report.diagnostics[0].message.contains("[advisory] Docs"));
        assert!(report.diagnostics[1]
            .help
            .as_deref()
            .unwrap()
            .contains("AC-1: CLI emits JSON"));
    }
}
