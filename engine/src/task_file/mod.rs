//! The task file: its requirement ids and its acceptance criteria, read the same way for
//! the answer lint, the done gate's completeness check and verify's evidence commands. Two
//! shapes are read (see the book, *Task files*): today's `## Requirements` / `## Acceptance
//! Criteria` with checklist items, and the reference format — YAML frontmatter, `### Requirements`
//! with `- [ ] R1. …` items and `### Acceptance Criteria` with gherkin `Scenario:` blocks.
//! Found with `--task FILE`, else `docs/tasks*/<wbs>_*.md`, else `.spur/tasks/<wbs>.md`.

mod claimed_status;
mod code_span;
mod criterion_id;
mod document;
mod edit;
mod frontmatter;
mod parse;
mod sections;

use std::fs;
use std::path::{Path, PathBuf};

use crate::answer::ac_label::AcLabel;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

pub use claimed_status::{claimed_status, ClaimedStatus};
pub(crate) use code_span::first_code_span;
pub use document::TaskDocument;
pub use edit::{EditError, SectionWrite, SpanEdit};
pub use frontmatter::{Entry, Frontmatter, FrontmatterProblem};
pub use parse::parse_task_file;
pub use sections::{canonical_section, Section, CANONICAL_SECTIONS, FEATURE_SECTIONS};

/// The largest task file spur reads.
pub(crate) const TASK_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// A requirement id and the line that declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRequirement {
    /// `R1`, `R2`, …: the id the artifact's requirement row carries.
    pub id: String,
    /// The 1-based line that declares it.
    pub line: usize,
}

/// One acceptance criterion: a checklist item, or a gherkin scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskAc {
    /// The criterion's short id, unique in the task: its first declared alias (`AC-1`, a
    /// checklist token), else a slug of its title (`r1-status-toggle-is-right-aligned`).
    /// Names its verify gate, `evidence-command:<id>`.
    pub id: String,
    /// The checklist label with Markdown links reduced to their text (whitespace
    /// collapsed): the AC's id in the artifact. A scenario's is `Scenario: <title>`, with
    /// `[advisory] ` before it in an advisory group.
    pub label: String,
    /// The checklist label exactly as written (whitespace collapsed).
    pub(crate) written: String,
    /// The label taken apart (tags, aliases, title, scenario titles).
    pub(crate) parts: AcLabel,
    /// The command the criterion names: the first non-blank inline code span of its title
    /// (a checklist item) or of its title and steps (a scenario). `spur verify --wbs` runs
    /// it as the gate `evidence-command:<id>`.
    pub command: Option<String>,
    /// The 1-based line of the item or of the `Scenario:` line.
    pub line: usize,
}

/// A parsed task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFile {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// The requirement ids, in file order.
    pub requirements: Vec<TaskRequirement>,
    /// The acceptance criteria, in file order.
    pub acceptance: Vec<TaskAc>,
}

impl TaskFile {
    /// The criteria that name a command, in file order.
    pub fn commanded(&self) -> impl Iterator<Item = (&TaskAc, &str)> {
        self.acceptance
            .iter()
            .filter_map(|ac| ac.command.as_deref().map(|command| (ac, command)))
    }
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

    /// The task file declares no requirement ids under a `Requirements` heading.
    #[error("task file {} declares no requirement ids under a `Requirements` heading", path.display())]
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

    /// An acceptance criterion alias (`AC-1`, a checklist token) is declared twice.
    #[error("task file {}:{line}: acceptance criterion id {id} is declared twice (first on line {first})", path.display())]
    DuplicateCriterion {
        /// The task file.
        path: PathBuf,
        /// The alias.
        id: String,
        /// The line of the second declaration.
        line: usize,
        /// The line of the first.
        first: usize,
    },

    /// Frontmatter, or a code fence opened in the requirements or criteria, never closes.
    #[error("task file {}:{line}: {what} opened here is never closed", path.display())]
    Unclosed {
        /// The task file.
        path: PathBuf,
        /// `frontmatter` or `code fence`.
        what: &'static str,
        /// The line it opens on.
        line: usize,
    },

    /// A gherkin `Scenario:` with no title.
    #[error("task file {}:{line}: a scenario with no title", path.display())]
    UntitledScenario {
        /// The task file.
        path: PathBuf,
        /// The scenario's line.
        line: usize,
    },

