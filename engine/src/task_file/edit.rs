//! Edits of a task file by span: a frontmatter value, or a section's body, replaced in the
//! text; every other byte stays the file's own. Never a YAML or Markdown round trip: keys
//! spur does not know, their order, comments, quoting and every untouched section are
//! kept byte for byte. Each edit returns the new document and the one span it replaced.

use std::ops::Range;
use std::path::PathBuf;

use super::document::TaskDocument;
use super::sections::{closes_fence, heading, opens_fence, CANONICAL_SECTIONS};
use super::TaskFileError;
use crate::diagnostic::{coded_diagnostic, Code};

/// One replaced span: `range` of the old text became `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanEdit {
    /// The bytes of the old text that were replaced (empty for an insertion).
    pub range: Range<usize>,
    /// What replaced them.
    pub text: String,
}

impl SpanEdit {
    /// `old` with this edit applied.
    pub fn apply(&self, old: &str) -> String {
        let mut new = String::with_capacity(old.len() + self.text.len());
        new.push_str(old.get(..self.range.start).unwrap_or(old));
        new.push_str(&self.text);
        new.push_str(old.get(self.range.end..).unwrap_or(""));
        new
    }
}

/// A section body written: the new document, the edit, and the heading lines that were
/// taken out of the body because they would have started sections of their own.
#[derive(Debug, Clone)]
pub struct SectionWrite {
    /// The document after the edit.
    pub document: TaskDocument,
    /// The span replaced.
    pub edit: SpanEdit,
    /// Heading lines removed from the body (as given).
    pub stripped: Vec<String>,
}

