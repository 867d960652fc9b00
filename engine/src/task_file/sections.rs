//! The sections of a task file as spur reads them to write: every ATX heading outside
//! fenced code, and for each section heading the byte span of its line and of its body.
//! A section runs to the next heading of its level or above (so a `####` inside `###
//! Background` stays in Background, and a `## ` title never ends up inside one).
//!
//! Which level holds the sections: the reference's files use `###` under a `## <wbs>.
//! Title`; spur's checklist shape uses `##`. The level is the one at which a canonical
//! section name (Background, Requirements, …) first appears, `###` when none does.

use std::ops::Range;

/// The task sections the reference knows, in the order a missing one is inserted.
pub const CANONICAL_SECTIONS: &[&str] = &[
    "Background",
    "Requirements",
    "Acceptance Criteria",
    "Q&A",
    "Design",
    "Plan",
    "Solution",
    "Root Cause",
    "Testing",
    "Review",
    "Artifacts",
    "References",
    "Notes",
    "History",
];

/// The level a task file's sections are written at when it has none yet.
const DEFAULT_LEVEL: usize = 3;

/// One ATX heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    /// 1 for `#`, … 6 for `######`.
    pub(crate) level: usize,
    /// The heading's text, trimmed, closing `#`s removed.
    pub(crate) title: String,
    /// The heading line, its newline included.
    pub(crate) line: Range<usize>,
}

/// One section: a heading at the section level and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading's text (`Acceptance Criteria`).
    pub name: String,
    /// The heading line, newline included.
    pub(crate) heading: Range<usize>,
    /// Everything after the heading line up to the next heading of its level or above.
    pub(crate) body: Range<usize>,
}

/// The headings and sections of a text (the part after the frontmatter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sections {
    pub(crate) headings: Vec<Heading>,
    /// The level sections are at.
    pub(crate) level: usize,
    pub(crate) sections: Vec<Section>,
}

impl Sections {
    /// The sections of `text[from..]` (offsets are into `text`).
    pub(crate) fn read(text: &str, from: usize) -> Sections {
        let headings = headings(text, from);
        let level = section_level(&headings);
        let mut sections = Vec::new();
        for (i, heading) in headings.iter().enumerate() {
            if heading.level != level {
                continue;
            }
            let end = headings
                .get(i + 1..)
                .and_then(|rest| rest.iter().find(|h| h.level <= level))
                .map_or(text.len(), |h| h.line.start);
            sections.push(Section {
                name: heading.title.clone(),
                heading: heading.line.clone(),
                body: heading.line.end..end,
            });
        }
        Sections {
            headings,
            level,
            sections,
        }
    }

    /// The section named `name` (case-insensitive; the first when there are two).
    pub(crate) fn get(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }
}

/// `name` as the reference spells it, if it is a canonical section (any case).
pub fn canonical_section(name: &str) -> Option<&'static str> {
    let name = name.trim();
    CANONICAL_SECTIONS
        .iter()
        .copied()
        .find(|c| c.eq_ignore_ascii_case(name))
}

/// A feature file's sections (the reference's feature template), in order.
pub const FEATURE_SECTIONS: &[&str] = &[
    "Goal",
    "Scope",
    "Acceptance Criteria",
    "Tasks",
    "Notes",
    "History",
];

fn section_level(headings: &[Heading]) -> usize {
    let known = |title: &str| {
        canonical_section(title).is_some()
            || FEATURE_SECTIONS
                .iter()
                .any(|f| f.eq_ignore_ascii_case(title.trim()))
    };
    headings
        .iter()
        .find(|h| (2..=3).contains(&h.level) && known(&h.title))
        .map_or(DEFAULT_LEVEL, |h| h.level)
}

/// Every ATX heading of `text[from..]` outside fenced code.
fn headings(text: &str, from: usize) -> Vec<Heading> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = from;
    for line in text.get(from..).unwrap_or("").split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = opens_fence(line) {
            fence = Some(open);
            continue;
        }
        if let Some((level, title)) = heading(line) {
            found.push(Heading {
                level,
                title: title.to_owned(),
                line: start..offset,
            });
        }
    }
    found
}

/// `(level, title)` of an ATX heading: up to three spaces, 1–6 `#`, then a space or the end.
pub(crate) fn heading(line: &str) -> Option<(usize, &str)> {
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

/// A fence opening: up to three spaces, then three or more backticks or tildes (a backtick
/// fence's info string has no backtick).
pub(crate) fn opens_fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.len() - trimmed.trim_start_matches(ch).len();
    let info = trimmed.get(len..).unwrap_or("");
    (len >= 3 && !(ch == '`' && info.contains('`'))).then_some((ch, len))
}

/// The line closes a fence of `len` × `ch`: at least as many, nothing else.
pub(crate) fn closes_fence(line: &str, ch: char, len: usize) -> bool {
    let trimmed = line.trim_start_matches(' ').trim_end();
    let run = trimmed.len() - trimmed.trim_start_matches(ch).len();
    run >= len && run == trimmed.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "## 0001. Title\n\n### Background\nWhy.\n#### Detail\nmore\n```\n### not a heading\n```\n### Requirements\n- [ ] R1. x\n## Appendix\ntext\n### Odd one\n";

    #[test]
    fn sections_run_to_the_next_heading_of_their_level_or_above() {
        let read = Sections::read(TEXT, 0);
        assert_eq!(read.level, 3);
        let bodies: Vec<(&str, &str)> = read
            .sections
            .iter()
            .map(|s| (s.name.as_str(), &TEXT[s.body.clone()]))
            .collect();
        assert_eq!(
            bodies,
            [
                (
                    "Background",
                    "Why.\n#### Detail\nmore\n```\n### not a heading\n```\n"
                ),
                ("Requirements", "- [ ] R1. x\n"),
                ("Odd one", ""),
            ]
        );
        assert_eq!(
            &TEXT[read.get("requirements").unwrap().heading.clone()],
            "### Requirements\n"
        );
    }

    #[test]
    fn the_checklist_shape_has_its_sections_at_level_two() {
        let text = "# 0592 Say hello\n\n## Requirements\n\n- R1: x\n\n## Acceptance Criteria\n\n- [ ] AC-1: y\n";
        let read = Sections::read(text, 0);
        assert_eq!(read.level, 2);
        assert_eq!(
            read.sections
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["Requirements", "Acceptance Criteria"]
        );
        assert_eq!(Sections::read("no headings\n", 0).level, 3);
    }

    #[test]
    fn canonical_names_are_matched_in_any_case() {
        assert_eq!(canonical_section(" testing "), Some("Testing"));
        assert_eq!(canonical_section("q&a"), Some("Q&A"));
        assert_eq!(canonical_section("Findings"), None);
    }
}
