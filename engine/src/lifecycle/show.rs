//! Where an instance stands, and its history, for `spur lifecycle show`.

use std::path::PathBuf;

use crate::pipeline::CheckedPipeline;
use crate::run::journal::Record;
use crate::run::plan::Plan;
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

use super::entity::EntityKey;
use super::error::LifecycleError;
use super::instance::{journal_path, read_checked};

/// An instance as its journal says, checked record by record.
#[derive(Debug, Clone)]
pub struct InstanceView {
    /// The entity.
    pub entity: String,
    /// The pipeline's name.
    pub pipeline: String,
    /// The state it is in; `None` when it has no instance yet (it would start in the
    /// pipeline's initial state).
    pub state: Option<String>,
    /// Its journal.
    pub journal: PathBuf,
    /// Every record, in order.
    pub records: Vec<Record>,
}

/// `entity`'s instance of `pipeline`, read and checked (nothing is written).
pub fn show(
    state_dir: &StateDir,
    pipeline: &CheckedPipeline,
    entity: &EntityKey,
) -> Result<InstanceView, LifecycleError> {
    let pipeline = pipeline.pipeline();
    let name = Wbs::parse(&pipeline.name.value)
        .map_err(|_| LifecycleError::PipelineName(pipeline.name.value.clone()))?;
    let plan = Plan::new(pipeline)?;
    let path = journal_path(state_dir, &name, entity);
    let found = read_checked(&path, pipeline, &plan, entity)?;
    let (records, state) = match found {
        Some((content, position)) => (content.records, position.state),
        None => (Vec::new(), None),
    };
    Ok(InstanceView {
        entity: entity.to_string(),
        pipeline: pipeline.name.value.clone(),
        state,
        journal: path,
        records,
    })
}
