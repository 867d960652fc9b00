//! `spur feature check [ID] [--as STATUS] [--strict]`: the reference's four layers for a
//! feature file, evaluated for its status or the one it is about to enter.
//!
//! - L1 frontmatter: present, `id` that of the file name, `name`, a feature status;
//! - L2 sections: what the status requires (the reference's matrix; a `group`-tagged
//!   feature needs no Acceptance Criteria) — an error where the status gates (active,
//!   verifying, done), else a warning;
//! - L3 formats: Acceptance Criteria as Gherkin (each scenario with Given, When, Then) or a
//!   checklist; one active P0 goal at a time;
//! - L4 its tasks: at `done`, each linked task that is not cancelled must be done through
//!   the done gate (a certified ledger record — a task file that merely says done is not);
//!   at `verifying`, open tasks are a warning.
//!
//! `--strict` makes every warning an error.

use std::path::Path;

use serde::Serialize;

use crate::store::state_dir::StateDir;
use crate::task_file::TaskDocument;

use super::error::FeatureError;
use super::file::list_features;
use super::linked_tasks::{linked_tasks, LinkedTask};
use super::status::canonical_feature_status;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Reported; fails only with `--strict`.
    Warning,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureFinding {
    /// `L1`…`L4`.
    pub layer: &'static str,
    /// A stable code (`L4.task-not-done`).
    pub code: &'static str,
    /// Error or warning (after `--strict`).
    pub severity: Severity,
    /// The section it is about (`""` for the frontmatter).
    pub section: String,
    /// The line in the file (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The check of one feature, as `--json` prints it (the reference's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureCheckReport {
    /// The feature.
    pub id: String,
    /// The status it was checked as.
    pub status: String,
    /// Every finding.
    pub findings: Vec<FeatureFinding>,
    /// The sections that status requires.
    pub required_sections: Vec<String>,
    /// Those the file lacks (or leaves empty).
    pub missing_sections: Vec<String>,
    /// No error.
    pub pass: bool,
    /// The file.
    pub file: String,
}

/// How to check.
#[derive(Debug, Clone, Copy)]
pub struct FeatureCheckOptions<'a> {
    /// Check as this status (the one the feature is about to enter); `None`: its own.
    pub as_status: Option<&'a str>,
    /// Every warning is an error.
    pub strict: bool,
}

/// The sections a feature in `status` needs, and whether a missing one is an error.
fn matrix(status: &str, group: bool) -> (&'static [&'static str], bool) {
    match (status, group) {
        ("active" | "verifying", false) => (&["Goal", "Scope", "Acceptance Criteria"], true),
        ("active" | "verifying", true) => (&["Goal", "Scope"], true),
        ("done", false) => (&["Goal", "Scope", "Acceptance Criteria", "Tasks"], true),
        ("done", true) => (&["Goal", "Scope", "Tasks"], true),
        ("blocked", _) => (&["Goal", "Notes"], false),
        ("cancelled", _) => (&["Notes"], false),
        _ => (&[], false),
    }
}

struct Checker<'a> {
    doc: &'a TaskDocument,
    findings: Vec<FeatureFinding>,
}

impl Checker<'_> {
    fn push(
        &mut self,
        layer: &'static str,
        code: &'static str,
        severity: Severity,
        section: &str,
        line: usize,
        message: String,
    ) {
        self.findings.push(FeatureFinding {
            layer,
            code,
            severity,
            section: section.to_owned(),
            line,
            message,
        });
    }

    fn section_line(&self, name: &str) -> usize {
        self.doc
            .section(name)
            .map_or(1, |s| self.doc.line_of(s.heading.start))
    }
}