    /// The task file cannot be written (it is as it was).
    #[error("cannot write task file {}: {reason}", path.display())]
    Unwritable {
        /// The task file.
        path: PathBuf,
        /// Why.
        reason: String,
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
            help("list requirements as `- R1: …`, `- [ ] R1. …`, `- **R2** …` or `### R3 …` under a `## Requirements` (or `### Requirements`) heading");
        Self::DuplicateRequirement { .. } => Code::TaskFileDuplicateRequirement,
            help("give each requirement its own id");
        Self::DuplicateCriterion { .. } => Code::TaskFileDuplicateCriterion,
            help("give each acceptance criterion its own `AC-N` or checklist token");
        Self::Unclosed { what, .. } => Code::TaskFileUnclosed,
            help("close the {what}: frontmatter ends with a `---` line, a code fence with the same fence it opened with");
        Self::UntitledScenario { .. } => Code::TaskFileUntitledScenario,
            help("write the scenario's title after `Scenario:` (e.g. `Scenario: R1 — the greeting is written`)");
        Self::Unwritable { .. } => Code::TaskFileUnwritable,
            help("the file was written to a temporary file and renamed: check the directory's permissions and free space");
    }
}

/// Find the task file of `wbs`: `explicit` when given, else `docs/tasks*/<wbs>_*.md` under
/// the project root, else `.spur/tasks/<wbs>.md`.
pub fn locate_task_file(
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

/// A task file found by [`list_task_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTask {
    /// The task, from the file name (`0592` of `0592_hello.md`).
    pub wbs: Wbs,
    /// The file.
    pub path: PathBuf,
}

