//! New task files: `spur task create` and `spur task batch-create`. The next free WBS (one
//! more than the highest four-digit WBS of any `docs/tasks*/` folder) is taken under a
//! create lock, so two spur processes never take the same one; each file is written
//! atomically and never over an existing one. A batch is all or nothing: when one file
//! cannot be written, the ones already written are removed.
//!
//! The file is the reference's skeleton: frontmatter, `## <wbs>. <title>`, and the
//! sections the section matrix gives the new status, each with a one-line guidance
//! comment until it is filled.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::write_new_atomic;
use crate::store::file_lock::FileLock;
use crate::store::state_dir::StateDir;
use crate::task_file::CANONICAL_SECTIONS;

use super::check::{check_task, matrix_row, CheckOptions, TASK_VARIANTS};

/// What a new task is made of.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    /// Its name (the title).
    pub name: String,
    /// The feature it implements.
    pub feature_id: Option<String>,
    /// Its parent task.
    pub parent_wbs: Option<String>,
    /// The template variant (`standard` by default, `feature-impl` with a feature).
    pub template: Option<String>,
    /// `P0` … `P3`.
    pub priority: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// The Background section's text.
    pub background: Option<String>,
    /// The Requirements section's text.
    pub requirements: Option<String>,
}

/// A task file written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    /// Its WBS.
    pub wbs: String,
    /// Its name.
    pub name: String,
    /// Its status.
    pub status: String,
    /// Its template variant.
    pub template: String,
    /// The file.
    pub file_path: PathBuf,
    /// The folder it is in.
    pub folder: PathBuf,
}

