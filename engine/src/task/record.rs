//! `spur task record`: the task file's Testing and Review sections written from the verdict
//! artifact, and its Solution from the working tree's diff when the implementer left it
//! empty — the reference's record step, one verb instead of a shell script.
//!
//! - **Testing**: the verdict (the harsher of the stored one and the one its rows
//!   recompute to) and a table per requirement and acceptance criterion;
//! - **Review**: the artifact's checks as a P1–P4 table, written only where no one else
//!   wrote a review (the section is empty, or record wrote it before: its marker);
//! - **Solution** (`--solution-from-diff`, only when empty): one `file:line` per changed
//!   file and hunk (`git diff -U0 HEAD`, and each untracked file at line 1), leaving out
//!   task and feature files and the state directory.
//!
//! These are the sections the tree fingerprint leaves out (`tree::task_sections`): writing
//! them after verify does not make the verify stale. The Requirements and Acceptance
//! Criteria checkboxes are not ticked — that would.

use std::path::Path;
use std::time::Duration;

use spur_process::ProcessSpec;

use crate::task_file::{SpanEdit, TaskDocument};
use crate::verdict::{aggregate, ArtifactOutcome, Verdict};

use super::check::is_placeholder;

/// Marks a Review that `spur task record` wrote, so a later record may replace it.
pub const RECORD_REVIEW_MARKER: &str = "<!-- spur:record-review -->";

/// How long `git` may take to produce the diff.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether a section (absent: `None`) has nothing a person wrote: absent, only
/// placeholders, or an old pipeline stub (`Pipeline run 0592 …`).
pub fn section_is_bare(body: Option<&str>) -> bool {
    let Some(body) = body else {
        return true;
    };
    let trimmed = body.trim();
    is_placeholder(body)
        || trimmed
            .strip_prefix("Pipeline run ")
            .is_some_and(|rest| rest.len() >= 4 && rest.bytes().take(4).all(|b| b.is_ascii_digit()))
}

/// Whether a Review is record's own (its marker, or the older heading without one).
pub fn is_record_review(body: Option<&str>) -> bool {
    body.is_some_and(|b| {
        let t = b.trim_start();
        t.starts_with(RECORD_REVIEW_MARKER)
            || t.starts_with("**SECU findings** (pipeline verify step — verdict:")
    })
}

/// The verdict of an artifact as record writes it: the harsher of the stored verdict and
/// the recomputed one; UNKNOWN for a missing or unusable artifact.
pub fn effective_verdict(outcome: &ArtifactOutcome) -> Verdict {
    match outcome {
        ArtifactOutcome::Valid(artifact) => artifact.verdict.harsher(aggregate(artifact).verdict),
        _ => Verdict::Unknown,
    }
}

fn cell(text: Option<&str>) -> String {
    text.unwrap_or("")
        .replace(['\n', '\r'], " ")
        .replace('|', "\\|")
}

/// The Testing section's body.
pub fn render_testing(outcome: &ArtifactOutcome) -> String {
    let verdict = effective_verdict(outcome);
    let mut lines = vec![
        "**Pipeline verify results**".to_owned(),
        String::new(),
        format!("- Verdict: {verdict} (from verdict artifact)"),
        String::new(),
        "| Requirement | Status | Evidence |".to_owned(),
        "|-------------|--------|----------|".to_owned(),
    ];
    let artifact = match outcome {
        ArtifactOutcome::Valid(artifact) => Some(artifact),
        _ => None,
    };
    let requirements = artifact
        .map(|a| a.requirements.as_slice())
        .unwrap_or_default();
    if requirements.is_empty() {
        lines.push(format!(
            "| — | — | No requirements recorded; verify verdict {verdict} |"
        ));
    }
    for row in requirements {
        lines.push(format!(
            "| {} | {} | {} |",
            cell(Some(&row.id)),
            row.status,
            cell(row.evidence.as_deref())
        ));
    }
    let criteria = artifact
        .map(|a| a.acceptance_criteria.as_slice())
        .unwrap_or_default();
    if !criteria.is_empty() {
        lines.push(String::new());
        lines.push("| Acceptance Criteria | Status | Evidence Type | Evidence |".to_owned());
        lines.push("|---------------------|--------|---------------|----------|".to_owned());
        for row in criteria {
            let kind = row
                .evidence_type
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            lines.push(format!(
                "| {} | {} | {} | {} |",
                cell(Some(&row.id)),
                row.status,
                cell(Some(&kind)),
                cell(row.evidence.as_deref())
            ));
        }
    }
    lines.push(String::new());
    lines.push(
        "- Coverage: N/A (verdict-based; the verify step does not measure code coverage)"
            .to_owned(),
    );
    lines.join("\n")
}

