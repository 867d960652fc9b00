//! L1, the frontmatter: there is one, it is a YAML mapping, it names the task and gives a
//! task status, and the values the format constrains (`template`, `priority`,
//! `schema_version`, `feature_id`) are ones it allows. Keys it does not know are fine.

use super::matrix::TASK_VARIANTS;
use super::{Ctx, Rule};
use crate::diagnostic::Severity;
use crate::source::Span;
use crate::task::status_name::{canonical_status, TASK_STATUSES};
use crate::task_file::Entry;

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let Some(frontmatter) = ctx.doc.frontmatter() else {
        let span = ctx.line_span(0);
        ctx.push(
            Rule::FrontmatterMissing,
            Severity::Error,
            "",
            span,
            "the task file has no frontmatter (a first line `---`, then `name:` and `status:`, then `---`)",
            Some("open the file with a frontmatter block; `spur task create` writes one".to_owned()),
        );
        return;
    };
    let open_line = ctx.line_span(frontmatter.block.start);
    if let Some(problem) = frontmatter.problem() {
        let span = Span::new(problem.offset, 1);
        ctx.push(
            Rule::FrontmatterUnreadable,
            Severity::Error,
            "",
            span,
            format!("the frontmatter cannot be read: {}", problem.message),
            Some("fix the YAML between the `---` lines".to_owned()),
        );
        return;
    }
    let frontmatter = frontmatter.clone();
    if frontmatter
        .scalar("name")
        .is_none_or(|name| name.trim().is_empty())
    {
        ctx.push(
            Rule::NameMissing,
            Severity::Error,
            "",
            open_line,
            "the frontmatter has no `name`",
            Some("add `name: \"what the task does\"`".to_owned()),
        );
    }
    match frontmatter.get("status") {
        None => ctx.push(
            Rule::StatusMissing,
            Severity::Error,
            "",
            open_line,
            "the frontmatter has no `status`",
            Some(format!(
                "add `status: …`, one of {}",
                TASK_STATUSES.join(", ")
            )),
        ),
        Some(entry) => {
            let written = frontmatter.scalar("status").unwrap_or_default();
            match canonical_status(&written) {
                Some(status) => ctx.file_status = Some(status),
                None => {
                    let span = value_span(entry);
                    ctx.push(
                        Rule::StatusInvalid,
                        Severity::Error,
                        "",
                        span,
                        format!("`status: {written}` is not a task status"),
                        Some(format!("use one of {}", TASK_STATUSES.join(", "))),
                    );
                }
            }
        }
    }
    if let Some(entry) = frontmatter.get("template") {
        let template = frontmatter.scalar("template").unwrap_or_default();
        if TASK_VARIANTS.contains(&template.as_str()) {
            ctx.variant = template;
        } else {
            invalid(
                ctx,
                entry,
                format!("`template: {template}` is not a task template"),
                format!("use one of {}", TASK_VARIANTS.join(", ")),
            );
        }
    }
    if let Some(entry) = frontmatter.get("priority") {
        let priority = frontmatter.scalar("priority").unwrap_or_default();
        if !matches!(priority.as_str(), "P0" | "P1" | "P2" | "P3") {
            invalid(
                ctx,
                entry,
                format!("`priority: {priority}` is not a priority"),
                "use P0, P1, P2 or P3".to_owned(),
            );
        }
    }
    if let Some(entry) = frontmatter.get("schema_version") {
        if frontmatter.scalar("schema_version").as_deref() != Some("1") {
            invalid(
                ctx,
                entry,
                "`schema_version` must be 1".to_owned(),
                "write `schema_version: 1`".to_owned(),
            );
        }
    }
    if let Some(entry) = frontmatter.get("feature_id") {
        if let Some(id) = frontmatter.scalar("feature_id") {
            if !is_feature_id(&id) {
                invalid(
                    ctx,
                    entry,
                    format!("`feature_id: {id}` is not a feature id"),
                    "a feature id is a capital letter and digits 1–9 (`F`, `F4`, `H83`)".to_owned(),
                );
            }
        }
    }
}

fn invalid(ctx: &mut Ctx<'_>, entry: &Entry, message: String, help: String) {
    let span = value_span(entry);
    ctx.push(
        Rule::FieldInvalid,
        Severity::Error,
        "",
        span,
        message,
        Some(help),
    );
}

fn value_span(entry: &Entry) -> Span {
    let range = entry.value_span.clone();
    if range.is_empty() {
        Span::new(entry.key_span.start, entry.key_span.len())
    } else {
        Span::new(range.start, range.len())
    }
}

/// `^[A-Z][1-9]*$`.
fn is_feature_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| ('1'..='9').contains(&c))
}
