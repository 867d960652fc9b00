//! The task-file parser: one pass over the lines, tracking frontmatter, code fences, the
//! current section (`Requirements`, `Acceptance Criteria`, or another) and, inside the
//! acceptance criteria, the open gherkin scenario and whether its group is advisory.

use std::path::Path;

use super::code_span::first_code_span;
use super::criterion_id::assign_ids;
use super::{TaskAc, TaskFile, TaskFileError, TaskRequirement};
use crate::answer::ac_label::{collapse, strip_links, AcLabel};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Requirements,
    Acceptance,
    Other,
}

/// An open code fence: its character, length, line, and the section it opened in.
#[derive(Debug, Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
    line: usize,
    section: Section,
}

/// A gherkin scenario being read: its title, line, and the step lines seen so far.
#[derive(Debug)]
struct Scenario {
    title: String,
    line: usize,
    advisory: bool,
    steps: Vec<String>,
}

/// The parser's state between lines.
struct Parser<'p> {
    path: &'p Path,
    task: TaskFile,
    section: Section,
    section_level: usize,
    fence: Option<Fence>,
    scenario: Option<Scenario>,
    /// The criteria after a lead-in line naming `advisory` (`Edge cases (advisory):`).
    advisory: bool,
}

/// Parse task-file text (`path` is for messages).
pub fn parse_task_file(path: &Path, text: &str) -> Result<TaskFile, TaskFileError> {
    let mut parser = Parser {
        path,
        task: TaskFile {
            path: path.to_path_buf(),
            requirements: Vec::new(),
            acceptance: Vec::new(),
        },
        section: Section::Other,
        section_level: 0,
        fence: None,
        scenario: None,
        advisory: false,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
    if lines.peek().is_some_and(|(_, l)| l.trim_end() == "---") {
        lines.next();
        let closed = lines
            .by_ref()
            .any(|(_, l)| matches!(l.trim_end(), "---" | "..."));
        if !closed {
            return Err(TaskFileError::Unclosed {
                path: path.to_path_buf(),
                what: "frontmatter",
                line: 1,
            });
        }
    }
    for (line_no, line) in lines {
        parser.line(line_no, line)?;
    }
    if let Some(fence) = parser.fence {
        // A fence left open runs to the end of the file (CommonMark); one that hides the
        // rest of the requirements or criteria is an error.
        if fence.section != Section::Other {
            return Err(TaskFileError::Unclosed {
                path: path.to_path_buf(),
                what: "code fence",
                line: fence.line,
            });
        }
    }
    parser.close_scenario()?;
    let mut task = parser.task;
    if task.requirements.is_empty() {
        return Err(TaskFileError::NoRequirements {
            path: path.to_path_buf(),
        });
    }
    assign_ids(path, &mut task.acceptance)?;
    Ok(task)
}

impl Parser<'_> {
    fn line(&mut self, line_no: usize, line: &str) -> Result<(), TaskFileError> {
        let trimmed = line.trim();
        if let Some(fence) = self.fence {
            if closes(trimmed, fence) {
                self.fence = None;
                self.close_scenario()?;
            } else if self.section == Section::Acceptance {
                self.gherkin_line(line_no, trimmed)?;
            }
            return Ok(());
        }
        if let Some((ch, len)) = opens_fence(trimmed) {
            self.close_scenario()?;
            self.fence = Some(Fence {
                ch,
                len,
                line: line_no,
                section: self.section,
            });
            return Ok(());
        }
        if let Some((level, heading)) = heading(trimmed) {
            if self.section == Section::Other || level <= self.section_level {
                self.close_scenario()?;
                let name = collapse(heading).to_lowercase();
                self.section = match name.as_str() {
                    "requirements" => Section::Requirements,
                    "acceptance criteria" => Section::Acceptance,
                    _ => Section::Other,
                };
                self.section_level = level;
                self.advisory = false;
                return Ok(());
            }
        }
        match self.section {
            Section::Requirements => self.requirement_line(line_no, trimmed),
            Section::Acceptance => self.acceptance_line(line_no, trimmed),
            Section::Other => Ok(()),
        }
    }

    fn requirement_line(&mut self, line_no: usize, trimmed: &str) -> Result<(), TaskFileError> {
        let Some(id) = requirement_id(trimmed) else {
            return Ok(());
        };
        if let Some(first) = self.task.requirements.iter().find(|r| r.id == id) {
            return Err(TaskFileError::DuplicateRequirement {
                path: self.path.to_path_buf(),
                id,
                line: line_no,
                first: first.line,
            });
        }
        self.task
            .requirements
            .push(TaskRequirement { id, line: line_no });
        Ok(())
    }

    /// A line of the acceptance criteria outside a fence: a checklist item, a scenario (or
    /// its step), or prose — a lead-in ending in `:` starts a group, advisory when it says so.
    fn acceptance_line(&mut self, line_no: usize, trimmed: &str) -> Result<(), TaskFileError> {
        if let Some(label) = checklist_label(trimmed) {
            self.close_scenario()?;
            let written = collapse(label);
            if !written.is_empty() {
                let parts = AcLabel::parse(&written);
                let command = first_code_span(&parts.title).map(str::to_owned);
                self.task.acceptance.push(TaskAc {
                    id: String::new(),
                    label: collapse(&strip_links(&written)),
                    written,
                    parts,
                    command,
                    line: line_no,
                });
            }
            return Ok(());
        }
        if self.gherkin_line(line_no, trimmed)? || trimmed.is_empty() {
            return Ok(());
        }
        self.close_scenario()?;
        if trimmed.ends_with(':') {
            self.advisory = trimmed.to_lowercase().contains("advisory");
        }
        Ok(())
    }

    /// A scenario line or a step of the open scenario; `false` for anything else.
    fn gherkin_line(&mut self, line_no: usize, trimmed: &str) -> Result<bool, TaskFileError> {
        if let Some(title) = scenario_title(trimmed) {
            self.close_scenario()?;
            let title = collapse(title);
            if title.is_empty() {
                return Err(TaskFileError::UntitledScenario {
                    path: self.path.to_path_buf(),
                    line: line_no,
                });
            }
            self.scenario = Some(Scenario {
                title,
                line: line_no,
                advisory: self.advisory,
                steps: Vec::new(),
            });
            return Ok(true);
        }
        if is_step(trimmed) {
            if let Some(scenario) = &mut self.scenario {
                scenario.steps.push(trimmed.to_owned());
                return Ok(true);
            }
        }
        if ["Feature:", "Rule:", "Background:", "Examples:"]
            .iter()
            .any(|k| trimmed.starts_with(k))
        {
            self.close_scenario()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn close_scenario(&mut self) -> Result<(), TaskFileError> {
        let Some(scenario) = self.scenario.take() else {
            return Ok(());
        };
        let written = format!("Scenario: {}", scenario.title);
        let tagged = if scenario.advisory {
            format!("[advisory] {written}")
        } else {
            written.clone()
        };
        let command = first_code_span(&scenario.title)
            .or_else(|| scenario.steps.iter().find_map(|s| first_code_span(s)))
            .map(str::to_owned);
        self.task.acceptance.push(TaskAc {
            id: String::new(),
            label: collapse(&strip_links(&tagged)),
            parts: AcLabel::parse(&tagged),
            written,
            command,
            line: scenario.line,
        });
        Ok(())
    }
}

/// `Scenario: X` / `Scenario Outline: X` → `X`.
fn scenario_title(line: &str) -> Option<&str> {
    ["Scenario:", "Scenario Outline:"]
        .iter()
        .find_map(|k| line.strip_prefix(k))
}

/// A gherkin step: `Given`, `When`, `Then`, `And`, `But` or `*`, then a space.
fn is_step(line: &str) -> bool {
    ["Given ", "When ", "Then ", "And ", "But ", "* "]
        .iter()
        .any(|k| line.starts_with(k))
}

/// A fence opening: three or more backticks or tildes (a backtick fence's info string has
/// no backtick).
fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let ch = *line.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = line.bytes().take_while(|&b| b == ch).count();
    let info = line.get(len..).unwrap_or("");
    (len >= 3 && !(ch == b'`' && info.contains('`'))).then_some((ch, len))
}

/// The line closes `fence`: at least as many of its character, nothing else.
fn closes(line: &str, fence: Fence) -> bool {
    let len = line.bytes().take_while(|&b| b == fence.ch).count();
    len >= fence.len && len == line.len()
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
