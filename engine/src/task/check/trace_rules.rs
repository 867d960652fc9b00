//! L4, links to other files: the task names its feature, and that feature has a feature
//! file (`docs/features*/<id>_*.md`); a standard task keeps a Design that says something.
//! Warnings only.

use std::path::Path;

use super::body_shape::is_placeholder;
use super::{Ctx, Rule};
use crate::diagnostic::Severity;

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let Some(frontmatter) = ctx.doc.frontmatter() else {
        return;
    };
    if frontmatter.problem().is_some() {
        return;
    }
    let open_line = ctx.line_span(frontmatter.block.start);
    match ctx.doc.feature_id() {
        None => ctx.push(
            Rule::MissingFeatureId,
            Severity::Warning,
            "",
            open_line,
            "the task names no feature (`feature_id`)",
            Some("link it: `feature_id: F1` in the frontmatter".to_owned()),
        ),
        Some(id) => {
            if let Some(root) = ctx.project_root {
                if !feature_file_exists(root, &id) {
                    ctx.push(
                        Rule::FeatureNotFound,
                        Severity::Warning,
                        "",
                        open_line,
                        format!("feature {id} has no feature file (docs/features*/{id}_*.md)"),
                        None,
                    );
                }
            }
        }
    }
    if ctx.variant == "standard" && ctx.doc.section_body("Design").is_some_and(is_placeholder) {
        let span = ctx.section_span("Design");
        ctx.push(
            Rule::DesignPlaceholder,
            Severity::Warning,
            "Design",
            span,
            "Design is present but holds only placeholders",
            Some("write the implementation approach, or remove the section".to_owned()),
        );
    }
}

/// Whether `docs/features*/<id>_*.md` exists under `root`.
fn feature_file_exists(root: &Path, id: &str) -> bool {
    let prefix = format!("{id}_");
    let Ok(docs) = std::fs::read_dir(root.join("docs")) else {
        return false;
    };
    docs.flatten()
        .filter(|dir| dir.file_name().to_string_lossy().starts_with("features"))
        .filter_map(|dir| std::fs::read_dir(dir.path()).ok())
        .flat_map(|files| files.flatten())
        .any(|file| {
            let name = file.file_name().to_string_lossy().into_owned();
            name.starts_with(&prefix) && name.ends_with(".md")
        })
}
