//! `spur task batch-create --file F`: a JSON array of new tasks (the reference's
//! `task-batch.schema.json`: `name` and optionally `background`, `requirements`,
//! `feature_id`, `parent_wbs`, `priority`, `tags`, `template`; any other key is an error),
//! checked whole before any file is written, then created all or nothing.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::read_bounded;

use super::create::NewTask;

/// The largest batch file spur reads.
pub const BATCH_FILE_LIMIT: u64 = 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchItem {
    name: String,
    #[serde(default)]
    background: Option<String>,
    #[serde(default)]
    requirements: Option<String>,
    #[serde(default)]
    feature_id: Option<String>,
    #[serde(default)]
    parent_wbs: Option<String>,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    template: Option<String>,
}

/// Why a batch file cannot be used (no task was created).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// It cannot be read.
    #[error("cannot read the batch file {}: {reason}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// It is not a batch.
    #[error("the batch file {} is not a task batch: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

coded_diagnostic! {
    BatchError {
        Self::Unreadable { .. } => Code::TaskBatchInvalid,
            help("the batch file is a JSON array in a regular file of at most 1 MiB");
        Self::Invalid { .. } => Code::TaskBatchInvalid,
            help("a batch is a non-empty JSON array of objects with `name` and optionally background, requirements, feature_id, parent_wbs, priority, tags, template");
    }
}

/// Read the batch file at `path` into the tasks to create.
pub fn read_batch(path: &Path) -> Result<Vec<NewTask>, BatchError> {
    let bytes = read_bounded(path, BATCH_FILE_LIMIT).map_err(|e| BatchError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let invalid = |reason: String| BatchError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let items: Vec<BatchItem> =
        serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    if items.is_empty() {
        return Err(invalid("the batch must hold at least one task".to_owned()));
    }
    Ok(items
        .into_iter()
        .map(|item| NewTask {
            name: item.name,
            feature_id: item.feature_id,
            parent_wbs: item.parent_wbs,
            template: item.template,
            priority: item.priority,
            tags: item.tags.unwrap_or_default(),
            background: item.background,
            requirements: item.requirements,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_batch_and_refuses_unknown_keys_and_empty_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batch.json");
        std::fs::write(
            &path,
            r#"[{"name":"A","feature_id":"F1","tags":["x"]},{"name":"B","parent_wbs":null}]"#,
        )
        .unwrap();
        let tasks = read_batch(&path).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].feature_id.as_deref(), Some("F1"));
        assert_eq!(tasks[1].parent_wbs, None);
        std::fs::write(&path, r#"[{"name":"A","colour":"red"}]"#).unwrap();
        let err = read_batch(&path).unwrap_err().to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");
        std::fs::write(&path, "[]").unwrap();
        assert!(read_batch(&path)
            .unwrap_err()
            .to_string()
            .contains("at least one"));
        assert!(matches!(
            read_batch(&dir.path().join("none.json")),
            Err(BatchError::Unreadable { .. })
        ));
    }
}
