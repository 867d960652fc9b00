//! The task file an answer is linted against: its requirement ids (`R1`, `R2`, … under
//! `## Requirements`) and its acceptance criteria (checklist items under
//! `## Acceptance Criteria`). Found with `--task FILE`, else `docs/tasks*/<wbs>_*.md`, else
//! `.spur/tasks/<wbs>.md`.

use std::fs;
use std::path::{Path, PathBuf};

use super::ac_label::{collapse, strip_links, AcLabel};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// The largest task file spur reads.
const TASK_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// A requirement id and the line that declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskRequirement {
    pub(crate) id: String,
    pub(crate) line: usize,
}

/// One acceptance criterion: a checklist item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskAc {
    /// The checklist label with Markdown links reduced to their text (whitespace
    /// collapsed): the AC's id in the artifact.
    pub(crate) label: String,
    /// The checklist label exactly as written (whitespace collapsed).
    pub(crate) written: String,
    pub(crate) parts: AcLabel,
    pub(crate) line: usize,
}

/// A parsed task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFile {
    pub(crate) path: PathBuf,
    pub(crate) requirements: Vec<TaskRequirement>,
    pub(crate) acceptance: Vec<TaskAc>,
}

/// Why a task file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TaskFileError {
    /// No task file for the task was found.
    #[error("no task file for {wbs}: looked for {searched}")]
    NotFound {
        /// The task.
        wbs: String,
        /// Where spur looked.
        searched: String,
    },

    /// Several task files match the task.
    #[error("several task files match {wbs}: {candidates}")]
    Ambiguous {
        /// The task.
        wbs: String,
        /// The matching files.
        candidates: String,
    },

    /// The task file cannot be read.
    #[error("cannot read task file {}: {reason}", path.display())]
    Unreadable {
        /// The task file.
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The task file declares no requirement ids under `## Requirements`.
    #[error("task file {} declares no requirement ids under `## Requirements`", path.display())]
    NoRequirements {
        /// The task file.
        path: PathBuf,
    },

    /// A requirement id is declared twice.
    #[error("task file {}:{line}: requirement {id} is declared twice (first on line {first})", path.display())]
    DuplicateRequirement {
        /// The task file.
        path: PathBuf,
        /// The requirement id.
        id: String,
        /// The line of the second declaration.
        line: usize,
        /// The line of the first.
        first: usize,
    },
}

coded_diagnostic! {
    TaskFileError {
        Self::NotFound { wbs, .. } => Code::TaskFileNotFound,
            help("pass --task FILE, or create docs/tasks/{wbs}_<slug>.md");
        Self::Ambiguous { .. } => Code::TaskFileAmbiguous,
            help("pass --task FILE to choose one");
        Self::Unreadable { .. } => Code::TaskFileUnreadable;
        Self::NoRequirements { .. } => Code::TaskFileNoRequirements,
            help("list requirements as `- R1: …`, `- **R2** …` or `### R3 …` under a `## Requirements` heading");
        Self::DuplicateRequirement { .. } => Code::TaskFileDuplicateRequirement,
            help("give each requirement its own id");
    }
}