/// Why tasks were not created (none was).
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// A value of the new task is not allowed.
    #[error("{what}")]
    Invalid {
        /// What is wrong (naming the item of a batch).
        what: String,
    },
    /// The folder is not a relative path inside the project.
    #[error("the tasks folder {0:?} must be a relative path inside the project, without `..`")]
    Folder(String),
    /// Every four-digit WBS is taken.
    #[error("no four-digit WBS is left (the highest, 9999, is taken)")]
    Exhausted,
    /// The create lock or a file could not be written; nothing was kept.
    #[error("cannot create {}: {reason}", path.display())]
    Write {
        /// The file or lock.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

coded_diagnostic! {
    CreateError {
        Self::Invalid { .. } => Code::TaskCreateInvalid,
            help("nothing was written; fix the value and run again");
        Self::Folder(..) => Code::TaskCreateInvalid,
            help("give the folder relative to the project root, e.g. docs/tasks");
        Self::Exhausted => Code::TaskCreateFailed;
        Self::Write { .. } => Code::TaskCreateFailed,
            help("nothing was kept: a batch is all or nothing");
    }
}

/// The folder new tasks go to when none is given.
pub const DEFAULT_TASKS_FOLDER: &str = "docs/tasks";

/// The status a new task starts in and its text. A task that names a feature or comes
/// with a background or requirements is meant to start: it is `todo` when its skeleton
/// passes `spur task check` as todo (as in the reference, creating and checking agree),
/// else — and for a bare capture — `backlog`.
fn new_file(
    path: &Path,
    wbs: &str,
    task: &NewTask,
    template: &str,
    now: &str,
) -> (&'static str, String) {
    let has = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
    if has(&task.feature_id) || has(&task.background) || has(&task.requirements) {
        let text = skeleton(wbs, task, "todo", template, now);
        let ready = crate::task_file::TaskDocument::parse(path, text.clone())
            .is_ok_and(|doc| check_task(&doc, wbs, path, &CheckOptions::default()).pass());
        if ready {
            return ("todo", text);
        }
    }
    ("backlog", skeleton(wbs, task, "backlog", template, now))
}

/// Create `tasks` in `folder` (relative to the project root): all, or none.
pub fn create_tasks(
    state_dir: &StateDir,
    folder: &str,
    tasks: &[NewTask],
) -> Result<Vec<Created>, CreateError> {
    let relative = checked_folder(folder)?;
    for (i, task) in tasks.iter().enumerate() {
        validate(task).map_err(|what| CreateError::Invalid {
            what: if tasks.len() > 1 {
                format!("task {} of the batch: {what}", i + 1)
            } else {
                what
            },
        })?;
    }
    let root = state_dir.project_root();
    let dir = root.join(&relative);
    let lock_path = state_dir.root().join("locks").join("task-create.lock");
    let _lock = FileLock::exclusive(&lock_path).map_err(|e| CreateError::Write {
        path: lock_path.clone(),
        reason: e.to_string(),
    })?;
    let first = highest_wbs(root, &dir) + 1;
    let now = crate::store::timestamp::now();
    let mut created: Vec<Created> = Vec::new();
    for (number, task) in (first..).zip(tasks) {
        if number > 9999 {
            remove_all(&created);
            return Err(CreateError::Exhausted);
        }
        let wbs = format!("{number:04}");
        let template = task.template.clone().unwrap_or_else(|| {
            if task.feature_id.is_some() {
                "feature-impl".to_owned()
            } else {
                "standard".to_owned()
            }
        });
        let path = dir.join(format!("{wbs}_{}.md", slug(&task.name)));
        let (status, text) = new_file(&path, &wbs, task, &template, &now);
        if let Err(e) = write_new_atomic(&path, text.as_bytes()) {
            remove_all(&created);
            return Err(CreateError::Write {
                path,
                reason: e.to_string(),
            });
        }
        created.push(Created {
            wbs,
            name: task.name.clone(),
            status: status.to_owned(),
            template,
            file_path: path,
            folder: dir.clone(),
        });
    }
    Ok(created)
}

fn remove_all(created: &[Created]) {
    for c in created {
        let _ = std::fs::remove_file(&c.file_path);
    }
}

fn checked_folder(folder: &str) -> Result<PathBuf, CreateError> {
    let path = Path::new(folder);
    let inside = !folder.trim().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside {
        Ok(path.to_path_buf())
    } else {
        Err(CreateError::Folder(folder.to_owned()))
    }
}

fn validate(task: &NewTask) -> Result<(), String> {
    let name = task.name.trim();
    if name.is_empty() {
        return Err("a task needs a name".to_owned());
    }
    if task.name.contains(['\n', '\r']) {
        return Err(format!("the name {:?} must be one line", task.name));
    }
    if let Some(template) = &task.template {
        if !TASK_VARIANTS.contains(&template.as_str()) {
            return Err(format!(
                "unknown template {template:?}; the templates are {}",
                TASK_VARIANTS.join(", ")
            ));
        }
    }
    if let Some(id) = &task.feature_id {
        let mut chars = id.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| ('1'..='9').contains(&c));
        if !ok {
            return Err(format!(
                "feature id {id:?} is not one: a capital letter and digits 1–9 (F, F4, H83)"
            ));
        }
    }
    if let Some(parent) = &task.parent_wbs {
        if parent.len() != 4 || !parent.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("parent {parent:?} is not a four-digit WBS"));
        }
    }
    if let Some(priority) = &task.priority {
        if !matches!(priority.as_str(), "P0" | "P1" | "P2" | "P3") {
            return Err(format!(
                "priority {priority:?} is not one of P0, P1, P2, P3"
            ));
        }
    }
    if let Some(tag) = task.tags.iter().find(|t| t.contains(['\n', '\r'])) {
        return Err(format!("the tag {tag:?} must be one line"));
    }
    Ok(())
}

/// The highest four-digit WBS of a task file in any `docs/tasks*/` folder or in `dir`.
fn highest_wbs(root: &Path, dir: &Path) -> u32 {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("tasks"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    dirs.push(dir.to_path_buf());
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|entries| entries.flatten())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (wbs, rest) = name.split_once('_')?;
            (wbs.len() == 4 && rest.ends_with(".md"))
                .then(|| wbs.parse::<u32>().ok())
                .flatten()
        })
        .max()
        .unwrap_or(0)
}