/// The Review section's body: the artifact's checks as P1–P4 findings (a failing or
/// warning check by its severity — blocker P1, major P2, minor P3, advisory P4; without
/// one, fail P1 and warn P2 — a passing one P4), or one P4 row when there are none.
pub fn render_review(outcome: &ArtifactOutcome) -> String {
    use crate::verdict::{CheckStatus, Severity};
    let verdict = effective_verdict(outcome);
    let mut lines = vec![
        RECORD_REVIEW_MARKER.to_owned(),
        String::new(),
        format!("**SECU findings** (pipeline verify step — verdict: {verdict})"),
        String::new(),
        "| Priority | Dimension | Location | Finding |".to_owned(),
        "|----------|-----------|----------|---------|".to_owned(),
    ];
    let checks = match outcome {
        ArtifactOutcome::Valid(artifact) => artifact.checks.as_slice(),
        _ => &[],
    };
    if checks.is_empty() {
        lines.push(format!(
            "| P4 | — | — | No P1–P3 findings; verify verdict {verdict} |"
        ));
    }
    for check in checks {
        let priority = match (check.status, check.severity) {
            (CheckStatus::Pass, _) => "P4",
            (_, Some(Severity::Blocker)) => "P1",
            (_, Some(Severity::Major)) => "P2",
            (_, Some(Severity::Minor)) => "P3",
            (_, Some(Severity::Advisory)) => "P4",
            (CheckStatus::Fail, None) => "P1",
            (_, None) => "P2",
        };
        let finding = match check.evidence.as_deref() {
            Some(e) if !e.trim().is_empty() => cell(Some(e)),
            _ => check.status.to_string(),
        };
        lines.push(format!(
            "| {priority} | {} | — | {finding} |",
            cell(Some(&check.name))
        ));
    }
    lines.join("\n")
}

/// The edits that tick the open checkbox (`- [ ] R1. …`) of each requirement the verdict
/// proves — a MET row for its id (an acceptance-criterion row counts for the `R<n>` its id
/// starts with) — in the Requirements and Acceptance Criteria sections, and of each
/// checklist criterion a MET row resolves to (`- [ ] AC-1: …`). Nothing when the
/// verdict is FAIL or UNKNOWN; a box the verdict does not name stays as it is — silence is
/// not proof. Each edit is the three bytes `[ ]`.
pub fn proven_box_edits(document: &TaskDocument, outcome: &ArtifactOutcome) -> Vec<SpanEdit> {
    use crate::verdict::RowStatus;
    let ArtifactOutcome::Valid(artifact) = outcome else {
        return Vec::new();
    };
    if matches!(effective_verdict(outcome), Verdict::Fail | Verdict::Unknown) {
        return Vec::new();
    }
    let proven: Vec<&str> = artifact
        .requirements
        .iter()
        .filter(|r| r.status == RowStatus::Met)
        .map(|r| r.id.as_str())
        .chain(
            artifact
                .acceptance_criteria
                .iter()
                .filter(|r| r.status == RowStatus::Met)
                .map(|r| r.id.as_str()),
        )
        .filter_map(requirement_prefix)
        .collect();
    // Checklist criteria are resolved the way the done gate's completeness check resolves
    // a row (its label, alias, title): their 1-based lines.
    let mut proven_lines: Vec<usize> = Vec::new();
    if let Ok(task) = crate::task_file::parse_task_file(document.path(), document.text()) {
        let index = crate::answer::ac_identity::AcIndex::new(&task.acceptance);
        for row in artifact
            .acceptance_criteria
            .iter()
            .filter(|r| r.status == RowStatus::Met)
        {
            if let crate::answer::ac_identity::Resolution::One(i) = index.resolve(&row.id) {
                if let Some(ac) = task.acceptance.get(i) {
                    proven_lines.push(ac.line);
                }
            }
        }
    }
    let mut edits = Vec::new();
    for name in ["Requirements", "Acceptance Criteria"] {
        let Some(section) = document.section(name) else {
            continue;
        };
        let body = section.body_range();
        let mut offset = body.start;
        let mut fence = false;
        for line in document
            .text()
            .get(body)
            .unwrap_or("")
            .split_inclusive('\n')
        {
            let start = offset;
            offset += line.len();
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fence = !fence;
                continue;
            }
            if fence {
                continue;
            }
            let Some(after) = trimmed
                .strip_prefix(['-', '*', '+'])
                .and_then(|r| r.strip_prefix(' '))
            else {
                continue;
            };
            let Some(label) = after.strip_prefix("[ ] ") else {
                continue;
            };
            let by_id = requirement_prefix(label.trim_start_matches(['*', '_']))
                .is_some_and(|id| proven.contains(&id));
            let by_criterion =
                name == "Acceptance Criteria" && proven_lines.contains(&document.line_of(start));
            if by_id || by_criterion {
                let box_at = start + (line.len() - trimmed.len()) + (trimmed.len() - after.len());
                edits.push(SpanEdit {
                    range: box_at..box_at + 3,
                    text: "[x]".to_owned(),
                });
            }
        }
    }
    edits
}