/// Why an edit cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file has no frontmatter to set a key in.
    #[error("task file {} has no frontmatter: it does not open with a `---` line", path.display())]
    NoFrontmatter {
        /// The task file.
        path: PathBuf,
    },
    /// The frontmatter's YAML cannot be read.
    #[error("task file {}:{line}: its frontmatter cannot be read: {message}", path.display())]
    Frontmatter {
        /// The task file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The key holds a list or a mapping, which spur does not replace.
    #[error("task file {}:{line}: `{key}` holds a list or a mapping, not a single value", path.display())]
    NotAScalar {
        /// The task file.
        path: PathBuf,
        /// The key.
        key: String,
        /// Its line.
        line: usize,
    },
    /// A section name the task format does not have.
    #[error("unknown section {name:?}: the sections are {known}")]
    UnknownSection {
        /// The name given.
        name: String,
        /// The sections there are, comma-separated.
        known: String,
    },
    /// The edited text is not a task file any more (cannot happen for a file that was one).
    #[error(transparent)]
    Reparse(#[from] TaskFileError),
}

coded_diagnostic! {
    EditError {
        forward { Reparse }
        Self::NoFrontmatter { .. } => Code::TaskFileNoFrontmatter,
            help("the reference's task files open with `---`, `name: …`, `status: …`, `---`; `spur task create` writes one");
        Self::Frontmatter { .. } => Code::TaskFileFrontmatter,
            help("fix the YAML between the `---` lines");
        Self::NotAScalar { .. } => Code::TaskFileFrontmatter,
            help("write the key as one value (`status: wip`)");
        Self::UnknownSection { .. } => Code::TaskUnknownSection,
            help("name one of the sections listed (any case)");
    }
}

impl TaskDocument {
    /// Set the frontmatter key `key` to the scalar `value`: the value's span is replaced
    /// (keeping its quoting style), or `key: value` is added before the closing `---`.
    pub fn set_field(&self, key: &str, value: &str) -> Result<(TaskDocument, SpanEdit), EditError> {
        let Some(frontmatter) = &self.frontmatter else {
            return Err(EditError::NoFrontmatter {
                path: self.path.clone(),
            });
        };
        if let Some(problem) = frontmatter.problem() {
            return Err(EditError::Frontmatter {
                path: self.path.clone(),
                line: self.line_of(problem.offset),
                message: problem.message.clone(),
            });
        }
        let edit = match frontmatter.get(key) {
            Some(entry) if !entry.is_scalar() => {
                return Err(EditError::NotAScalar {
                    path: self.path.clone(),
                    key: key.to_owned(),
                    line: entry.line(&self.text),
                })
            }
            Some(entry) => {
                let old = self.text.get(entry.value_span.clone()).unwrap_or("");
                let rendered = render_scalar(value, old);
                let text = if entry.value_span.is_empty() {
                    format!(" {rendered}")
                } else {
                    rendered
                };
                SpanEdit {
                    range: entry.value_span.clone(),
                    text,
                }
            }
            None => SpanEdit {
                range: frontmatter.close_line..frontmatter.close_line,
                text: format!("{key}: {}\n", render_scalar(value, "")),
            },
        };
        Ok((self.reparsed(&edit)?, edit))
    }

    /// Replace the body of the section `name` (a canonical section, any case) with `body`,
    /// or insert the section where the reference's order puts it. A leading heading that
    /// repeats the section's name is dropped; heading lines at the section level or above
    /// would start sections of their own, so they are taken out and returned.
    pub fn replace_section(&self, name: &str, body: &str) -> Result<SectionWrite, EditError> {
        self.replace_section_of(name, body, CANONICAL_SECTIONS)
    }

    /// [`Self::replace_section`] for a document whose sections are `order` (a feature
    /// file's: Goal, Scope, …), in the order a missing one is inserted.
    pub fn replace_section_of(
        &self,
        name: &str,
        body: &str,
        order: &[&'static str],
    ) -> Result<SectionWrite, EditError> {
        let wanted = name.trim();
        let Some(name) = order
            .iter()
            .copied()
            .find(|c| c.eq_ignore_ascii_case(wanted))
        else {
            return Err(EditError::UnknownSection {
                name: name.to_owned(),
                known: order.join(", "),
            });
        };
        let level = self.sections.level;
        let (content, stripped) = clean_body(body, name, level);
        let edit = match self.sections.get(name) {
            Some(section) => {
                let followed = section.body.end < self.text.len();
                SpanEdit {
                    range: section.body.clone(),
                    text: body_text(&content, followed),
                }
            }
            None => self.insertion(name, level, &content, order),
        };
        Ok(SectionWrite {
            document: self.reparsed(&edit)?,
            edit,
            stripped,
        })
    }

    /// Where and what to insert for a missing section: before the first section the
    /// reference orders after it, else at the end.
    fn insertion(&self, name: &str, level: usize, content: &str, order: &[&str]) -> SpanEdit {
        let rank = |n: &str| order.iter().position(|c| c.eq_ignore_ascii_case(n));
        let own = rank(name);
        let before = self
            .sections
            .sections
            .iter()
            .find(|s| matches!((rank(&s.name), own), (Some(r), Some(o)) if r > o));
        let heading = format!("{} {name}\n", "#".repeat(level));
        match before {
            Some(section) => SpanEdit {
                range: section.heading.start..section.heading.start,
                text: format!("{heading}{}", body_text(content, true)),
            },
            None => {
                let end = self.text.len();
                let separator = if self.text.is_empty() || self.text.ends_with("\n\n") {
                    ""
                } else if self.text.ends_with('\n') {
                    "\n"
                } else {
                    "\n\n"
                };
                SpanEdit {
                    range: end..end,
                    text: format!("{separator}{heading}{}", body_text(content, false)),
                }
            }
        }
    }

    /// Apply several edits of this document's text at once (they must not overlap; an
    /// edit that does is left out).
    pub fn apply_edits(&self, edits: &[SpanEdit]) -> Result<TaskDocument, TaskFileError> {
        let mut sorted: Vec<&SpanEdit> = edits.iter().collect();
        sorted.sort_by_key(|e| (e.range.start, e.range.end));
        let mut text = String::with_capacity(self.text.len());
        let mut at = 0;
        for edit in sorted {
            if edit.range.start < at || edit.range.end > self.text.len() {
                continue;
            }
            text.push_str(self.text.get(at..edit.range.start).unwrap_or(""));
            text.push_str(&edit.text);
            at = edit.range.end;
        }
        text.push_str(self.text.get(at..).unwrap_or(""));
        TaskDocument::parse(&self.path, text)
    }

    fn reparsed(&self, edit: &SpanEdit) -> Result<TaskDocument, TaskFileError> {
        TaskDocument::parse(&self.path, edit.apply(&self.text))
    }
}

/// The bytes of a section body holding `content`: a blank line, the content, and a blank
/// line before the next heading when one follows.
fn body_text(content: &str, followed: bool) -> String {
    let mut text = String::from("\n");
    if !content.is_empty() {
        text.push_str(content);
        text.push('\n');
        if followed {
            text.push('\n');
        }
    }
    text
}

/// `body` without blank lines around it, without a first heading naming the section,
/// and without heading lines (outside code) at `level` or above, which are returned.
fn clean_body(body: &str, name: &str, level: usize) -> (String, Vec<String>) {
    let body = body.replace("\r\n", "\n");
    let mut lines: Vec<&str> = body.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    if lines
        .first()
        .and_then(|l| heading(l))
        .is_some_and(|(_, title)| title.eq_ignore_ascii_case(name))
    {
        lines.remove(0);
    }
    let mut kept = Vec::with_capacity(lines.len());
    let mut stripped = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in lines {
        if let Some((ch, len)) = fence {
            if closes_fence(line, ch, len) {
                fence = None;
            }
        } else if let Some(open) = opens_fence(line) {
            fence = Some(open);
        } else if heading(line).is_some_and(|(l, _)| l <= level) {
            stripped.push(line.to_owned());
            continue;
        }
        kept.push(line);
    }
    while kept.first().is_some_and(|l| l.trim().is_empty()) {
        kept.remove(0);
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    (kept.join("\n"), stripped)
}

/// `value` as a YAML scalar in the style of the value it replaces (`old`): double- or
/// single-quoted when that was, plain when that reads back as the same string, else
/// double-quoted.
fn render_scalar(value: &str, old: &str) -> String {
    if old.starts_with('\'') && !value.contains('\n') {
        return format!("'{}'", value.replace('\'', "''"));
    }
    if old.starts_with('"') || !plain_is_safe(value) {
        return serde_json::to_string(value).unwrap_or_else(|_| format!("\"{value}\""));
    }
    value.to_owned()
}

/// A plain scalar that YAML reads back as this very string: word characters and a few
/// punctuation marks, not starting with an indicator, and not a null, boolean or number.
fn plain_is_safe(value: &str) -> bool {
    let ok_chars = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '+' | '/'));
    let first_ok = value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let lower = value.to_ascii_lowercase();
    let special = matches!(
        lower.as_str(),
        "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "~"
    ) || value.parse::<f64>().is_ok()
        || value.ends_with(':')
        || value.contains(": ");
    ok_chars && first_ok && !special
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const TEXT: &str = "---\nname: \"Say hello\"\nstatus: todo\nparent_wbs:\nimpl_progress:\n  planning: done\nupdated_at: \"2026-06-14T17:38:05.414Z\"\n---\n\n## 0001. Say hello\n\n### Background\nWhy.\n\n### Solution\n\n### History\n- a → b\n";

    fn doc(text: &str) -> TaskDocument {
        TaskDocument::parse(Path::new("t.md"), text.to_owned()).unwrap()
    }

    #[test]
    fn set_field_replaces_only_the_value_and_keeps_its_quoting() {
        let (new, edit) = doc(TEXT).set_field("status", "wip").unwrap();
        assert_eq!(new.text(), TEXT.replace("status: todo", "status: wip"));
        assert_eq!(&TEXT[edit.range.clone()], "todo");
        let (new, _) = doc(TEXT)
            .set_field("updated_at", "2027-01-01T00:00:00Z")
            .unwrap();
        assert_eq!(
            new.text(),
            TEXT.replace("2026-06-14T17:38:05.414Z", "2027-01-01T00:00:00Z")
        );
        let (new, _) = doc(TEXT).set_field("parent_wbs", "0007").unwrap();
        assert!(
            new.text().contains("parent_wbs: \"0007\"\n"),
            "{}",
            new.text()
        );
        let (new, edit) = doc(TEXT).set_field("done_reason", "it's: fine").unwrap();
        assert_eq!(edit.range.start, TEXT.find("---\n\n##").unwrap());
        assert!(new.text().contains("done_reason: \"it's: fine\"\n---\n"));
        assert_eq!(
            new.frontmatter().unwrap().scalar("done_reason").as_deref(),
            Some("it's: fine")
        );
    }

    #[test]
    fn set_field_needs_a_readable_frontmatter() {
        assert!(matches!(
            doc("# T\n").set_field("status", "wip"),
            Err(EditError::NoFrontmatter { .. })
        ));
        assert!(matches!(
            doc("---\nname: [x\n---\n").set_field("status", "wip"),
            Err(EditError::Frontmatter { .. })
        ));
    }

    #[test]
    fn replace_section_edits_one_body_and_inserts_missing_ones_in_order() {
        let write = doc(TEXT)
            .replace_section("solution", "## Solution\n\n| `a.rs:1` |\n")
            .unwrap();
        assert_eq!(
            write.document.text(),
            TEXT.replace("### Solution\n\n", "### Solution\n\n| `a.rs:1` |\n\n")
        );
        assert!(write.stripped.is_empty());
        let write = doc(TEXT).replace_section("Testing", "ok").unwrap();
        assert_eq!(
            write.document.text(),
            TEXT.replace("### History", "### Testing\n\nok\n\n### History")
        );
        let write = doc(TEXT)
            .replace_section(
                "Review",
                "### Review\n### Phantom\nbody\n```\n### kept\n```",
            )
            .unwrap();
        assert_eq!(write.stripped, ["### Phantom"]);
        assert!(write
            .document
            .text()
            .contains("### Review\n\nbody\n```\n### kept\n```\n\n### History"));
        assert!(matches!(
            doc(TEXT).replace_section("Findings", "x"),
            Err(EditError::UnknownSection { .. })
        ));
    }

    #[test]
    fn a_section_is_appended_when_none_comes_after_it() {
        let write = doc("# T\n\n## Requirements\n- R1 x")
            .replace_section("Testing", "")
            .unwrap();
        assert_eq!(
            write.document.text(),
            "# T\n\n## Requirements\n- R1 x\n\n## Testing\n\n"
        );
    }

    /// A frontmatter value as it may be written: plain, double- or single-quoted, empty.
    fn written_value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            "[a-z][a-z0-9-]{0,12}",
            "[A-Za-z0-9 :#,'-]{0,20}".prop_map(|v| serde_json::to_string(&v).unwrap()),
            "[A-Za-z0-9 \"#:-]{0,20}".prop_map(|v| format!("'{}'", v.replace('\'', "''"))),
            Just(String::new()),
            Just("[\"a\", 'b']".to_owned()),
            Just("\n  nested: true\n  list: [1, 2]".to_owned()),
        ]
    }

    /// A section body: lines of prose, list items, table rows, code with heading-like lines.
    fn section_body() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        proptest::collection::vec(
            prop_oneof![
                "[A-Za-z0-9 .,:`|*_-]{0,30}",
                Just(String::new()),
                Just("- [ ] R1. a requirement".to_owned()),
                Just("```\n### not a heading\n```".to_owned()),
                Just("#### a sub-heading".to_owned()),
            ],
            0..6,
        )
        .prop_map(|lines| lines.join("\n"))
    }

    proptest::proptest! {
        /// Every byte outside the edited span survives a frontmatter write, the value reads
        /// back, and every other key's value is as written.
        #[test]
        fn set_field_changes_only_the_value_span(
            values in proptest::collection::vec(written_value(), 1..6),
            pick in 0usize..6,
            new_value in "[A-Za-z0-9][A-Za-z0-9 :.'\"#-]{0,16}",
            body in section_body(),
        ) {
            let mut text = String::from("---\n");
            for (i, value) in values.iter().enumerate() {
                text.push_str(&format!("k{i}: {value}\n"));
            }
            text.push_str(&format!("---\n\n## 0001. T\n\n### Background\n{body}\n"));
            let old = doc(&text);
            proptest::prop_assume!(old.frontmatter().unwrap().problem().is_none());
            let key = format!("k{}", pick % values.len());
            let (new, edit) = match old.set_field(&key, &new_value) {
                Ok(done) => done,
                Err(EditError::NotAScalar { .. }) => return Ok(()),
                Err(e) => return Err(proptest::test_runner::TestCaseError::fail(e.to_string())),
            };
            let after = edit.range.start + edit.text.len();
            proptest::prop_assert_eq!(&new.text()[..edit.range.start], &text[..edit.range.start]);
            proptest::prop_assert_eq!(&new.text()[after..], &text[edit.range.end..]);
            let fm = new.frontmatter().unwrap();
            proptest::prop_assert_eq!(fm.scalar(&key), Some(new_value.clone()));
            for entry in old.frontmatter().unwrap().entries.as_ref().unwrap() {
                if entry.key != key {
                    let was = &text[entry.value_span.clone()];
                    let now = fm.get(&entry.key).unwrap();
                    proptest::prop_assert_eq!(&new.text()[now.value_span.clone()], was);
                }
            }
            proptest::prop_assert_eq!(new.section_body("Background"), old.section_body("Background"));
        }

        /// Every byte outside the replaced (or inserted) section body survives a section
        /// write, and the section reads back as what was written.
        #[test]
        fn replace_section_changes_only_the_body_span(
            bodies in proptest::collection::vec(section_body(), 4),
            present in proptest::collection::vec(proptest::bool::ANY, 4),
            pick in 0usize..4,
            content in section_body(),
        ) {
            let names = ["Background", "Solution", "Testing", "History"];
            let mut text = String::from("---\nname: T\nstatus: wip\n---\n\n## 0001. T\n");
            for ((name, body), here) in names.iter().zip(&bodies).zip(&present) {
                if *here {
                    text.push_str(&format!("\n### {name}\n{body}\n"));
                }
            }
            let old = doc(&text);
            let write = old.replace_section(names[pick], &content).unwrap();
            let edit = &write.edit;
            let after = edit.range.start + edit.text.len();
            let new = write.document.text();
            proptest::prop_assert_eq!(&new[..edit.range.start], &text[..edit.range.start]);
            proptest::prop_assert_eq!(&new[after..], &text[edit.range.end..]);
            let expected: Vec<&str> = content
                .lines()
                .filter(|l| heading(l).is_none_or(|(level, _)| level > 3) || l.starts_with("```"))
                .collect();
            let got = write.document.section_body(names[pick]).unwrap();
            for line in expected.iter().filter(|l| !l.trim().is_empty()) {
                proptest::prop_assert!(got.contains(*line), "{line:?} in {got:?}");
            }
            // Other sections keep their text (a section inserted after the last one is
            // separated from it by a blank line, which the span edit adds at the end).
            let trimmed = |b: Option<&str>| b.map(|b| b.trim_end_matches('\n').to_owned());
            for (name, here) in names.iter().zip(&present) {
                if *here && *name != names[pick] {
                    proptest::prop_assert_eq!(
                        trimmed(write.document.section_body(name)),
                        trimmed(old.section_body(name))
                    );
                }
            }
        }
    }

    #[test]
    fn scalars_render_so_they_read_back() {
        assert_eq!(render_scalar("wip", "todo"), "wip");
        assert_eq!(render_scalar("wip", "\"todo\""), "\"wip\"");
        assert_eq!(render_scalar("it's", "'x'"), "'it''s'");
        for value in ["true", "1.5", "a: b", "#x", "", "x\ny", "null"] {
            let rendered = render_scalar(value, "");
            assert_ne!(rendered, value, "{value:?} must be quoted");
        }
    }
}