/// Every task file `<wbs>_<slug>.md` in `folder` (relative to the project root), or in
/// every `docs/tasks*/` folder when none is given: sorted by wbs, then path.
pub fn list_task_files(project_root: &Path, folder: Option<&Path>) -> Vec<ListedTask> {
    let dirs: Vec<PathBuf> = match folder {
        Some(folder) => vec![project_root.join(folder)],
        None => fs::read_dir(project_root.join("docs"))
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("tasks"))
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(files) = fs::read_dir(&dir) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some((wbs, rest)) = name.split_once('_') else {
                continue;
            };
            if !rest.ends_with(".md") || !file.path().is_file() {
                continue;
            }
            if let Ok(wbs) = Wbs::parse(wbs) {
                found.push(ListedTask {
                    wbs,
                    path: file.path(),
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.wbs, &a.path).cmp(&(&b.wbs, &b.path)));
    found
}

fn display_relative(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Read and parse the task file at `path`.
pub(crate) fn read_task_file(path: &Path) -> Result<TaskFile, TaskFileError> {
    let text = read_text(path)?;
    parse_task_file(path, &text)
}

/// The text of the task file at `path`: read through the bounded reader (a regular file,
/// at most [`TASK_FILE_LIMIT`] bytes), and UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String, TaskFileError> {
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
    String::from_utf8(bytes).map_err(|e| {
        unreadable(format!(
            "not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

impl TaskDocument {
    /// Write the document to its path atomically (temporary file, fsync, rename): a
    /// reader sees the old file or the new one, never a part. Callers hold the task's
    /// data lock, so no other spur writer of the task comes between read and write.
    pub fn write(&self) -> Result<(), TaskFileError> {
        crate::store::atomic_file::write_atomic(&self.path, self.text.as_bytes()).map_err(|e| {
            TaskFileError::Unwritable {
                path: self.path.clone(),
                reason: e.to_string(),
            }
        })
    }
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

    /// The reference implementation's shape: frontmatter, `### Requirements` with
    /// `- [ ] R1.` items, `### Acceptance Criteria` with gherkin scenarios, core then advisory.
    const REFERENCE: &str = "\
---
name: \"Say hello\"
status: todo
tags: [\"R9\"]
---

## 0592. Say hello

### Background
Mentions R8 in prose.
### Requirements
- [ ] R1. **Write the greeting.** `greeting.txt` holds `hello, world`.
- [x] R2. Keep it short.
R3. A bare numbered line.
### Acceptance Criteria
Core scenarios (must pass):

```gherkin
Scenario: R1 — the greeting is written
  Given a fresh checkout
  When the pipeline runs
  Then `grep -q 'hello, world' greeting.txt` passes

Scenario: R2 — the file is one line
  Then it has one line
```

Edge cases (advisory):

```gherkin
Scenario: R1 — a ```yaml fence in a step is not a command
  Given a body with a ```yaml fence
```
### Q&A
Scenario: not a criterion
";

    #[test]
    fn reads_the_reference_format() {
        let task = parse_task_file(Path::new("t.md"), REFERENCE).unwrap();
        let ids: Vec<_> = task.requirements.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["R1", "R2", "R3"]);
        assert_eq!(task.requirements[0].line, 12);
        let acs: Vec<_> = task
            .acceptance
            .iter()
            .map(|a| {
                (
                    a.id.as_str(),
                    a.label.as_str(),
                    a.command.as_deref(),
                    a.line,
                )
            })
            .collect();
        assert_eq!(
            acs,
            [
                (
                    "r1-the-greeting-is-written",
                    "Scenario: R1 — the greeting is written",
                    Some("grep -q 'hello, world' greeting.txt"),
                    19
                ),
                (
                    "r2-the-file-is-one-line",
                    "Scenario: R2 — the file is one line",
                    None,
                    24
                ),
                (
                    "r1-a-yaml-fence-in-a-step-is-not-a-command",
                    "[advisory] Scenario: R1 — a ```yaml fence in a step is not a command",
                    None,
                    31
                ),
            ]
        );
        assert!(!task.acceptance[0].parts.is_exempt());
        assert!(task.acceptance[2].parts.is_exempt());
        assert_eq!(
            task.acceptance[0].parts.scenarios,
            ["R1 — the greeting is written"]
        );
    }

    #[test]
    fn a_checklist_criterion_names_the_first_span_of_its_title() {
        let task = parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 x\n## Acceptance Criteria\n\
             - [ ] AC-1: `./check` passes\n\
             - [ ] `no-panic`: Hostile answers give a clear result\n\
             - [ ] `cli-json`: `spur x --json` prints JSON\n\
             - [ ] Shared title\n\
             - [ ] Shared title [non-core]\n",
        )
        .unwrap();
        let acs: Vec<_> = task
            .acceptance
            .iter()
            .map(|a| (a.id.as_str(), a.command.as_deref()))
            .collect();
        assert_eq!(
            acs,
            [
                ("AC-1", Some("./check")),
                ("no-panic", None),
                ("cli-json", Some("spur x --json")),
                ("shared-title", None),
                ("shared-title-2", None),
            ]
        );
        let commanded: Vec<_> = task
            .commanded()
            .map(|(ac, c)| (ac.id.as_str(), c))
            .collect();
        assert_eq!(
            commanded,
            [("AC-1", "./check"), ("cli-json", "spur x --json")]
        );
    }

    #[test]
    fn bad_shapes_are_errors_with_their_line() {
        let cases: [(&str, &str); 4] = [
            (
                "---\nname: x\n## Requirements\n- R1 a\n",
                "t.md:1: frontmatter opened here is never closed",
            ),
            (
                "## Requirements\n- R1 a\n## Acceptance Criteria\n```gherkin\nScenario: a\n",
                "t.md:4: code fence opened here is never closed",
            ),
            (
                "## Requirements\n- R1 a\n## Acceptance Criteria\n- [ ] AC-1: a\n- [ ] AC-1: b\n",
                "t.md:5: acceptance criterion id AC-1 is declared twice (first on line 4)",
            ),
            (
                "## Requirements\n- R1 a\n## Acceptance Criteria\nScenario:\n",
                "t.md:4: a scenario with no title",
            ),
        ];
        for (text, message) in cases {
            let err = parse_task_file(Path::new("t.md"), text).unwrap_err();
            assert!(err.to_string().contains(message), "{err}");
        }
        // A fence left open outside the sections that matter is CommonMark: the rest is code.
        let task = parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 a\n## Notes\n```\n- R2\n",
        )
        .unwrap();
        assert_eq!(task.requirements.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_errors_without_a_panic(text in "(?s).{0,400}") {
            let _ = parse_task_file(Path::new("t.md"), &text);
        }

        #[test]
        fn any_mix_of_task_lines_parses_or_errors_without_a_panic(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("---".to_owned()),
                    proptest::strategy::Just("### Requirements".to_owned()),
                    proptest::strategy::Just("## Acceptance Criteria".to_owned()),
                    proptest::strategy::Just("```gherkin".to_owned()),
                    proptest::strategy::Just("```".to_owned()),
                    proptest::strategy::Just("Edge cases (advisory):".to_owned()),
                    "- \\[ \\] R[0-9]{1,3}\\. .{0,20}",
                    "- \\[ \\] (AC-[0-9]|`[a-z]{1,4}`)?:? .{0,20}",
                    "Scenario: .{0,20}",
                    "  (Given|Then) .{0,10}`.{0,10}`.{0,5}",
                    ".{0,30}",
                ],
                0..30,
            )
        ) {
            let text = lines.join("\n");
            if let Ok(task) = parse_task_file(Path::new("t.md"), &text) {
                let mut ids: Vec<_> = task.acceptance.iter().map(|a| a.id.clone()).collect();
                for id in &ids {
                    proptest::prop_assert!(crate::wbs::Wbs::parse(id).is_ok(), "{id}");
                }
                ids.sort();
                let before = ids.len();
                ids.dedup();
                proptest::prop_assert_eq!(before, ids.len());
            }
        }
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
