//! What of a task or feature file the tree fingerprint covers: everything but the parts spur
//! itself writes after verify ran — the frontmatter and the sections Solution, Testing,
//! Review and Artifacts. Requirements, Acceptance Criteria and every other section are kept,
//! so editing what the task asks for changes the fingerprint and recording how it was done
//! does not.
//!
//! This is a filter over lines, not a task-file parser: a section is a Markdown ATX heading
//! (`#` … `######`) and runs to the next heading of the same or a higher level; lines inside
//! a fenced code block are never headings. What is dropped depends only on the text as it
//! is now, so a heading added to swallow a requirement drops that requirement from the kept
//! text — which changes the fingerprint. Blank lines outside code blocks are left out too
//! (writing a section adds or removes one before it), and a ticked checkbox counts as an
//! open one: `- [x]` and `- [ ]` ask for the same thing, and `spur task record` ticks the
//! boxes a verdict proves after verify ran.

use std::path::Path;

/// The sections spur writes after verify (matched case-insensitively, a trailing `:` aside).
const WRITTEN_AFTER_VERIFY: &[&str] = &["solution", "testing", "review", "artifacts"];

/// Whether `rel` (relative to the project root) is a task or feature file:
/// `docs/tasks*/**/*.md` or `docs/features*/**/*.md`.
pub(crate) fn is_task_or_feature_file(rel: &Path) -> bool {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    let (Some(docs), Some(dir), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    docs == "docs"
        && (dir.starts_with("tasks") || dir.starts_with("features"))
        && rel.extension().is_some_and(|e| e == "md")
}

/// The text of a task or feature file without its frontmatter and the sections spur
/// writes after verify.
pub(crate) fn kept_text(text: &str) -> String {
    let body = without_frontmatter(text);
    let mut kept = String::with_capacity(body.len());
    let mut fence: Option<(char, usize)> = None;
    // The level of the dropped section we are in.
    let mut dropping: Option<usize> = None;
    for line in body.split_inclusive('\n') {
        let in_fence = fence.is_some();
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
            }
        } else if let Some(open) = opens_fence(line) {
            fence = Some(open);
        } else if let Some((level, title)) = heading(line) {
            if dropping.is_some_and(|d| level <= d) {
                dropping = None;
            }
            if dropping.is_none() && is_written_after_verify(title) {
                dropping = Some(level);
            }
        }
        // Blank lines outside code blocks only separate: writing a section often adds or
        // removes one before it, which must not count as editing what is kept.
        if dropping.is_none() && (in_fence || !line.trim().is_empty()) {
            match (in_fence, untick(line)) {
                (false, Some(open)) => kept.push_str(&open),
                _ => kept.push_str(line),
            }
        }
    }
    kept
}

/// `line` with a ticked checkbox (`- [x] `, `* [X] `, `+ [x] `, any indent) written open;
/// `None` when it has none.
fn untick(line: &str) -> Option<String> {
    let rest = line.trim_start();
    let indent = line.len() - rest.len();
    let marker = rest.get(..1).filter(|m| matches!(*m, "-" | "*" | "+"))?;
    let after = rest.get(1..)?.strip_prefix(' ')?;
    let box_rest = after
        .strip_prefix("[x]")
        .or_else(|| after.strip_prefix("[X]"))?;
    if !(box_rest.is_empty() || box_rest.starts_with([' ', '\t', '\n', '\r'])) {
        return None;
    }
    Some(format!(
        "{}{marker} [ ]{box_rest}",
        line.get(..indent).unwrap_or("")
    ))
}

/// The text after a leading `---` … `---` (or `...`) block; all of it when there is none or
/// it is not closed.
fn without_frontmatter(text: &str) -> &str {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return text;
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines {
        offset += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            return text.get(offset..).unwrap_or("");
        }
    }
    text
}

/// `(level, title)` of an ATX heading: up to three spaces, 1–6 `#`, then a space or the end.
fn heading(line: &str) -> Option<(usize, &str)> {
    let line = line.trim_end_matches(['\n', '\r']);
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = line.get(indent..)?;
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = rest.get(level..)?;
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some((level, after.trim().trim_end_matches('#').trim()))
}

