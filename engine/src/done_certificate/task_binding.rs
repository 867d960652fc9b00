//! A task file bound into a certificate: the sha256 of its kept text — requirements,
//! criteria and every section but the frontmatter and those spur writes after verify
//! ([`crate::tree::kept_text`], the text the tree fingerprint covers). Editing what the task
//! asks for breaks the binding; recording how it was done, or setting `status: done`, does
//! not.

use std::path::Path;

use crate::store::bounded_read::read_bounded;
use crate::store::digest::sha256_hex;
use crate::task_file::TASK_FILE_LIMIT;

/// The text of a task file (UTF-8, at most the task-file limit); the error says why not.
pub(crate) fn read_task_text(path: &Path) -> Result<String, String> {
    let bytes = read_bounded(path, TASK_FILE_LIMIT).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The sha256 of what of a task file's text counts.
pub(crate) fn task_sha256(text: &str) -> String {
    sha256_hex(crate::tree::kept_text(text).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_solution_edits_keep_the_hash_and_requirement_edits_change_it() {
        let task = "---\nstatus: wip\n---\n# T\n## Requirements\n- R1 hello\n## Solution\nx\n";
        let base = task_sha256(task);
        assert_eq!(task_sha256(&task.replace("wip", "done")), base);
        assert_eq!(task_sha256(&task.replace("\nx\n", "\ny\n")), base);
        assert_ne!(task_sha256(&task.replace("hello", "goodbye")), base);
    }
}