/// `R12` of `R12. …`, `R12 (detail)`, `R12`: an `R` and digits not followed by a word
/// character.
fn requirement_prefix(text: &str) -> Option<&str> {
    let digits = text
        .strip_prefix('R')?
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let end = 1 + digits;
    let next = text.get(end..)?.chars().next();
    (digits > 0 && !next.is_some_and(|c| c.is_alphanumeric() || c == '_'))
        .then(|| text.get(..end))?
}

/// The Solution section's body from the working tree's changes under `project_root`:
/// the first changed line of each hunk of `git diff -U0 HEAD`, each untracked file at
/// line 1 — except task and feature files and anything under `state_rel` (the state
/// directory, relative to the root). Without git, or with no change: a row saying so.
pub fn render_solution_from_diff(project_root: &Path, state_rel: Option<&Path>) -> String {
    let mut citations = Vec::new();
    if let Some(diff) = git(
        project_root,
        &["diff", "-U0", "--no-color", "--no-ext-diff", "HEAD"],
    ) {
        citations.extend(diff_citations(&diff));
    }
    if let Some(untracked) = git(
        project_root,
        &["ls-files", "--others", "--exclude-standard"],
    ) {
        citations.extend(
            untracked
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|path| format!("{path}:1")),
        );
    }
    let skipped = |citation: &str| {
        let path = Path::new(citation.rsplit_once(':').map_or(citation, |(p, _)| p));
        crate::tree::is_task_or_feature_file(path)
            || state_rel.is_some_and(|state| path.starts_with(state))
    };
    citations.retain(|c| !skipped(c));
    citations.sort();
    citations.dedup();
    let mut lines = vec![
        "Change map (written by `spur task record --solution-from-diff`: the implement step left Solution empty).".to_owned(),
        "Each entry cites the first changed line of a hunk (`file:line`).".to_owned(),
        String::new(),
        "| Change (`file:line`) |".to_owned(),
        "|----------------------|".to_owned(),
    ];
    if citations.is_empty() {
        lines.push("| (no changes detected) |".to_owned());
    }
    for citation in citations {
        lines.push(format!("| `{}` |", citation.replace('`', "'")));
    }
    lines.join("\n")
}

/// `git ARGS` in `dir`: its stdout when it exits 0.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let outcome = ProcessSpec::new("git", args)
        .cwd(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .timeout(GIT_TIMEOUT)
        .run();
    outcome
        .success()
        .then(|| String::from_utf8_lossy(&outcome.stdout).into_owned())
}

