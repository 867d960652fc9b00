//! The sample task `spur init` writes: a task file in the reference's format (frontmatter,
//! `### Requirements` with `R1.` items, acceptance criteria as gherkin scenarios whose code
//! span is the command `spur verify` runs), small enough that any agent — the stub too —
//! can do it, so that the first run of the task pipeline goes all the way through the
//! done gate. It passes `spur task check` but for one warning (it names no feature);
//! `task record` adds the Solution and Testing sections when the run records them.

use super::SAMPLE_WBS;

/// The task file, created `today`.
pub(super) fn text(today: &str) -> String {
    TEMPLATE
        .replace("{wbs}", SAMPLE_WBS)
        .replace("{today}", today)
}

const TEMPLATE: &str = r#"---
name: "Say hello"
description: "A first task for the task pipeline: a greeting in NOTES.md"
status: todo
template: standard
created_at: {today}
updated_at: {today}
priority: P3
tags: ["sample"]
---

## {wbs}. Say hello

### Background

A sample task written by `spur init`, to try the task pipeline end to end before a real
one. It shows the shape of a task file: the frontmatter, requirements `R1.` …, and
acceptance criteria as gherkin scenarios; the first code span of a scenario is the
command `spur verify` runs for it. Put your own tasks beside it as
`docs/tasks/<wbs>_<slug>.md`.

### Requirements
- [ ] R1. **Leave a greeting.** `NOTES.md` has a line that says `hello from task {wbs}`.

### Acceptance Criteria
Core scenarios (must pass):

```gherkin
Scenario: R1 — the greeting is in NOTES.md
  Given the project
  When the task is implemented
  Then `grep -q 'hello from task {wbs}' NOTES.md` passes
```

### Design

Append one line to `NOTES.md` (create it if missing); nothing else changes.

### Plan

1. Append the greeting to `NOTES.md`.
2. Run the scenario's command.
"#;
