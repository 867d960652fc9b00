//! Which pipeline is a task's lifecycle: the project's `.spur/workflows/task-lifecycle.yaml`
//! when it has one (where the reference keeps the file it loads), else the copy spur ships
//! (`pipelines/task-lifecycle.yaml`, built into the binary). Either way a checked pipeline,
//! so a status change never runs a graph `spur check` would refuse.

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::pipeline::{self, CheckedPipeline, LoadFailure};
use crate::source::SourceFile;
use crate::store::state_dir::StateDir;

/// The task lifecycle spur ships: the reference's graph, its guards `spur task check --as`.
pub const SHIPPED_TASK_LIFECYCLE: &str = include_str!("../../../pipelines/task-lifecycle.yaml");

/// The name the shipped copy goes by where a path would be (journals, messages).
pub const SHIPPED_TASK_LIFECYCLE_PATH: &str = "spur:pipelines/task-lifecycle.yaml";

/// A task lifecycle, checked, and where it came from.
pub struct TaskLifecycle {
    /// The pipeline.
    pub pipeline: CheckedPipeline,
    /// Its file, or [`SHIPPED_TASK_LIFECYCLE_PATH`].
    pub path: PathBuf,
}

/// The project's task lifecycle cannot be used: nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum LifecyclePipelineError {
    /// The file cannot be read or parsed.
    #[error(transparent)]
    Load(#[from] LoadFailure),
    /// It loads but `spur check` finds errors in it.
    #[error("{path} is the project's task lifecycle, and it has {} error(s): {}", errors.len(), errors.first().map(ToString::to_string).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Its errors.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    LifecyclePipelineError {
        Self::Load(failure) => Code::TaskLifecyclePipeline,
            help("{} is the project's task lifecycle: fix it, or move it away to use the lifecycle spur ships", failure.path().display());
        Self::Invalid { path, .. } => Code::TaskLifecyclePipeline,
            help("`spur check {}` shows every finding; fix it, or move it away to use the lifecycle spur ships", path.display());
    }
}

/// `.spur/workflows/task-lifecycle.yaml` of the project whose state directory is `state_dir`.
pub fn project_task_lifecycle(state_dir: &StateDir) -> PathBuf {
    state_dir
        .root()
        .join("workflows")
        .join("task-lifecycle.yaml")
}

/// The task lifecycle of the project: its own file, or the shipped copy.
pub fn task_lifecycle(state_dir: &StateDir) -> Result<TaskLifecycle, LifecyclePipelineError> {
    let own = project_task_lifecycle(state_dir);
    let (source, path) = if std::fs::symlink_metadata(&own).is_ok() {
        (pipeline::read_source(&own)?, own)
    } else {
        (
            SourceFile::new(SHIPPED_TASK_LIFECYCLE_PATH, SHIPPED_TASK_LIFECYCLE),
            PathBuf::from(SHIPPED_TASK_LIFECYCLE_PATH),
        )
    };
    let loaded = pipeline::load(&source)?;
    match CheckedPipeline::new(loaded) {
        Ok((pipeline, _warnings)) => Ok(TaskLifecycle { pipeline, path }),
        Err(diagnostics) => Err(LifecyclePipelineError::Invalid {
            path,
            errors: diagnostics
                .into_iter()
                .filter(Diagnostic::is_error)
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lifecycle_checks_and_is_the_reference_graph() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = StateDir::at(dir.path().join(".spur"));
        let lifecycle = task_lifecycle(&state_dir).unwrap();
        let p = lifecycle.pipeline.pipeline();
        assert_eq!(p.name.value, "task-lifecycle");
        let edges: Vec<(&str, &str)> = p
            .transitions
            .iter()
            .map(|t| (t.from.value.as_str(), t.to.value.as_str()))
            .collect();
        assert!(edges.contains(&("testing", "done")));
        assert!(!edges.contains(&("wip", "done")));
        assert_eq!(lifecycle.path, PathBuf::from(SHIPPED_TASK_LIFECYCLE_PATH));
    }
}
