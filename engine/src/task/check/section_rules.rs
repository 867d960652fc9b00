//! L2, the section matrix: the sections the status requires are there, those it forbids
//! are not. A missing section is a warning, an error where the status is a gate (done);
//! a forbidden one is a warning.

use super::{Ctx, Rule};
use crate::diagnostic::Severity;

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let Some(row) = ctx.row else {
        return;
    };
    let status = ctx.status;
    for name in row.required {
        if ctx.doc.section(name).is_none() {
            let span = ctx.body_start_span();
            let severity = if row.gate {
                Severity::Error
            } else {
                Severity::Warning
            };
            ctx.push(
                Rule::MissingSection,
                severity,
                name,
                span,
                format!("`{status}` requires a `{name}` section; the file has none"),
                Some(format!(
                    "add it with `spur task update <wbs> --section \"{name}\" --from-file FILE`"
                )),
            );
        }
    }
    for name in row.forbidden {
        if ctx.doc.section(name).is_some() {
            let span = ctx.section_span(name);
            ctx.push(
                Rule::ForbiddenSection,
                Severity::Warning,
                name,
                span,
                format!("a `{name}` section does not belong to a task that is `{status}`"),
                Some(
                    "it is written later in the lifecycle; remove it or move the task on"
                        .to_owned(),
                ),
            );
        }
    }
}
