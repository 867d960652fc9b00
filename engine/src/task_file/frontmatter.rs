//! A task file's YAML frontmatter as spur reads it to write: the block between a first line
//! `---` and the next `---` (or `...`), its top-level keys in file order, and the byte span
//! of each key and value in the file. Writes replace a value's span and nothing else (see
//! `edit.rs`), so keys spur does not know — `impl_progress:` maps, comments, quoting — stay
//! byte for byte. The YAML goes through spur's one reader (`yaml::parse`, with its limits).

use std::ops::Range;

use crate::yaml::{self, Limits, Node, NodeValue};

/// What one frontmatter may build: a few dozen keys by hand, so small limits.
const FRONTMATTER_LIMITS: Limits = Limits {
    max_nodes: 20_000,
    max_depth: 16,
    max_aliases: 100,
};

/// The frontmatter block of a task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// The whole block: the opening `---` line to the end of the closing line.
    pub(crate) block: Range<usize>,
    /// The YAML text between the fences.
    pub(crate) body: Range<usize>,
    /// Where the closing fence line starts (a new key is inserted here).
    pub(crate) close_line: usize,
    /// The top-level keys, in file order; `Err` when the YAML cannot be read as a mapping.
    pub(crate) entries: Result<Vec<Entry>, FrontmatterProblem>,
}

/// One top-level key of the frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The key's bytes in the file.
    pub(crate) key_span: Range<usize>,
    /// The value's bytes in the file (empty, after the `:`, for a key with no value). For
    /// a list or mapping this may stop short of a flow collection's closing bracket: spur
    /// replaces scalars only.
    pub(crate) value_span: Range<usize>,
    /// The value.
    pub(crate) value: Node,
}

/// Why a frontmatter block is not a readable mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterProblem {
    /// What is wrong.
    pub message: String,
    /// Where in the file (a byte offset).
    pub offset: usize,
}

impl Frontmatter {
    /// The frontmatter of `text`: `None` when the file does not open with a `---` line,
    /// `Err(line offset)` of the opening line when it is never closed.
    pub(crate) fn find(text: &str) -> Option<Result<Frontmatter, usize>> {
        let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let rest = text.get(start..)?;
        let first_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        if rest.get(..first_end)?.trim_end() != "---" {
            return None;
        }
        let body_start = start + first_end;
        let mut offset = body_start;
        for line in text.get(body_start..)?.split_inclusive('\n') {
            if matches!(line.trim_end(), "---" | "...") {
                let body = body_start..offset;
                let block = start..offset + line.len();
                let entries = read_entries(text, body.clone());
                return Some(Ok(Frontmatter {
                    block,
                    body,
                    close_line: offset,
                    entries,
                }));
            }
            offset += line.len();
        }
        Some(Err(start))
    }

    /// The entry for `key`, the last one when it is given twice (as YAML readers take it).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries
            .as_ref()
            .ok()?
            .iter()
            .rev()
            .find(|e| e.key == key)
    }

    /// The value of `key` as text when it is a scalar (`status: wip` → `wip`; numbers and
    /// booleans as written in YAML); `None` when absent, null, a list or a mapping.
    pub fn scalar(&self, key: &str) -> Option<String> {
        scalar_text(&self.get(key)?.value)
    }

    /// Every top-level key with its value as JSON (a key given twice: the last one).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut map = serde_json::Map::new();
        if let Ok(entries) = &self.entries {
            for entry in entries {
                map.insert(entry.key.clone(), to_json(&entry.value));
            }
        }
        map
    }

    /// Why the block is not a readable mapping, if it is not.
    pub fn problem(&self) -> Option<&FrontmatterProblem> {
        self.entries.as_ref().err()
    }
}

impl Entry {
    /// Whether the value is a scalar or null (what spur may replace).
    pub(crate) fn is_scalar(&self) -> bool {
        !matches!(self.value.value, NodeValue::Seq(_) | NodeValue::Map(_))
    }

    /// The 1-based line of the key in `text`.
    pub(crate) fn line(&self, text: &str) -> usize {
        line_of(text, self.key_span.start)
    }
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |before| before.matches('\n').count() + 1)
}

fn read_entries(text: &str, body: Range<usize>) -> Result<Vec<Entry>, FrontmatterProblem> {
    let yaml_text = text.get(body.clone()).unwrap_or("");
    let root = yaml::parse(yaml_text, FRONTMATTER_LIMITS).map_err(|e| FrontmatterProblem {
        message: e.to_string(),
        offset: body.start + e.span().offset.min(yaml_text.len()),
    })?;
    let Some(root) = root else {
        return Ok(Vec::new());
    };
    let NodeValue::Map(pairs) = root.value else {
        return Err(FrontmatterProblem {
            message: format!(
                "the frontmatter is {}, not a mapping of keys",
                root.value.type_name()
            ),
            offset: body.start + root.span.offset,
        });
    };
    let mut entries = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let Some(name) = key.key_text() else {
            return Err(FrontmatterProblem {
                message: "a frontmatter key is a list or a mapping".to_owned(),
                offset: body.start + key.span.offset,
            });
        };
        let key_span = shift(key.span.offset..key.span.end(), body.start);
        let value_span = value_span(yaml_text, &key, &value, body.start);
        entries.push(Entry {
            key: name,
            key_span,
            value_span,
            value,
        });
    }
    Ok(entries)
}

