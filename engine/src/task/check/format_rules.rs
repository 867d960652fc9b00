//! L3, each section's format: required sections with substance, R-numbered requirements,
//! acceptance criteria spur can read (the done gate's completeness check reads them the
//! same way), a Solution that cites `file:line`, a Review with a P1–P4 findings table, a
//! Plan that is a list, no open boxes on a closed task, no Review verdict contradicting a
//! PASS in Testing.

use super::body_shape::{
    has_file_line_citation, has_populated_priority_table, is_placeholder, is_prose_only_review,
    is_r_item, is_review_scaffold, last_verdict, unchecked_boxes,
};
use super::{Ctx, Rule};
use crate::diagnostic::Severity;
use crate::task_file::{parse_task_file, TaskFileError};

pub(super) fn check(ctx: &mut Ctx<'_>) {
    parsed_criteria(ctx);
    requirements(ctx);
    acceptance_criteria(ctx);
    solution(ctx);
    review(ctx);
    required_placeholders(ctx);
    plan(ctx);
    if matches!(ctx.status, "done" | "cancelled") {
        open_boxes(ctx);
        review_against_testing(ctx);
    }
}

/// spur's own reading of the requirement ids and criteria (what the done gate and the
/// answer lint read): an error in it is an error here; at testing and done, a task with
/// no requirement id cannot be certified, so it is an error too.
fn parsed_criteria(ctx: &mut Ctx<'_>) {
    match parse_task_file(ctx.doc.path(), ctx.doc.text()) {
        Ok(task) => {
            let criteria_text = ctx
                .doc
                .section_body("Acceptance Criteria")
                .map(|body| !is_placeholder(&without_fence_lines(body)))
                .unwrap_or(false);
            if criteria_text && task.acceptance.is_empty() {
                let span = ctx.section_span("Acceptance Criteria");
                ctx.push(
                    Rule::AcChecklist,
                    Severity::Warning,
                    "Acceptance Criteria",
                    span,
                    "Acceptance Criteria has text but no checklist item (`- [ ] …`) or `Scenario:`",
                    Some("write each criterion as a checklist item or a gherkin scenario: the verdict needs a row per criterion".to_owned()),
                );
            }
        }
        Err(TaskFileError::NoRequirements { .. }) => {
            if matches!(ctx.status, "testing" | "done") {
                let span = ctx.section_span("Requirements");
                let status = ctx.status;
                ctx.push(
                    Rule::RequirementIds,
                    Severity::Error,
                    "Requirements",
                    span,
                    format!("a task at `{status}` must declare requirement ids (`R1.`, `R2.` …): the done gate needs a verdict row for each"),
                    Some("list the requirements as `- [ ] R1. …` under `### Requirements`".to_owned()),
                );
            }
        }
        Err(error) => {
            let span = match error_line(&error) {
                Some(line) => ctx.line_span(offset_of_line(ctx.doc.text(), line)),
                None => ctx.body_start_span(),
            };
            let help = miette::Diagnostic::help(&error).map(|h| h.to_string());
            let message = strip_location(&error.to_string());
            ctx.push(
                Rule::TaskFileShape,
                Severity::Error,
                "",
                span,
                message,
                help,
            );
        }
    }
}

fn requirements(ctx: &mut Ctx<'_>) {
    let Some(body) = ctx.doc.section_body("Requirements").map(str::to_owned) else {
        return;
    };
    let span = ctx.section_span("Requirements");
    if is_placeholder(&body) {
        if ctx.required("Requirements") {
            ctx.push(
                Rule::RequirementsEmpty,
                Severity::Error,
                "Requirements",
                span,
                "Requirements is placeholder-only — a task with no requirements is unverifiable",
                None,
            );
        }
        return;
    }
    // Count R-numbered item lines against prose blocks; prose after the first item is
    // that item's continuation, but a bold-labelled block still counts as prose.
    let mut numbered = 0;
    let mut prose = 0;
    let mut seen_item = false;
    for block in body.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let items = block.lines().filter(|l| is_r_item(l)).count();
        if items > 0 {
            numbered += items;
            seen_item = true;
        } else if !seen_item || starts_bold(block) {
            prose += 1;
        }
    }
    if numbered == 0 || prose > numbered {
        ctx.push(
            Rule::RequirementsFormat,
            Severity::Warning,
            "Requirements",
            span,
            "Requirements should be R-numbered items (R1., R2., …)",
            None,
        );
    }
}

fn starts_bold(block: &str) -> bool {
    let trimmed = block.trim_start();
    let marks = trimmed.len() - trimmed.trim_start_matches(['*', '_']).len();
    (1..=2).contains(&marks)
        && trimmed
            .get(marks..)
            .is_some_and(|rest| rest.starts_with(|c: char| !c.is_whitespace()))
}

fn acceptance_criteria(ctx: &mut Ctx<'_>) {
    let Some(body) = ctx.doc.section_body("Acceptance Criteria") else {
        return;
    };
    if ctx.required("Acceptance Criteria") && is_placeholder(&without_fence_lines(body)) {
        let span = ctx.section_span("Acceptance Criteria");
        ctx.push(
            Rule::AcEmpty,
            Severity::Error,
            "Acceptance Criteria",
            span,
            "Acceptance Criteria is placeholder-only — populate it with real criteria",
            None,
        );
    }
}