/// The file-name slug of a title: lower-case letters and digits, every other run a `-`,
/// at most 60 characters; `task` when nothing is left.
pub fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let mut slug: String = slug.chars().take(60).collect();
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        "task".to_owned()
    } else {
        slug
    }
}

/// The reference's one-line guidance under each empty section.
fn guidance(section: &str) -> &'static str {
    match section {
        "Background" => "Why this task exists: the problem, motivation, and context. Self-contained — readable without the parent.",
        "Requirements" => "R-numbered list (R1., R2., …) — referenceable items that map 1:1 to Acceptance Criteria scenarios.",
        "Acceptance Criteria" => "Given/When/Then scenarios (what the SYSTEM does), or a `- [ ]` checklist. The verdict needs a row per criterion.",
        "Q&A" => "Open questions and their resolutions. Delete if none.",
        "Design" => "Decision record — WHAT/WHY. Chosen approach + 1-line reason, rejected alternatives, key signatures, invariants.",
        "Plan" => "Ordered checklist or table of implementation steps (not prose).",
        "Solution" => "Change map — HOW/WHERE. A `file:line` table of every touched site, one sentence each. (Filled at `wip`/`testing`.)",
        "Root Cause" => "For issue/bug tasks: the verified underlying cause, with a `file:line` anchor.",
        "Testing" => "Test results + a numeric coverage claim, or explicit `N/A`. (Filled at `testing`.)",
        "Review" => "P1–P4 findings table (Severity / File / Finding / Recommendation). (Filled at `done`.)",
        "References" => "Links to design docs, ADRs, related tasks/features.",
        _ => "",
    }
}

fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("\"{value}\""))
}

/// The text of a new task file.
fn skeleton(wbs: &str, task: &NewTask, status: &str, template: &str, now: &str) -> String {
    let mut out = String::from("---\nschema_version: 1\n");
    out.push_str(&format!("name: {}\n", quoted(task.name.trim())));
    out.push_str(&format!("status: {status}\ntemplate: {template}\n"));
    out.push_str(&format!("created_at: {now}\nupdated_at: {now}\n"));
    if let Some(id) = &task.feature_id {
        out.push_str(&format!("feature_id: {id}\n"));
    }
    if let Some(parent) = &task.parent_wbs {
        out.push_str(&format!("parent_wbs: \"{parent}\"\n"));
    }
    if let Some(priority) = &task.priority {
        out.push_str(&format!("priority: {priority}\n"));
    }
    if !task.tags.is_empty() {
        let tags: Vec<String> = task.tags.iter().map(|t| quoted(t)).collect();
        out.push_str(&format!("tags: [{}]\n", tags.join(", ")));
    }
    out.push_str(&format!("---\n\n## {wbs}. {}\n", task.name.trim()));
    let row = matrix_row(template, status);
    let mut sections: Vec<&str> = row
        .map(|r| r.required.iter().chain(r.optional).copied().collect())
        .unwrap_or_default();
    sections.push("History");
    // A section the task comes with is written even where the status does not list it.
    let forbidden = row.map(|r| r.forbidden).unwrap_or_default();
    for (name, given) in [
        ("Background", &task.background),
        ("Requirements", &task.requirements),
    ] {
        let given = given.as_deref().is_some_and(|t| !t.trim().is_empty());
        if given && !forbidden.contains(&name) && !sections.contains(&name) {
            sections.push(name);
        }
    }
    let body_of = |name: &str| -> Option<String> {
        let text = match name {
            "Background" => task.background.clone(),
            "Requirements" => task.requirements.as_deref().map(bulleted_requirements),
            _ => None,
        }?;
        let text = text.trim().to_owned();
        (!text.is_empty()).then_some(text)
    };
    for name in CANONICAL_SECTIONS.iter().filter(|c| sections.contains(c)) {
        out.push_str(&format!("\n### {name}\n\n"));
        match body_of(name) {
            Some(body) => out.push_str(&format!("{body}\n")),
            None if *name == "History" => {}
            None => out.push_str(&format!("<!-- {} -->\n", guidance(name))),
        }
    }
    out
}

