//! The section matrix: for each template variant (the frontmatter's `template:`, default
//! `standard`) and status, the sections required, allowed and forbidden — the reference's
//! `config/tasks/section-matrix.yaml`, as data. `gate` marks the rows whose missing
//! sections are errors rather than warnings (done). It also says which sections a new task
//! is created with.

/// One status row of one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MatrixRow {
    pub(crate) required: &'static [&'static str],
    pub(crate) optional: &'static [&'static str],
    pub(crate) forbidden: &'static [&'static str],
    /// A missing required section is an error, not a warning.
    pub(crate) gate: bool,
}

const fn row(
    required: &'static [&'static str],
    optional: &'static [&'static str],
    forbidden: &'static [&'static str],
    gate: bool,
) -> MatrixRow {
    MatrixRow {
        required,
        optional,
        forbidden,
        gate,
    }
}

/// The template variants, in the reference's order.
pub const TASK_VARIANTS: &[&str] = &[
    "standard",
    "feature-impl",
    "issue",
    "review",
    "meta",
    "brainstorm",
];

type Rows = [(&'static str, MatrixRow); 7];

const BG: &[&str] = &["Background"];
const NONE: &[&str] = &[];
const SRT: &[&str] = &["Solution", "Review", "Testing"];
const SPEC: &[&str] = &["Background", "Acceptance Criteria", "Design", "Plan"];
const DONE_OPTIONAL: &[&str] = &[
    "Background",
    "Requirements",
    "Acceptance Criteria",
    "Q&A",
    "Design",
    "Plan",
];

const STANDARD: Rows = [
    ("backlog", row(BG, NONE, SRT, false)),
    ("todo", row(SPEC, &["Q&A", "Requirements"], SRT, false)),
    (
        "wip",
        row(
            SPEC,
            &["Q&A", "Requirements", "Solution"],
            &["Review"],
            false,
        ),
    ),
    (
        "testing",
        row(&["Solution", "Testing"], BG, &["Review"], false),
    ),
    ("done", row(SRT, DONE_OPTIONAL, NONE, true)),
    ("blocked", row(BG, &["Plan", "Solution"], NONE, false)),
    ("cancelled", row(NONE, BG, NONE, false)),
];

const FEATURE_IMPL: Rows = [
    ("backlog", row(BG, NONE, SRT, false)),
    ("todo", row(SPEC, &["Q&A", "Requirements"], SRT, false)),
    (
        "wip",
        row(
            SPEC,
            &["Q&A", "Requirements", "Solution"],
            &["Review"],
            false,
        ),
    ),
    (
        "testing",
        row(
            &["Solution", "Testing"],
            &[
                "Background",
                "Requirements",
                "Acceptance Criteria",
                "Design",
                "Plan",
            ],
            &["Review"],
            false,
        ),
    ),
    ("done", row(SRT, DONE_OPTIONAL, NONE, true)),
    ("blocked", row(BG, &["Plan", "Solution"], NONE, false)),
    ("cancelled", row(NONE, BG, NONE, false)),
];

const ISSUE: Rows = [
    ("backlog", row(BG, NONE, &["Solution", "Review"], false)),
    (
        "todo",
        row(
            &["Background", "Root Cause", "Plan"],
            &["Acceptance Criteria", "Design", "Q&A"],
            &["Solution", "Review"],
            false,
        ),
    ),
    (
        "wip",
        row(
            &["Background", "Root Cause", "Plan"],
            &["Design", "Solution", "Q&A"],
            &["Review"],
            false,
        ),
    ),
    (
        "testing",
        row(
            &["Root Cause", "Solution", "Testing"],
            BG,
            &["Review"],
            false,
        ),
    ),
    (
        "done",
        row(
            &["Root Cause", "Solution", "Testing", "Review"],
            &["Background", "Acceptance Criteria", "Design", "Plan", "Q&A"],
            NONE,
            true,
        ),
    ),
    ("blocked", row(BG, &["Root Cause", "Plan"], NONE, false)),
    ("cancelled", row(NONE, BG, NONE, false)),
];

const REVIEW: Rows = [
    ("backlog", row(BG, &["Plan", "Review"], &["Testing"], false)),
    (
        "todo",
        row(
            &["Background", "Plan"],
            &["Q&A", "Review"],
            &["Testing"],
            false,
        ),
    ),
    (
        "wip",
        row(
            &["Background", "Review"],
            &["Plan", "Q&A", "Solution", "Testing"],
            NONE,
            false,
        ),
    ),
    (
        "testing",
        row(
            &["Background", "Review"],
            &["Plan", "Solution", "Testing"],
            NONE,
            false,
        ),
    ),
    (
        "done",
        row(
            &["Background", "Review"],
            &["Plan", "Q&A", "Solution", "Testing"],
            NONE,
            true,
        ),
    ),
    (
        "blocked",
        row(BG, &["Plan", "Review", "Solution"], NONE, false),
    ),
    ("cancelled", row(NONE, BG, NONE, false)),
];

const META: Rows = [
    ("backlog", row(BG, NONE, &["Review"], false)),
    (
        "todo",
        row(
            &["Background", "Plan"],
            &["Q&A", "Design"],
            &["Review"],
            false,
        ),
    ),
    (
        "wip",
        row(
            &["Background", "Plan"],
            &["Q&A", "Design", "Solution"],
            &["Review"],
            false,
        ),
    ),
    (
        "testing",
        row(
            &["Background", "Plan"],
            &["Solution", "Testing"],
            NONE,
            false,
        ),
    ),
    ("done", row(&["Background", "Plan"], SRT, NONE, false)),
    ("blocked", row(BG, &["Plan"], NONE, false)),
    ("cancelled", row(NONE, BG, NONE, false)),
];

const BRAINSTORM: Rows = [
    ("backlog", row(BG, NONE, SRT, false)),
    ("todo", row(BG, &["Q&A"], NONE, false)),
    (
        "wip",
        row(
            &["Background", "Plan"],
            &["Q&A", "Design"],
            &["Review"],
            false,
        ),
    ),
    (
        "testing",
        row(
            &["Background", "Solution"],
            &["Testing"],
            &["Review"],
            false,
        ),
    ),
    ("done", row(&["Background", "Solution"], NONE, NONE, false)),
    ("blocked", row(BG, NONE, NONE, false)),
    ("cancelled", row(NONE, NONE, NONE, false)),
];

/// The row of `variant` at `status`; the `standard` variant's for an unknown variant.
pub(crate) fn matrix_row(variant: &str, status: &str) -> Option<MatrixRow> {
    let rows: &Rows = match variant {
        "feature-impl" => &FEATURE_IMPL,
        "issue" => &ISSUE,
        "review" => &REVIEW,
        "meta" => &META,
        "brainstorm" => &BRAINSTORM,
        _ => &STANDARD,
    };
    rows.iter().find(|(s, _)| *s == status).map(|(_, r)| *r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::status_name::TASK_STATUSES;

    #[test]
    fn every_variant_has_a_row_for_every_status_and_names_only_known_sections() {
        for variant in TASK_VARIANTS {
            for status in TASK_STATUSES {
                let row = matrix_row(variant, status).unwrap();
                for name in row.required.iter().chain(row.optional).chain(row.forbidden) {
                    assert!(
                        crate::task_file::canonical_section(name).is_some(),
                        "{variant}/{status}: {name}"
                    );
                }
            }
        }
        assert!(matrix_row("standard", "done").unwrap().gate);
        assert_eq!(
            matrix_row("nonsense", "todo"),
            matrix_row("standard", "todo")
        );
    }
}
