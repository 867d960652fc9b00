//! `spur task check`: the structural check of a task file for a status — its own, or the
//! one it is about to enter (`--as`). Four layers, as the reference's: L1 the frontmatter,
//! L2 the sections the status requires or forbids (the section matrix), L3 each section's
//! format (with spur's own parse of the requirement ids and acceptance criteria the done
//! gate reads), L4 the link to the task's feature. Every finding points at its place in
//! the file, rendered like `spur check`'s. The check passes when nothing is an error;
//! `--strict` makes every warning one.
//!
//! It is also the structural gate of a status change to `testing` or `done`: the change is
//! refused when the check `--as` that status does not pass (see `task::lifecycle_gate`).

mod body_shape;
mod format_rules;
mod frontmatter_rules;
mod matrix;
mod rule;
mod section_rules;
mod trace_rules;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{SourceFile, Span};
use crate::task_file::TaskDocument;

pub(crate) use body_shape::is_placeholder;
pub(crate) use matrix::matrix_row;
pub use matrix::TASK_VARIANTS;
pub use rule::{Layer, Rule};

use matrix::MatrixRow;

/// How to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions<'a> {
    /// Check the task as if it were in this (canonical) status: the status it is about to
    /// enter. `None`: its frontmatter's status.
    pub as_status: Option<&'static str>,
    /// Every warning is an error.
    pub strict: bool,
    /// The project root, where `docs/features*/` is looked for.
    pub project_root: Option<&'a Path>,
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// Error or warning.
    pub severity: Severity,
    /// The section it is about (`""` for the file as a whole).
    pub section: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    pub(crate) span: Span,
}

/// The result of checking one task file.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The task.
    pub wbs: String,
    /// The status the task was checked as.
    pub status: String,
    /// What the frontmatter says (`None` when it says nothing usable).
    pub file_status: Option<String>,
    /// Every finding, in file order.
    pub findings: Vec<Finding>,
    /// The sections the status requires.
    pub required_sections: Vec<String>,
    /// Those the file lacks.
    pub missing_sections: Vec<String>,
    source: SourceFile,
}

/// The state every rule reads and appends to.
pub(crate) struct Ctx<'d> {
    pub(crate) doc: &'d TaskDocument,
    /// The status checked as.
    pub(crate) status: &'static str,
    /// The frontmatter's status, when it is one.
    pub(crate) file_status: Option<&'static str>,
    /// Checked as a status other than the file's own: the status it is about to enter.
    pub(crate) transition_target: bool,
    pub(crate) variant: String,
    pub(crate) row: Option<MatrixRow>,
    pub(crate) project_root: Option<&'d Path>,
    pub(crate) findings: Vec<Finding>,
}

impl Ctx<'_> {
    pub(crate) fn push(
        &mut self,
        rule: Rule,
        severity: Severity,
        section: &str,
        span: Span,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        self.findings.push(Finding {
            rule,
            severity,
            section: section.to_owned(),
            message: message.into(),
            help,
            span,
        });
    }

    /// The span of the section's heading line (without its newline), or of the start of
    /// the body when the section is absent.
    pub(crate) fn section_span(&self, name: &str) -> Span {
        match self.doc.section(name) {
            Some(section) => {
                let start = section.offset();
                let line = self.doc.text().get(start..).unwrap_or("");
                Span::new(start, line.find('\n').unwrap_or(line.len()))
            }
            None => self.body_start_span(),
        }
    }

    /// The first line after the frontmatter.
    pub(crate) fn body_start_span(&self) -> Span {
        let start = self.doc.frontmatter().map_or(0, |f| f.block.end);
        let rest = self.doc.text().get(start..).unwrap_or("");
        let skip = rest.len() - rest.trim_start_matches('\n').len();
        let line = rest.get(skip..).unwrap_or("");
        Span::new(start + skip, line.find('\n').unwrap_or(line.len()))
    }

    /// The span of a line starting at `offset`.
    pub(crate) fn line_span(&self, offset: usize) -> Span {
        let line = self.doc.text().get(offset..).unwrap_or("");
        Span::new(offset, line.find('\n').unwrap_or(line.len()))
    }

    pub(crate) fn required(&self, name: &str) -> bool {
        self.row.is_some_and(|r| r.required.contains(&name))
    }
}