fn solution(ctx: &mut Ctx<'_>) {
    let Some(body) = ctx.doc.section_body("Solution") else {
        return;
    };
    if !is_placeholder(body) && !has_file_line_citation(body) {
        let span = ctx.section_span("Solution");
        ctx.push(
            Rule::SolutionFileLine,
            Severity::Error,
            "Solution",
            span,
            "Solution must cite at least one `file:line`",
            Some("a change map: `src/x.rs:12` in backticks, or a table with the file and the line in adjacent cells".to_owned()),
        );
    }
}

fn review(ctx: &mut Ctx<'_>) {
    let Some(body) = ctx.doc.section_body("Review") else {
        return;
    };
    let required = ctx.required("Review");
    let allowed = required || ctx.row.is_some_and(|r| r.optional.contains(&"Review"));
    let tolerated = if required {
        is_placeholder(body)
    } else {
        is_review_scaffold(body) || is_prose_only_review(body)
    };
    if allowed && !tolerated && !has_populated_priority_table(body) {
        let span = ctx.section_span("Review");
        ctx.push(
            Rule::ReviewPriorityTable,
            Severity::Error,
            "Review",
            span,
            "Review must contain a P1–P4 priority findings table",
            Some("a table row per finding, `| P2 | file | finding | … |`; `| P4 | — | — | No findings |` when there are none".to_owned()),
        );
    }
}

fn required_placeholders(ctx: &mut Ctx<'_>) {
    for name in ["Testing", "Solution"] {
        if !ctx.required(name) {
            continue;
        }
        let Some(body) = ctx.doc.section_body(name) else {
            continue;
        };
        if is_placeholder(body) {
            let span = ctx.section_span(name);
            let status = ctx.status;
            ctx.push(
                Rule::RequiredSectionPlaceholder,
                Severity::Error,
                name,
                span,
                format!("{name} is required at `{status}` but holds only placeholders"),
                Some(format!(
                    "run `spur task record <wbs>` to fill it from the verdict artifact, or write it with `spur task update <wbs> --section {name} --from-file FILE`"
                )),
            );
        }
    }
}

fn plan(ctx: &mut Ctx<'_>) {
    let Some(body) = ctx.doc.section_body("Plan") else {
        return;
    };
    if is_placeholder(body) {
        return;
    }
    let is_list = body.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("- ")
            || t.starts_with("* ")
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    if !is_list && !body.contains('|') {
        let span = ctx.section_span("Plan");
        ctx.push(
            Rule::PlanFormat,
            Severity::Warning,
            "Plan",
            span,
            "Plan should be an ordered checklist or a table, not free-form prose",
            None,
        );
    }
}

fn open_boxes(ctx: &mut Ctx<'_>) {
    let start = ctx.doc.frontmatter().map_or(0, |f| f.block.end);
    let boxes = unchecked_boxes(ctx.doc.content());
    let Some(first) = boxes.first() else {
        return;
    };
    let severity = if ctx.transition_target {
        Severity::Error
    } else {
        Severity::Warning
    };
    let span = ctx.line_span(start + first);
    let status = ctx.status;
    ctx.push(
        Rule::UncheckedChecklist,
        severity,
        "",
        span,
        format!(
            "a {status} task carries {} unchecked box{} (`- [ ]`)",
            boxes.len(),
            if boxes.len() == 1 { "" } else { "es" }
        ),
        Some(
            "tick what is done (`- [x]`) or remove what was dropped before closing the task"
                .to_owned(),
        ),
    );
}

fn review_against_testing(ctx: &mut Ctx<'_>) {
    let (Some(review), Some(testing)) = (
        ctx.doc.section_body("Review").and_then(last_verdict),
        ctx.doc.section_body("Testing").and_then(last_verdict),
    ) else {
        return;
    };
    let upper = review.to_uppercase();
    let not_passing = upper
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .any(|w| matches!(w, "PARTIAL" | "FAIL" | "REQUEST-CHANGES"));
    if not_passing && testing.to_uppercase().starts_with("PASS") {
        let span = ctx.section_span("Review");
        ctx.push(
            Rule::ReviewTestingContradiction,
            Severity::Error,
            "Review",
            span,
            format!("Review's verdict is \"{review}\" while Testing records PASS"),
            Some(
                "reconcile the stale Review: its last `Verdict:` line is the one that counts"
                    .to_owned(),
            ),
        );
    }
}

/// `body` without its code-fence marker lines (a gherkin block's scenarios are content).
fn without_fence_lines(body: &str) -> String {
    body.lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("```") || t.starts_with("~~~"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn error_line(error: &TaskFileError) -> Option<usize> {
    match error {
        TaskFileError::DuplicateRequirement { line, .. }
        | TaskFileError::DuplicateCriterion { line, .. }
        | TaskFileError::Unclosed { line, .. }
        | TaskFileError::UntitledScenario { line, .. } => Some(*line),
        _ => None,
    }
}

/// `task file x.md:12: message` → `message`: the place is shown by the report.
fn strip_location(message: &str) -> String {
    message
        .strip_prefix("task file ")
        .and_then(|rest| rest.split_once(": "))
        .map_or_else(|| message.to_owned(), |(_, m)| m.to_owned())
}

fn offset_of_line(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}
