//! `response.validate`: is a response's evidence real? The reference hands `text` to an
//! anti-hallucination engine it injects (`ResponseValidateActionRunner`: ok, `reason`,
//! `issues`; not ok fails with the reason). spur's engine is the one its answer lint uses:
//! every `file:line` / `file:start-end` citation and every `dir/file.ext` the text names
//! must exist in the project, with those lines (`answer::anchor`). A cited line that is not
//! there is the hallucination it can prove.

use super::{ActionContext, ActionResult};
use crate::answer::anchor::{scan_evidence, AnchorChecker, AnchorProblem};
use crate::pipeline::ResponseValidateOptions;

/// The most issues the result names (the count is always whole).
const ISSUES_SHOWN: usize = 10;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &ResponseValidateOptions) -> ActionResult {
    let text = match ctx.optional(options.text.as_ref()) {
        Ok(Some(text)) if !text.trim().is_empty() => text,
        Ok(_) => {
            return ActionResult::failed(
                "response.validate: text is required (the response, e.g. `${vars.answer}`)",
            )
        }
        Err(e) => return ActionResult::failed(e),
    };
    let mut checker = match AnchorChecker::new(ctx.project_root) {
        Ok(c) => c,
        Err(e) => {
            return ActionResult::failed(format!(
                "response.validate: cannot open the project root: {e}"
            ))
        }
    };
    let scan = scan_evidence(&text);
    let mut issues: Vec<String> = Vec::new();
    for citation in &scan.citations {
        if let Err(p) = checker.check_citation(citation) {
            issues.push(describe(p));
        }
    }
    for path in &scan.bare_paths {
        // A directory mentioned in prose is a summary, not a claim about a file.
        if let Err(p @ (AnchorProblem::FileMissing { .. } | AnchorProblem::OutsideProject { .. })) =
            checker.check_bare_path(path)
        {
            issues.push(describe(p));
        }
    }
    let checked = scan.citations.len() + scan.bare_paths.len();
    if issues.is_empty() {
        return ActionResult {
            message: Some(format!(
                "response.validate: {checked} reference(s) checked, all exist"
            )),
            ..ActionResult::ok()
        };
    }
    let shown: Vec<&str> = issues
        .iter()
        .take(ISSUES_SHOWN)
        .map(String::as_str)
        .collect();
    let more = issues.len().saturating_sub(ISSUES_SHOWN);
    ActionResult::failed(format!(
        "response.validate: {} of {checked} reference(s) do not exist: {}{}",
        issues.len(),
        shown.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    ))
}

fn describe(problem: AnchorProblem) -> String {
    match problem {
        AnchorProblem::FileMissing { path } => format!("{path} does not exist"),
        AnchorProblem::Directory { path } => format!("{path} is a directory, not a file"),
        AnchorProblem::OutsideProject { path } => format!("{path} is outside the project"),
        AnchorProblem::LineOutOfRange { citation, lines } => {
            format!("{citation} is past the end of the file ({lines} lines)")
        }
    }
}