/// Check feature `id` (its file at `path`) in the project of `state_dir`.
pub fn check_feature(
    state_dir: &StateDir,
    id: &str,
    path: &Path,
    options: FeatureCheckOptions<'_>,
) -> Result<FeatureCheckReport, FeatureError> {
    let doc = TaskDocument::read(path)?;
    let mut c = Checker {
        doc: &doc,
        findings: Vec::new(),
    };
    let front = doc.frontmatter();
    let scalar = |key: &str| front.and_then(|f| f.scalar(key));
    // L1
    if front.is_none() {
        c.push(
            "L1",
            "L1.no-frontmatter",
            Severity::Error,
            "",
            1,
            "the feature file has no frontmatter".to_owned(),
        );
    }
    match scalar("id") {
        Some(own) if own.trim_matches(['"', '\'']) != id => c.push(
            "L1",
            "L1.id-mismatch",
            Severity::Error,
            "",
            1,
            format!("its `id: {own}` is not {id}, the id of its file name"),
        ),
        None if front.is_some() => c.push(
            "L1",
            "L1.id-missing",
            Severity::Warning,
            "",
            1,
            "the frontmatter has no `id`".to_owned(),
        ),
        _ => {}
    }
    if front.is_some() && scalar("name").is_none_or(|n| n.trim().is_empty()) {
        c.push(
            "L1",
            "L1.name-missing",
            Severity::Error,
            "",
            1,
            "the frontmatter has no `name`".to_owned(),
        );
    }
    let own_status = scalar("status");
    let status = match own_status.as_deref().map(canonical_feature_status) {
        Some(Some(status)) => status,
        Some(None) => {
            c.push(
                "L1",
                "L1.status-invalid",
                Severity::Error,
                "",
                1,
                format!(
                    "{:?} is not a feature status",
                    own_status.unwrap_or_default()
                ),
            );
            "backlog"
        }
        None => "backlog",
    };
    let effective = options
        .as_status
        .and_then(canonical_feature_status)
        .unwrap_or(status);
    let group = front
        .and_then(|f| f.to_json().get("tags").cloned())
        .is_some_and(|tags| {
            tags.as_array()
                .is_some_and(|a| a.iter().any(|t| t == "group"))
        });
    // L2 (a `Tasks` section holding only the generated markers counts as filled when
    // tasks name the feature: the table is theirs, derived)
    let tasks = linked_tasks(state_dir, id);
    let (required, gate) = matrix(effective, group);
    let mut missing = Vec::new();
    for name in required {
        let body = doc.section_body(name).map(|b| {
            if *name == "Tasks" && !tasks.is_empty() {
                "tasks"
            } else {
                meaningful(b)
            }
        });
        if body.is_none_or(str::is_empty) {
            missing.push((*name).to_owned());
            let (code, what) = if body.is_none() {
                ("L2.missing-section", "requires")
            } else {
                ("L2.empty-section", "requires a filled")
            };
            let severity = if gate {
                Severity::Error
            } else {
                Severity::Warning
            };
            let line = c.section_line(name);
            c.push(
                "L2",
                code,
                severity,
                name,
                line,
                format!("`{effective}` {what} `{name}` section"),
            );
        }
    }
    // L3
    check_acceptance(&mut c);
    one_active_goal(
        &mut c,
        state_dir,
        id,
        effective,
        scalar("priority").as_deref(),
    );
    // L4
    check_tasks(&mut c, &tasks, effective);

    let mut findings = c.findings;
    if options.strict {
        for f in &mut findings {
            f.severity = Severity::Error;
        }
    }
    let pass = !findings.iter().any(|f| f.severity == Severity::Error);
    Ok(FeatureCheckReport {
        id: id.to_owned(),
        status: effective.to_owned(),
        findings,
        required_sections: required.iter().map(|s| (*s).to_owned()).collect(),
        missing_sections: missing,
        pass,
        file: path
            .strip_prefix(state_dir.project_root())
            .unwrap_or(path)
            .display()
            .to_string(),
    })
}

/// A section body without blank lines, HTML comments and the template's empty bullets.
fn meaningful(body: &str) -> &str {
    let useful = body.lines().any(|l| {
        let t = l.trim();
        !(t.is_empty()
            || (t.starts_with("<!--") && t.ends_with("-->"))
            || matches!(t, "- In:" | "- Out:"))
    });
    if useful {
        body.trim()
    } else {
        ""
    }
}

