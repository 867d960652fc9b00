//! The status a task file's YAML frontmatter claims (`status: done`). It is a claim, never a
//! status spur acts on (the task ledger is that): `spur task verify-certs` holds every task
//! file that claims done to a signed done certificate. Names are read as the reference spur
//! normalises them (`task::status_name`): case-insensitive, trimmed, `complete` and
//! `completed` are `done`.

use super::frontmatter::{line_of, Frontmatter};
use crate::task::status_name::canonical_status;
use crate::yaml::NodeValue;

/// What a task file's frontmatter says its status is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedStatus {
    /// The value as written (`Done`).
    pub written: String,
    /// Whether it names done (`done`, `complete`, `completed`, any case).
    pub done: bool,
}

/// The `status:` of the frontmatter of `text`; `None` when there is no frontmatter or it has
/// no `status` string. A frontmatter that is never closed or is not YAML is the error. Read
/// through the one frontmatter reader the task verbs write through.
pub fn claimed_status(text: &str) -> Result<Option<ClaimedStatus>, String> {
    let frontmatter = match Frontmatter::find(text) {
        None => return Ok(None),
        Some(Err(offset)) => {
            return Err(format!(
                "its frontmatter (line {}) is never closed",
                line_of(text, offset)
            ))
        }
        Some(Ok(frontmatter)) => frontmatter,
    };
    if let Some(problem) = frontmatter.problem() {
        if problem.message.contains("not a mapping") {
            return Ok(None);
        }
        return Err(format!("its frontmatter is not YAML: {}", problem.message));
    }
    Ok(match frontmatter.get("status").map(|e| &e.value.value) {
        Some(NodeValue::String(written)) => Some(ClaimedStatus {
            done: canonical_status(written) == Some("done"),
            written: written.clone(),
        }),
        _ => None,
    })
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
