//! Which pipeline is an entity's lifecycle: the project's
//! `.spur/workflows/<kind>-lifecycle.yaml` when it has one (where the reference keeps the
//! files it loads), else the copy spur ships (`pipelines/task-lifecycle.yaml`,
//! `pipelines/feature-lifecycle.yaml`, built into the binary). Either way a checked
//! pipeline, so a status change never runs a graph `spur check` would refuse.

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::pipeline::{self, CheckedPipeline, LoadFailure};
use crate::source::SourceFile;
use crate::store::state_dir::StateDir;

use super::entity::EntityKind;

/// The task lifecycle spur ships: the reference's graph, its guards `spur task check --as`.
pub const SHIPPED_TASK_LIFECYCLE: &str = include_str!("../../../pipelines/task-lifecycle.yaml");

/// The feature lifecycle spur ships: the reference's graph and guards.
pub const SHIPPED_FEATURE_LIFECYCLE: &str =
    include_str!("../../../pipelines/feature-lifecycle.yaml");

/// A lifecycle, checked, and where it came from.
pub struct ProjectLifecycle {
    /// The pipeline.
    pub pipeline: CheckedPipeline,
    /// Its file, or `spur:pipelines/<kind>-lifecycle.yaml` for the shipped copy.
    pub path: PathBuf,
}

/// The project's lifecycle cannot be used: nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum LifecyclePipelineError {
    /// The file cannot be read or parsed.
    #[error(transparent)]
    Load(#[from] LoadFailure),
    /// It loads but `spur check` finds errors in it.
    #[error("{path} is the project's lifecycle, and it has {} error(s): {}", errors.len(), errors.first().map(ToString::to_string).unwrap_or_default())]
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
            help("{} is the project's lifecycle: fix it, or move it away to use the lifecycle spur ships", failure.path().display());
        Self::Invalid { path, .. } => Code::TaskLifecyclePipeline,
            help("`spur check {}` shows every finding; fix it, or move it away to use the lifecycle spur ships", path.display());
    }
}

/// `.spur/workflows/<kind>-lifecycle.yaml` of the project whose state directory is
/// `state_dir`.
pub fn project_lifecycle_path(state_dir: &StateDir, kind: EntityKind) -> PathBuf {
    state_dir
        .root()
        .join("workflows")
        .join(format!("{}-lifecycle.yaml", kind.as_str()))
}

/// The lifecycle of `kind` in the project: its own file, or the shipped copy.
pub fn project_lifecycle(
    state_dir: &StateDir,
    kind: EntityKind,
) -> Result<ProjectLifecycle, LifecyclePipelineError> {
    let own = project_lifecycle_path(state_dir, kind);
    let (source, path) = if std::fs::symlink_metadata(&own).is_ok() {
        (pipeline::read_source(&own)?, own)
    } else {
        let shipped = format!("spur:pipelines/{}-lifecycle.yaml", kind.as_str());
        let text = match kind {
            EntityKind::Task => SHIPPED_TASK_LIFECYCLE,
            EntityKind::Feature => SHIPPED_FEATURE_LIFECYCLE,
        };
        (
            SourceFile::new(shipped.clone(), text),
            PathBuf::from(shipped),
        )
    };
    let loaded = pipeline::load(&source)?;
    match CheckedPipeline::new(loaded) {
        Ok((pipeline, _warnings)) => Ok(ProjectLifecycle { pipeline, path }),
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
    fn the_shipped_lifecycles_check_and_are_the_reference_graphs() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = StateDir::at(dir.path().join(".spur"));
        let task = project_lifecycle(&state_dir, EntityKind::Task).unwrap();
        let edges = |l: &ProjectLifecycle| -> Vec<(String, String)> {
            l.pipeline
                .pipeline()
                .transitions
                .iter()
                .map(|t| (t.from.value.clone(), t.to.value.clone()))
                .collect()
        };
        let e = edges(&task);
        assert!(e.contains(&("testing".into(), "done".into())));
        assert!(!e.contains(&("wip".into(), "done".into())));
        assert_eq!(
            task.path,
            PathBuf::from("spur:pipelines/task-lifecycle.yaml")
        );
        let feature = project_lifecycle(&state_dir, EntityKind::Feature).unwrap();
        assert_eq!(feature.pipeline.pipeline().name.value, "feature-lifecycle");
        assert!(edges(&feature).contains(&("verifying".into(), "done".into())));
    }
}