fn check_acceptance(c: &mut Checker<'_>) {
    let Some(body) = c.doc.section_body("Acceptance Criteria").map(str::to_owned) else {
        return;
    };
    let line = c.section_line("Acceptance Criteria");
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("```") && !l.is_empty())
        .collect();
    if lines.is_empty() {
        return;
    }
    let gherkin = lines.iter().any(|l| {
        l.starts_with("Feature:")
            || l.starts_with("Scenario:")
            || l.starts_with("Scenario Outline:")
    });
    if gherkin {
        let mut scenarios: Vec<(String, [bool; 3])> = Vec::new();
        for l in &lines {
            if let Some(title) = l
                .strip_prefix("Scenario:")
                .or_else(|| l.strip_prefix("Scenario Outline:"))
            {
                scenarios.push((title.trim().to_owned(), [false; 3]));
            } else if let Some((_, steps)) = scenarios.last_mut() {
                for (i, kw) in ["Given ", "When ", "Then "].iter().enumerate() {
                    if l.starts_with(kw) {
                        steps[i] = true;
                    }
                }
            }
        }
        if scenarios.is_empty() {
            c.push(
                "L3",
                "L3.ac-no-scenario",
                Severity::Error,
                "Acceptance Criteria",
                line,
                "the Gherkin has no `Scenario:`".to_owned(),
            );
        }
        for (title, steps) in scenarios {
            if steps != [true; 3] {
                c.push(
                    "L3",
                    "L3.ac-scenario-steps",
                    Severity::Error,
                    "Acceptance Criteria",
                    line,
                    format!("scenario {title:?} needs a Given, a When and a Then step"),
                );
            }
        }
        return;
    }
    let items: Vec<&str> = lines
        .iter()
        .filter_map(|l| {
            l.strip_prefix("- [ ]")
                .or_else(|| l.strip_prefix("- [x]"))
                .or_else(|| l.strip_prefix("- [X]"))
        })
        .collect();
    if items.is_empty() {
        c.push(
            "L3",
            "L3.ac-format",
            Severity::Warning,
            "Acceptance Criteria",
            line,
            "Acceptance Criteria should be Gherkin scenarios or a `- [ ]` checklist".to_owned(),
        );
    } else if items.iter().any(|t| t.trim().is_empty()) {
        c.push(
            "L3",
            "L3.ac-checklist-text",
            Severity::Warning,
            "Acceptance Criteria",
            line,
            "a checklist item has no text".to_owned(),
        );
    }
}

/// At most one P0 feature is active or verifying: the project's goal.
fn one_active_goal(
    c: &mut Checker<'_>,
    state_dir: &StateDir,
    id: &str,
    effective: &str,
    priority: Option<&str>,
) {
    if priority.map(|p| p.trim_matches(['"', '\''])) != Some("P0")
        || !matches!(effective, "active" | "verifying")
    {
        return;
    }
    let others: Vec<String> = list_features(state_dir.project_root())
        .into_iter()
        .filter(|f| f.id != id)
        .filter(|f| {
            TaskDocument::read(&f.path).is_ok_and(|d| {
                let fm = d.frontmatter();
                let get = |k: &str| fm.and_then(|f| f.scalar(k)).unwrap_or_default();
                get("priority").trim_matches(['"', '\'']) == "P0"
                    && matches!(
                        canonical_feature_status(&get("status")),
                        Some("active" | "verifying")
                    )
            })
        })
        .map(|f| f.id)
        .collect();
    if !others.is_empty() {
        c.push(
            "L3",
            "L3.one-active-goal",
            Severity::Error,
            "",
            1,
            format!(
                "another P0 feature is active or verifying ({}): one goal at a time",
                others.join(", ")
            ),
        );
    }
}

fn check_tasks(c: &mut Checker<'_>, tasks: &[LinkedTask], effective: &str) {
    let line = c.section_line("Tasks");
    if tasks.is_empty() {
        if matches!(effective, "verifying" | "done") {
            c.push(
                "L4",
                "L4.no-tasks",
                Severity::Warning,
                "Tasks",
                line,
                "no task names this feature (`feature_id`)".to_owned(),
            );
        }
        return;
    }
    for task in tasks.iter().filter(|t| !t.is_cancelled()) {
        match effective {
            "done" if !task.certified_done => {
                let why = if task.file_says_done {
                    format!(
                        "is {}: its file says done, but the done gate has not certified it",
                        task.status
                    )
                } else if task.certification.as_str() != "none" {
                    format!(
                        "is {} ({}): the done gate has not certified it",
                        task.status,
                        task.certification.as_str()
                    )
                } else {
                    format!("is {}, not done through the done gate", task.status)
                };
                c.push(
                    "L4",
                    "L4.task-not-done",
                    Severity::Error,
                    "Tasks",
                    line,
                    format!("task {} {why} (`spur task why {}`)", task.wbs, task.wbs),
                );
            }
            "verifying" if !task.certified_done => c.push(
                "L4",
                "L4.task-open",
                Severity::Warning,
                "Tasks",
                line,
                format!("task {} is {}", task.wbs, task.status),
            ),
            _ => {}
        }
    }
}
