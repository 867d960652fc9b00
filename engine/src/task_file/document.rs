//! A task file held whole, with the byte spans spur edits: its frontmatter keys and values
//! and its sections. The verbs that write a task file (`spur task update`, `record`, the
//! status view) read one of these, make a new one with one span replaced (`edit.rs`) and
//! write it atomically; everything outside the span is the file's own bytes.

use std::path::{Path, PathBuf};

use super::frontmatter::{line_of, Frontmatter};
use super::sections::{Section, Sections};
use super::{read_text, TaskFileError};

/// A task file: its text, frontmatter and sections.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDocument {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
    pub(crate) frontmatter: Option<Frontmatter>,
    pub(crate) sections: Sections,
}

impl TaskDocument {
    /// Read the task file at `path` (bounded, UTF-8).
    pub fn read(path: &Path) -> Result<TaskDocument, TaskFileError> {
        let text = read_text(path)?;
        TaskDocument::parse(path, text)
    }

    /// Take `text` apart (`path` is for messages). A frontmatter that opens and never
    /// closes is an error; one whose YAML cannot be read is kept, with its problem.
    pub fn parse(path: &Path, text: String) -> Result<TaskDocument, TaskFileError> {
        let frontmatter = match Frontmatter::find(&text) {
            None => None,
            Some(Ok(frontmatter)) => Some(frontmatter),
            Some(Err(offset)) => {
                return Err(TaskFileError::Unclosed {
                    path: path.to_path_buf(),
                    what: "frontmatter",
                    line: line_of(&text, offset),
                })
            }
        };
        let body_start = frontmatter.as_ref().map_or(0, |f| f.block.end);
        let sections = Sections::read(&text, body_start);
        Ok(TaskDocument {
            path: path.to_path_buf(),
            text,
            frontmatter,
            sections,
        })
    }

    /// Where it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The frontmatter, if the file opens with one.
    pub fn frontmatter(&self) -> Option<&Frontmatter> {
        self.frontmatter.as_ref()
    }

    /// Everything after the frontmatter (all of it when there is none).
    pub fn content(&self) -> &str {
        let start = self.frontmatter.as_ref().map_or(0, |f| f.block.end);
        self.text.get(start..).unwrap_or("")
    }

    /// The frontmatter's `status:` as written, when it is a scalar.
    pub fn status_text(&self) -> Option<String> {
        self.frontmatter.as_ref()?.scalar("status")
    }

    /// The frontmatter's `name:`.
    pub fn name(&self) -> Option<String> {
        self.frontmatter.as_ref()?.scalar("name")
    }

    /// The feature the task belongs to: `feature_id:`, or the older `feature-id:`.
    pub fn feature_id(&self) -> Option<String> {
        let frontmatter = self.frontmatter.as_ref()?;
        frontmatter
            .scalar("feature_id")
            .or_else(|| frontmatter.scalar("feature-id"))
            .filter(|id| !id.trim().is_empty())
    }

    /// The sections, in file order.
    pub fn sections(&self) -> &[Section] {
        &self.sections.sections
    }

    /// The section named `name` (any case).
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.get(name)
    }

    /// The body of the section named `name` (any case), if the file has it.
    pub fn section_body(&self, name: &str) -> Option<&str> {
        let section = self.sections.get(name)?;
        self.text.get(section.body.clone())
    }

    /// The 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        line_of(&self.text, offset)
    }
}

impl Section {
    /// The byte offset of its heading line.
    pub fn offset(&self) -> usize {
        self.heading.start
    }

    /// The byte range of its body.
    pub fn body_range(&self) -> std::ops::Range<usize> {
        self.body.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_frontmatter_sections_and_content() {
        let text = "---\nname: \"T\"\nstatus: wip\nfeature-id: F4\n---\n\n## 0001. T\n\n### Solution\n`a.rs:1`\n### Testing\n";
        let doc = TaskDocument::parse(Path::new("t.md"), text.to_owned()).unwrap();
        assert_eq!(doc.status_text().as_deref(), Some("wip"));
        assert_eq!(doc.name().as_deref(), Some("T"));
        assert_eq!(doc.feature_id().as_deref(), Some("F4"));
        assert!(doc.content().starts_with("\n## 0001. T"));
        assert_eq!(doc.section_body("solution"), Some("`a.rs:1`\n"));
        assert_eq!(doc.section_body("Testing"), Some(""));
        assert_eq!(doc.section_body("Review"), None);
        let err = TaskDocument::parse(Path::new("t.md"), "x\n".to_owned()).unwrap();
        assert!(err.frontmatter().is_none());
        let unclosed = TaskDocument::parse(Path::new("t.md"), "---\nname: x\n".to_owned());
        assert!(matches!(
            unclosed,
            Err(TaskFileError::Unclosed { line: 1, .. })
        ));
    }
}