/// Check the task file `doc` of task `wbs`.
pub fn check_task(
    doc: &TaskDocument,
    wbs: &str,
    shown_path: &Path,
    options: &CheckOptions<'_>,
) -> CheckReport {
    let mut ctx = Ctx {
        doc,
        status: "backlog",
        file_status: None,
        transition_target: false,
        variant: "standard".to_owned(),
        row: None,
        project_root: options.project_root,
        findings: Vec::new(),
    };
    frontmatter_rules::check(&mut ctx);
    ctx.status = options.as_status.or(ctx.file_status).unwrap_or("backlog");
    ctx.transition_target = options
        .as_status
        .is_some_and(|target| Some(target) != ctx.file_status);
    ctx.row = matrix_row(&ctx.variant, ctx.status);
    let required: Vec<String> = ctx
        .row
        .map(|r| r.required.iter().map(|s| (*s).to_owned()).collect())
        .unwrap_or_default();
    let missing = required
        .iter()
        .filter(|name| doc.section(name).is_none())
        .cloned()
        .collect();
    if ctx.doc.frontmatter().is_some() {
        section_rules::check(&mut ctx);
    }
    format_rules::check(&mut ctx);
    trace_rules::check(&mut ctx);
    let mut findings = ctx.findings;
    if options.strict {
        for finding in &mut findings {
            finding.severity = Severity::Error;
        }
    }
    findings.sort_by_key(|f| (f.span.offset, f.rule.layer()));
    CheckReport {
        wbs: wbs.to_owned(),
        status: ctx.status.to_owned(),
        file_status: ctx.file_status.map(str::to_owned),
        findings,
        required_sections: required,
        missing_sections: missing,
        source: SourceFile::new(shown_path.to_path_buf(), doc.text().to_owned()),
    }
}

/// The JSON of one finding: the reference's fields and the place in the file.
#[derive(Debug, Clone, Serialize)]
pub struct FindingJson {
    /// `L1` … `L4`.
    pub layer: Layer,
    /// The reference's code, `L3.solution-file-line`.
    pub code: &'static str,
    /// spur's diagnostic code.
    pub diagnostic: String,
    /// `error` or `warning`.
    pub severity: Severity,
    /// The section, `""` for the file.
    pub section: String,
    /// What is wrong.
    pub message: String,
    /// The file, as shown.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// How to fix it.
    pub help: Option<String>,
}

/// The JSON of one checked task (the reference's shape, with `file`, `errors`, `warnings`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckJson {
    /// The task.
    pub wbs: String,
    /// The status checked as.
    pub status: String,
    /// No error.
    pub pass: bool,
    /// The task file, as shown.
    pub file: PathBuf,
    /// Every finding.
    pub findings: Vec<FindingJson>,
    /// The sections the status requires.
    pub required_sections: Vec<String>,
    /// Those the file lacks.
    pub missing_sections: Vec<String>,
    /// How many findings are errors.
    pub errors: usize,
    /// How many are warnings.
    pub warnings: usize,
}

impl CheckReport {
    /// No finding is an error.
    pub fn pass(&self) -> bool {
        self.errors() == 0
    }

    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    /// How many are warnings.
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }

    /// The error findings in one line each, `L3.solution-file-line [Solution]: …`: what a
    /// refused status change names.
    pub fn error_summary(&self) -> String {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| {
                let line = self.source.line_column(f.span.offset).0;
                let section = if f.section.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", f.section)
                };
                format!(
                    "{}{section} (line {line}): {}",
                    f.rule.finding_code(),
                    f.message
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Every finding as a diagnostic, to render with miette.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.findings
            .iter()
            .map(|f| {
                let diagnostic = Diagnostic::new(
                    f.severity,
                    f.rule.code(),
                    &self.source,
                    f.span,
                    f.message.clone(),
                )
                .label(f.rule.finding_code());
                match &f.help {
                    Some(help) => diagnostic.help(help.clone()),
                    None => diagnostic,
                }
            })
            .collect()
    }

    /// The JSON document.
    pub fn to_json(&self) -> CheckJson {
        CheckJson {
            wbs: self.wbs.clone(),
            status: self.status.clone(),
            pass: self.pass(),
            file: self.source.path().to_path_buf(),
            findings: self
                .findings
                .iter()
                .map(|f| {
                    let (line, column) = self.source.line_column(f.span.offset);
                    FindingJson {
                        layer: f.rule.layer(),
                        code: f.rule.finding_code(),
                        diagnostic: f.rule.code().to_string(),
                        severity: f.severity,
                        section: f.section.clone(),
                        message: f.message.clone(),
                        file: self.source.path().to_path_buf(),
                        line,
                        column,
                        help: f.help.clone(),
                    }
                })
                .collect(),
            required_sections: self.required_sections.clone(),
            missing_sections: self.missing_sections.clone(),
            errors: self.errors(),
            warnings: self.warnings(),
        }
    }
}