/// `path:line` of the first new line of every hunk of a `git diff -U0`.
fn diff_citations(diff: &str) -> Vec<String> {
    let mut citations = Vec::new();
    let mut file: Option<&str> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = path.strip_prefix("b/");
            continue;
        }
        let (Some(path), Some(hunk)) = (file, line.strip_prefix("@@ ")) else {
            continue;
        };
        let new = hunk
            .split_whitespace()
            .find_map(|part| part.strip_prefix('+'))
            .and_then(|range| range.split(',').next())
            .and_then(|start| start.parse::<u64>().ok());
        if let Some(start) = new {
            citations.push(format!("{path}:{}", start.max(1)));
        }
    }
    citations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::parse_artifact;

    const ARTIFACT: &str = r#"{"wbs":"0592","verdict":"PASS",
      "requirements":[{"id":"R1","status":"MET","evidence":"`hello.txt:1` | piped"}],
      "acceptanceCriteria":[{"id":"AC-1","status":"MET","evidenceType":"command","evidence":"`./check` passes"}],
      "checks":[{"name":"gate-quality","status":"pass","evidence":"PASS"},{"name":"lint","status":"fail","severity":"major","evidence":"two warnings"}]}"#;

    #[test]
    fn testing_and_review_render_the_verdict_and_its_rows() {
        let outcome = parse_artifact(ARTIFACT.as_bytes());
        let testing = render_testing(&outcome);
        assert!(
            testing.contains("- Verdict: PARTIAL (from verdict artifact)"),
            "{testing}"
        );
        assert!(testing.contains("| R1 | MET | `hello.txt:1` \\| piped |"));
        assert!(testing.contains("| AC-1 | MET | command | `./check` passes |"));
        let review = render_review(&outcome);
        assert!(review.starts_with(RECORD_REVIEW_MARKER));
        assert!(review.contains("| P4 | gate-quality | — | PASS |"));
        assert!(review.contains("| P2 | lint | — | two warnings |"));
        assert!(is_record_review(Some(&review)));
        let missing = parse_artifact(b"");
        assert!(
            render_testing(&missing).contains("No requirements recorded; verify verdict UNKNOWN")
        );
        assert!(render_review(&missing)
            .contains("| P4 | — | — | No P1–P3 findings; verify verdict UNKNOWN |"));
    }

    #[test]
    fn diff_hunks_become_file_line_citations() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -3,0 +4,2 @@ fn x\n+a\n@@ -10 +12 @@\n-b\n+c\ndiff --git a/gone.rs b/gone.rs\n--- a/gone.rs\n+++ /dev/null\n@@ -1,3 +0,0 @@\n";
        assert_eq!(diff_citations(diff), ["src/a.rs:4", "src/a.rs:12"]);
    }

    #[test]
    fn met_requirements_get_their_boxes_ticked_and_nothing_else_changes() {
        let text = "---\nstatus: testing\n---\n### Requirements\n- [ ] R1. a\n- [ ] **R2** b\n- [ ] R3. c\n  - [ ] R10. d\n### Acceptance Criteria\n- [ ] R1 — scenario\n- [ ] AC-2: `./check` passes\n- [ ] AC-3: not proven\n```\n- [ ] R1. in code\n```\n### Notes\n- [ ] R1. elsewhere\n";
        let document = TaskDocument::parse(std::path::Path::new("t.md"), text.to_owned()).unwrap();
        let outcome = parse_artifact(
            br#"{"wbs":"1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"x"},{"id":"R2 (b)","status":"MET","evidence":"x"},{"id":"R3","status":"PARTIAL","evidence":"x"}],"acceptanceCriteria":[{"id":"AC-2","status":"MET","evidenceType":"command","evidence":"x"},{"id":"AC-3","status":"PARTIAL","evidenceType":"command","evidence":"x"}]}"#,
        );
        let edits = proven_box_edits(&document, &outcome);
        let ticked = document.apply_edits(&edits).unwrap();
        assert_eq!(
            ticked.text(),
            text.replacen("- [ ] R1. a", "- [x] R1. a", 1)
                .replacen("- [ ] **R2**", "- [x] **R2**", 1)
                .replacen("- [ ] R1 — scenario", "- [x] R1 — scenario", 1)
                .replacen("- [ ] AC-2", "- [x] AC-2", 1)
        );
        let failing = parse_artifact(br#"{"wbs":"1","verdict":"FAIL","requirements":[{"id":"R1","status":"MET","evidence":"x"},{"id":"R2","status":"UNMET","evidence":"x"}],"acceptanceCriteria":[]}"#);
        assert!(proven_box_edits(&document, &failing).is_empty());
    }

    #[test]
    fn bare_sections() {
        assert!(section_is_bare(None));
        assert!(section_is_bare(Some("\n<!-- guidance -->\n")));
        assert!(section_is_bare(Some("Pipeline run 0592 — placeholder")));
        assert!(!section_is_bare(Some("| `a.rs:1` |")));
    }
}