/// Find the task file of `wbs`: `explicit` when given, else `docs/tasks*/<wbs>_*.md` under
/// the project root, else `.spur/tasks/<wbs>.md`.
pub(crate) fn locate_task_file(
    wbs: &Wbs,
    explicit: Option<&Path>,
    project_root: &Path,
    state_dir: &StateDir,
) -> Result<PathBuf, TaskFileError> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let prefix = format!("{wbs}_");
    let mut found = Vec::new();
    if let Ok(docs) = fs::read_dir(project_root.join("docs")) {
        for dir in docs.flatten() {
            let name = dir.file_name();
            if !name.to_string_lossy().starts_with("tasks") || !dir.path().is_dir() {
                continue;
            }
            let Ok(files) = fs::read_dir(dir.path()) else {
                continue;
            };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                if name.starts_with(&prefix) && name.ends_with(".md") && file.path().is_file() {
                    found.push(file.path());
                }
            }
        }
    }
    found.sort();
    match found.len() {
        1 => return Ok(found.remove(0)),
        0 => {}
        _ => {
            return Err(TaskFileError::Ambiguous {
                wbs: wbs.to_string(),
                candidates: found
                    .iter()
                    .map(|p| display_relative(p, project_root))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    }
    let fallback = state_dir.root().join("tasks").join(format!("{wbs}.md"));
    if fallback.is_file() {
        return Ok(fallback);
    }
    Err(TaskFileError::NotFound {
        wbs: wbs.to_string(),
        searched: format!(
            "docs/tasks*/{wbs}_*.md and {}",
            display_relative(&fallback, project_root)
        ),
    })
}

fn display_relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Read and parse the task file at `path`.
pub(crate) fn read_task_file(path: &Path) -> Result<TaskFile, TaskFileError> {
    let unreadable = |reason: String| TaskFileError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = read_bounded(path, TASK_FILE_LIMIT).map_err(|e| match e {
        ReadError::TooLarge {
            size: Some(size), ..
        } => unreadable(format!(
            "{size} bytes is more than the {TASK_FILE_LIMIT}-byte limit"
        )),
        other => unreadable(other.to_string()),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        unreadable(format!(
            "not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse_task_file(path, &text)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Requirements,
    Acceptance,
    Other,
}

/// Parse task-file text (`path` is for messages).
pub fn parse_task_file(path: &Path, text: &str) -> Result<TaskFile, TaskFileError> {
    let mut task = TaskFile {
        path: path.to_path_buf(),
        requirements: Vec::new(),
        acceptance: Vec::new(),
    };
    let mut section = Section::Other;
    let mut section_level = 0;
    let mut fenced = false;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some((level, heading)) = heading(trimmed) {
            if section == Section::Other || level <= section_level {
                let name = collapse(heading).to_lowercase();
                section = match name.as_str() {
                    "requirements" => Section::Requirements,
                    "acceptance criteria" => Section::Acceptance,
                    _ => Section::Other,
                };
                section_level = level;
                continue;
            }
        }
        match section {
            Section::Requirements => {
                if let Some(id) = requirement_id(trimmed) {
                    if let Some(first) = task.requirements.iter().find(|r| r.id == id) {
                        return Err(TaskFileError::DuplicateRequirement {
                            path: path.to_path_buf(),
                            id,
                            line: line_no,
                            first: first.line,
                        });
                    }
                    task.requirements
                        .push(TaskRequirement { id, line: line_no });
                }
            }
            Section::Acceptance => {
                if let Some(label) = checklist_label(trimmed) {
                    let written = collapse(label);
                    if !written.is_empty() {
                        task.acceptance.push(TaskAc {
                            parts: AcLabel::parse(&written),
                            label: collapse(&strip_links(&written)),
                            written,
                            line: line_no,
                        });
                    }
                }
            }
            Section::Other => {}
        }
    }
    if task.requirements.is_empty() {
        return Err(TaskFileError::NoRequirements {
            path: path.to_path_buf(),
        });
    }
    Ok(task)
}

/// `## Title` → `(2, "Title")`.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = line.get(level..)?;
    (rest.is_empty() || rest.starts_with(' '))
        .then(|| (level, rest.trim().trim_end_matches('#').trim()))
}

/// The requirement id a line of the Requirements section declares: the first token after a
/// list marker, checkbox, heading marks, table pipe or emphasis — `R` and digits.
fn requirement_id(line: &str) -> Option<String> {
    let mut rest = line;
    rest = rest.trim_start_matches('#').trim_start();
    rest = rest.strip_prefix('|').unwrap_or(rest).trim_start();
    if let Some(after) = rest
        .strip_prefix("- ")
        .or_else(|| rest.strip_prefix("* "))
        .or_else(|| rest.strip_prefix("+ "))
    {
        rest = after.trim_start();
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            if let Some(after) = rest
                .get(digits..)
                .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
            {
                rest = after.trim_start();
            }
        }
    }
    for checkbox in ["[ ] ", "[x] ", "[X] "] {
        if let Some(after) = rest.strip_prefix(checkbox) {
            rest = after.trim_start();
        }
    }
    rest = rest.trim_start_matches(['*', '_', '`', '[']);
    let digits = rest
        .strip_prefix('R')?
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let after = rest.get(1 + digits..).unwrap_or("");
    if after
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
    {
        return None;
    }
    rest.get(..1 + digits).map(str::to_owned)
}

/// `- [ ] label` / `* [x] label` → `label`.
fn checklist_label(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))?
        .trim_start();
    ["[ ]", "[x]", "[X]"]
        .iter()
        .find_map(|b| rest.strip_prefix(b))
        .filter(|after| after.is_empty() || after.starts_with(' '))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "\
# 0804 Answer files

Intro mentions R7 in prose, which is not a declaration.

## Requirements

- R1: parse answers
- **R2** — lint rows
### R3 Anchors
1. R4. Derivation
| R5 | table form |
- R6a is not an id
- Requirement R8 mid-line is not an id

```
- R9 inside a fence
```

## Acceptance Criteria

- [ ] AC-1: CLI emits JSON
- [x] [advisory] Docs mention the flag
- [ ] `no-panic`: Hostile answers give a clear result
  - [ ] Scenario: Quiet mode
- plain bullet is not a criterion

## Notes

- [ ] not an AC
- R10 not a requirement
";

    #[test]
    fn reads_requirement_ids_in_every_listed_form() {
        let task = parse_task_file(Path::new("t.md"), TASK).unwrap();
        let ids: Vec<_> = task.requirements.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["R1", "R2", "R3", "R4", "R5"]);
        assert_eq!(task.requirements[0].line, 7);
    }

    #[test]
    fn reads_checklist_items_as_acceptance_criteria() {
        let task = parse_task_file(Path::new("t.md"), TASK).unwrap();
        let labels: Vec<_> = task.acceptance.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "AC-1: CLI emits JSON",
                "[advisory] Docs mention the flag",
                "`no-panic`: Hostile answers give a clear result",
                "Scenario: Quiet mode"
            ]
        );
        assert_eq!(task.acceptance[0].parts.aliases, ["AC-1"]);
        assert!(task.acceptance[1].parts.is_exempt());
        assert_eq!(task.acceptance[2].parts.aliases, ["no-panic"]);
        assert_eq!(task.acceptance[3].parts.scenarios, ["Quiet mode"]);
    }

    #[test]
    fn a_task_without_requirements_is_rejected() {
        let err = parse_task_file(Path::new("t.md"), "# T\n## Acceptance Criteria\n- [ ] x\n")
            .unwrap_err();
        assert!(matches!(err, TaskFileError::NoRequirements { .. }));
    }

    #[test]
    fn a_duplicate_requirement_id_is_rejected_with_both_lines() {
        let err =
            parse_task_file(Path::new("t.md"), "## Requirements\n- R1 a\n- R1 b\n").unwrap_err();
        assert!(matches!(
            err,
            TaskFileError::DuplicateRequirement {
                line: 3,
                first: 2,
                ..
            }
        ));
    }

    #[test]
    fn locates_docs_tasks_then_state_dir_and_reports_ambiguity() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let state = StateDir::at(root.join(".spur"));
        let wbs = Wbs::parse("0804").unwrap();
        assert!(matches!(
            locate_task_file(&wbs, None, root, &state),
            Err(TaskFileError::NotFound { .. })
        ));
        fs::create_dir_all(root.join(".spur/tasks")).unwrap();
        fs::write(root.join(".spur/tasks/0804.md"), "x").unwrap();
        assert_eq!(
            locate_task_file(&wbs, None, root, &state).unwrap(),
            root.join(".spur/tasks/0804.md")
        );
        fs::create_dir_all(root.join("docs/tasks-2026")).unwrap();
        fs::write(root.join("docs/tasks-2026/0804_answers.md"), "x").unwrap();
        fs::write(root.join("docs/tasks-2026/08040_other.md"), "x").unwrap();
        assert_eq!(
            locate_task_file(&wbs, None, root, &state).unwrap(),
            root.join("docs/tasks-2026/0804_answers.md")
        );
        fs::create_dir_all(root.join("docs/tasks")).unwrap();
        fs::write(root.join("docs/tasks/0804_again.md"), "x").unwrap();
        assert!(matches!(
            locate_task_file(&wbs, None, root, &state),
            Err(TaskFileError::Ambiguous { .. })
        ));
        let explicit = root.join("mine.md");
        assert_eq!(
            locate_task_file(&wbs, Some(&explicit), root, &state).unwrap(),
            explicit
        );
    }

    #[test]
    fn unreadable_task_files_are_errors_not_panics() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_task_file(&tmp.path().join("none.md")),
            Err(TaskFileError::Unreadable { .. })
        ));
        assert!(matches!(
            read_task_file(tmp.path()),
            Err(TaskFileError::Unreadable { .. })
        ));
        fs::write(tmp.path().join("bin.md"), [0xff, 0xfe, 0x00]).unwrap();
        assert!(matches!(
            read_task_file(&tmp.path().join("bin.md")),
            Err(TaskFileError::Unreadable { .. })
        ));
    }

    #[test]
    fn a_fifo_as_the_task_file_is_unreadable_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("0001_task.md");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_task_file(&fifo).unwrap_err();
        assert!(err.to_string().contains("it is a FIFO"), "{err}");
    }
}