fn shift(range: Range<usize>, by: usize) -> Range<usize> {
    range.start + by..range.end + by
}

/// The bytes of `value` in the file. A key with no value (`parent_wbs:`) has an empty
/// span right after its `:`; a null written `~` or `null` keeps its text.
fn value_span(yaml_text: &str, key: &Node, value: &Node, base: usize) -> Range<usize> {
    let extent = value.extent();
    if extent.len > 0 {
        return shift(extent.offset..extent.end(), base);
    }
    let after_key = key.span.end();
    let colon = yaml_text
        .get(after_key..)
        .and_then(|rest| rest.find(':'))
        .map_or(after_key, |i| after_key + i + 1);
    base + colon..base + colon
}

fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        NodeValue::String(s) => Some(s.clone()),
        NodeValue::Number(n) => Some(n.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        NodeValue::Null | NodeValue::Seq(_) | NodeValue::Map(_) => None,
    }
}

fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match &node.value {
        NodeValue::Null => Value::Null,
        NodeValue::Bool(b) => Value::Bool(*b),
        NodeValue::Number(n) => Value::Number(n.clone()),
        NodeValue::String(s) => Value::String(s.clone()),
        NodeValue::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        NodeValue::Map(entries) => Value::Object(
            entries
                .iter()
                .filter_map(|(k, v)| Some((k.key_text()?, to_json(v))))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "---\nname: \"Say hello\"\nstatus: todo\nparent_wbs:\nnothing: null\nimpl_progress:\n  planning: done\ntags: [\"a\", 'b']\nupdated_at: 2026-06-14T17:38:05.414Z # edited\n---\n\n## 0001. Say hello\n";

    fn slice<'t>(text: &'t str, range: &Range<usize>) -> &'t str {
        &text[range.clone()]
    }

    #[test]
    fn finds_the_block_and_every_key_with_its_span() {
        let fm = Frontmatter::find(TEXT).unwrap().unwrap();
        assert_eq!(
            slice(TEXT, &fm.block),
            &TEXT[..TEXT.find("\n\n##").unwrap() + 1]
        );
        let spans: Vec<(&str, &str, &str)> = fm
            .entries
            .as_ref()
            .unwrap()
            .iter()
            .filter(|e| !matches!(e.value.value, NodeValue::Seq(_) | NodeValue::Map(_)))
            .map(|e| {
                (
                    e.key.as_str(),
                    slice(TEXT, &e.key_span),
                    slice(TEXT, &e.value_span),
                )
            })
            .collect();
        assert_eq!(
            spans,
            [
                ("name", "name", "\"Say hello\""),
                ("status", "status", "todo"),
                ("parent_wbs", "parent_wbs", ""),
                ("nothing", "nothing", "null"),
                ("updated_at", "updated_at", "2026-06-14T17:38:05.414Z"),
            ]
        );
        let parent = fm.get("parent_wbs").unwrap();
        assert_eq!(
            &TEXT[parent.value_span.start - 1..parent.value_span.start],
            ":"
        );
        assert_eq!(fm.scalar("status").as_deref(), Some("todo"));
        assert_eq!(fm.scalar("name").as_deref(), Some("Say hello"));
        assert_eq!(fm.scalar("nothing"), None);
        assert_eq!(fm.get("status").unwrap().line(TEXT), 3);
        assert_eq!(fm.to_json()["tags"], serde_json::json!(["a", "b"]));
    }

    #[test]
    fn no_frontmatter_unclosed_and_unreadable_blocks() {
        assert!(Frontmatter::find("# Title\n---\n").is_none());
        assert_eq!(Frontmatter::find("---\nname: x\n"), Some(Err(0)));
        let fm = Frontmatter::find("---\n- a\n---\n").unwrap().unwrap();
        assert!(fm.problem().unwrap().message.contains("not a mapping"));
        let fm = Frontmatter::find("---\nname: [x\n---\n").unwrap().unwrap();
        assert!(fm.problem().is_some());
        let fm = Frontmatter::find("---\n---\nbody").unwrap().unwrap();
        assert_eq!(fm.entries, Ok(Vec::new()));
        assert_eq!(fm.close_line, 4);
    }
}