/// Requirements written as one run-on line (`R1. a R2. b`) as one item a line.
fn bulleted_requirements(raw: &str) -> String {
    let text = raw.trim();
    if text.contains('\n') || text.starts_with("- ") || text.starts_with("* ") {
        return text.to_owned();
    }
    let mut starts = Vec::new();
    for (i, _) in text.match_indices('R') {
        let after = text.get(i + 1..).unwrap_or("");
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let boundary = i == 0
            || text
                .get(..i)
                .and_then(|b| b.chars().last())
                .is_some_and(|c| c.is_whitespace());
        if boundary && digits > 0 && after.get(digits..).is_some_and(|r| r.starts_with('.')) {
            starts.push(i);
        }
    }
    if starts.len() <= 1 {
        return text.to_owned();
    }
    let mut items = Vec::new();
    for (n, start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        if let Some(item) = text.get(*start..end) {
            items.push(format!("- {}", item.trim()));
        }
    }
    items.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_lower_case_and_dashed() {
        assert_eq!(slug("Say hello, world!"), "say-hello-world");
        assert_eq!(slug("  ¿?  "), "task");
        assert_eq!(slug(&"ab ".repeat(40)).len(), 59);
    }

    #[test]
    fn run_on_requirements_become_one_item_a_line() {
        assert_eq!(
            bulleted_requirements("R1. Parse it. R2. Lint it."),
            "- R1. Parse it.\n- R2. Lint it."
        );
        assert_eq!(bulleted_requirements("- R1. a"), "- R1. a");
        assert_eq!(bulleted_requirements("Just R1."), "Just R1.");
    }

    #[test]
    fn creates_files_with_the_next_wbs_and_never_over_one() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(dir.path().join("docs/tasks-old")).unwrap();
        std::fs::write(dir.path().join("docs/tasks-old/0041_x.md"), "x").unwrap();
        let task = NewTask {
            name: "Say \"hello\"".to_owned(),
            feature_id: Some("F4".to_owned()),
            ..NewTask::default()
        };
        let created = create_tasks(&state, "docs/tasks", &[task.clone(), task]).unwrap();
        let wbs: Vec<&str> = created.iter().map(|c| c.wbs.as_str()).collect();
        assert_eq!(wbs, ["0042", "0043"]);
        let text = std::fs::read_to_string(&created[0].file_path).unwrap();
        // Its Acceptance Criteria are still guidance: not ready to start.
        assert!(text.starts_with("---\nschema_version: 1\nname: \"Say \\\"hello\\\"\"\nstatus: backlog\ntemplate: feature-impl\n"), "{text}");
        assert!(text.contains("\n## 0042. Say \"hello\"\n\n### Background\n\n<!--"));
        let doc = crate::task_file::TaskDocument::read(&created[0].file_path).unwrap();
        assert_eq!(doc.name().as_deref(), Some("Say \"hello\""));
        assert_eq!(doc.feature_id().as_deref(), Some("F4"));
        assert!(matches!(
            create_tasks(
                &state,
                "../out",
                &[NewTask {
                    name: "x".into(),
                    ..NewTask::default()
                }]
            ),
            Err(CreateError::Folder(_))
        ));
        let bad = NewTask {
            name: "ok".into(),
            priority: Some("P9".into()),
            ..NewTask::default()
        };
        let good = NewTask {
            name: "fine".into(),
            ..NewTask::default()
        };
        assert!(matches!(
            create_tasks(&state, "docs/tasks", &[good, bad]),
            Err(CreateError::Invalid { .. })
        ));
        assert_eq!(
            std::fs::read_dir(dir.path().join("docs/tasks"))
                .unwrap()
                .count(),
            2
        );
    }
}
