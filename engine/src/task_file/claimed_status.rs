//! The status a task file's YAML frontmatter claims (`status: done`). It is a claim, never a
//! status spur acts on (the task ledger is that): `spur task verify-certs` holds every task
//! file that claims done to a signed done certificate. Names are read as the reference spur
//! normalises them: case-insensitive, trimmed, `complete` and `completed` are `done`.

use crate::yaml::{parse_config, NodeValue};

/// What a task file's frontmatter says its status is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedStatus {
    /// The value as written (`Done`).
    pub written: String,
    /// Whether it names done (`done`, `complete`, `completed`, any case).
    pub done: bool,
}

/// Names that mean done: the reference spur's aliases of `done`.
const DONE_NAMES: &[&str] = &["done", "complete", "completed"];

/// The `status:` of the frontmatter of `text`; `None` when there is no frontmatter or it has
/// no `status` string. A frontmatter that is never closed or is not YAML is the error.
pub fn claimed_status(text: &str) -> Result<Option<ClaimedStatus>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Ok(None);
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut end = start;
    let mut closed = false;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        end += line.len();
    }
    if !closed {
        return Err("its frontmatter (line 1) is never closed".to_owned());
    }
    let yaml = text.get(start..end).unwrap_or("");
    let root = parse_config(yaml).map_err(|e| format!("its frontmatter is not YAML: {e}"))?;
    let Some(NodeValue::Map(entries)) = root.map(|n| n.value) else {
        return Ok(None);
    };
    let status = entries.iter().find_map(|(key, value)| {
        (key.value == NodeValue::String("status".to_owned())).then_some(&value.value)
    });
    Ok(match status {
        Some(NodeValue::String(written)) => Some(ClaimedStatus {
            done: names_done(written),
            written: written.clone(),
        }),
        _ => None,
    })
}

/// Whether a status name means done.
fn names_done(status: &str) -> bool {
    let status = status.trim();
    DONE_NAMES
        .iter()
        .any(|name| status.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(text: &str) -> Option<(String, bool)> {
        claimed_status(text).unwrap().map(|c| (c.written, c.done))
    }

    #[test]
    fn done_and_its_aliases_in_any_case_claim_done() {
        for status in [
            "done",
            "Done",
            "DONE",
            " done ",
            "completed",
            "Complete",
            "\"done\"",
        ] {
            let text = format!("---\nname: x\nstatus: {status}\n---\n# T\n");
            assert_eq!(claim(&text).map(|c| c.1), Some(true), "{status}");
        }
        for status in ["todo", "wip", "testing", "cancelled", "not done"] {
            let text = format!("---\nstatus: {status}\n---\n");
            assert_eq!(claim(&text).map(|c| c.1), Some(false), "{status}");
        }
    }

    #[test]
    fn no_frontmatter_or_no_status_claims_nothing() {
        assert_eq!(claim("# T\nstatus: done\n"), None);
        assert_eq!(claim("---\nname: x\n---\n"), None);
        assert_eq!(claim("---\n---\n"), None);
        assert_eq!(claim("---\nstatus: [done]\n---\n"), None);
        assert_eq!(
            claim("\u{feff}---\nstatus: Done\n...\n"),
            Some(("Done".to_owned(), true))
        );
    }

    #[test]
    fn an_unclosed_or_broken_frontmatter_is_an_error() {
        assert!(claimed_status("---\nstatus: done\n").is_err());
        assert!(claimed_status("---\nstatus: [done\n---\n").is_err());
    }
}