fn is_written_after_verify(title: &str) -> bool {
    let title = title.trim_end_matches(':').trim();
    WRITTEN_AFTER_VERIFY
        .iter()
        .any(|name| title.eq_ignore_ascii_case(name))
}

/// A fence opening: up to three spaces, then three or more backticks or tildes.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.len() - trimmed.trim_start_matches(ch).len();
    (len >= 3).then_some((ch, len))
}

fn closes_fence(line: &str, ch: char, len: usize) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let run = trimmed.len() - trimmed.trim_start_matches(ch).len();
    line.len() - trimmed.len() <= 3
        && run >= len
        && trimmed.get(run..).is_some_and(|r| r.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "---\nstatus: todo\n---\n# 0592 Greeting\n\n## Requirements\n\n- R1. say hello\n\n## Acceptance Criteria\n\nScenario: R1 — hello\n\n## Solution\n\nwrote it\n\n### Details\n\nmore\n\n## Testing\n\n```sh\n# not a heading\n## Requirements\n```\n\n## Notes\n\nkept\n";

    #[test]
    fn keeps_requirements_criteria_and_notes_and_drops_what_spur_writes() {
        let kept = kept_text(TASK);
        assert!(kept.starts_with("# 0592 Greeting"), "{kept}");
        for part in ["- R1. say hello", "Scenario: R1", "## Notes", "kept"] {
            assert!(kept.contains(part), "{part} in {kept}");
        }
        for part in [
            "status: todo",
            "wrote it",
            "### Details",
            "more",
            "not a heading",
        ] {
            assert!(!kept.contains(part), "{part} in {kept}");
        }
    }

    #[test]
    fn editing_solution_or_frontmatter_keeps_the_text_and_editing_requirements_does_not() {
        let base = kept_text(TASK);
        let solution = TASK.replace("wrote it", "rewrote it all");
        let frontmatter = TASK.replace("status: todo", "status: done");
        let testing = TASK.replace("# not a heading", "# cargo test: 12 passed");
        for edited in [solution, frontmatter, testing] {
            assert_eq!(kept_text(&edited), base);
        }
        let ticked = TASK.replace("- R1. say hello", "- [ ] R1. say hello");
        assert_eq!(
            kept_text(&ticked.replace("- [ ]", "- [x]")),
            kept_text(&ticked),
            "ticking a box is record-keeping"
        );
        assert_eq!(untick("  * [X] a\n").as_deref(), Some("  * [ ] a\n"));
        assert_eq!(untick("- [x]b"), None);
        let requirement = TASK.replace("say hello", "say goodbye");
        assert_ne!(kept_text(&requirement), base);
        // A Solution heading put above the requirements swallows them: that shows.
        let swallowed = TASK.replace("## Requirements", "## Solution\n\n### Requirements");
        assert_ne!(kept_text(&swallowed), base);
    }

    #[test]
    fn an_unclosed_frontmatter_is_text_and_headings_need_a_space() {
        assert_eq!(kept_text("---\nno end\n"), "---\nno end\n");
        assert_eq!(kept_text("a\n\n  \nb\n```\n\n```\n"), "a\nb\n```\n\n```\n");
        assert_eq!(kept_text("#Solution\nx\n"), "#Solution\nx\n");
        assert_eq!(kept_text("## Review:\nx\n## Next\ny\n"), "## Next\ny\n");
        assert_eq!(kept_text("    ## Review\nx\n"), "    ## Review\nx\n");
    }

    #[test]
    fn task_and_feature_files_are_markdown_under_docs_tasks_or_features() {
        for yes in [
            "docs/tasks/0592_x.md",
            "docs/tasks-2/a/b.md",
            "docs/features/f.md",
        ] {
            assert!(is_task_or_feature_file(Path::new(yes)), "{yes}");
        }
        for no in [
            "docs/tasks/x.txt",
            "docs/notes/x.md",
            "tasks/x.md",
            "docs/tasks.md",
        ] {
            assert!(!is_task_or_feature_file(Path::new(no)), "{no}");
        }
    }
}
