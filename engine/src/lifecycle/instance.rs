//! A lifecycle instance on disk: `<state>/lifecycles/<pipeline>/<kind>/<id>/journal.jsonl`,
//! a run journal (same format, same chain, same torn-tail rule) that starts with
//! `run-started`, `lifecycle-bound` and the initial `state-entered`. Opening one checks
//! every record against the instance before it and against the pipeline, as a resumed run
//! is checked (`run/replay_check.rs`), before a request may add to it.

use std::path::{Path, PathBuf};

use crate::pipeline::Pipeline;
use crate::run::journal::{self, Event, Journal, JournalContent, JournalFormat, Record};
use crate::run::plan::Plan;
use crate::run::replay::Position;
use crate::run::replay_check::{replay_checked, Against};
use crate::run::vars::Vars;
use crate::run::{Durability, RunError};
use crate::store::chain_key::{key_for_reading, key_for_writing};
use crate::store::digest::sha256_hex;
use crate::store::state_dir::StateDir;
use crate::store::timestamp::Timestamp;
use crate::wbs::Wbs;

use super::entity::EntityKey;
use super::error::LifecycleError;

/// An open instance: its journal and where it stands.
pub(crate) struct Instance {
    pub(crate) journal: Journal,
    pub(crate) position: Position,
    pub(crate) path: PathBuf,
}

/// `<state>/lifecycles/<pipeline>/<kind>/<id>/journal.jsonl`.
pub(crate) fn journal_path(state_dir: &StateDir, pipeline: &Wbs, entity: &EntityKey) -> PathBuf {
    entity.dir_in(state_dir, pipeline).join("journal.jsonl")
}

/// The id an instance goes by where a run id would be (the ledger, `SPUR_RUN_ID`).
pub(crate) fn instance_id(pipeline: &Wbs, entity: &EntityKey) -> String {
    format!("lifecycle:{pipeline}/{entity}")
}

/// Read and check the journal at `path` of `entity`'s instance: `Ok(None)` when there is
/// none yet.
pub(crate) fn read_checked(
    state_dir: &StateDir,
    path: &Path,
    pipeline: &Pipeline,
    plan: &Plan,
    entity: &EntityKey,
) -> Result<Option<(JournalContent, Position)>, LifecycleError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let content = journal::read(path, &key_for_reading(state_dir))?;
    match content.format {
        JournalFormat::Unversioned => return Err(LifecycleError::OlderJournal(path.to_path_buf())),
        JournalFormat::Unkeyed => {
            return Err(RunError::UnkeyedJournal {
                run_id: path.display().to_string(),
            }
            .into())
        }
        JournalFormat::Current => {}
    }
    let content = content.verified(path)?;
    let wrong = |found: Option<String>| LifecycleError::WrongInstance {
        path: path.to_path_buf(),
        expected: entity.to_string(),
        found,
    };
    // The pipeline a long-lived instance started with may have been edited since: its
    // records are then checked against one another only (as `--allow-changed-pipeline`).
    let first_sha = match content.records.first().map(|r| &r.event) {
        Some(Event::RunStarted {
            pipeline_sha256, ..
        }) => pipeline_sha256.clone(),
        _ => return Err(wrong(None)),
    };
    let against = if first_sha == sha256_hex(pipeline.source.text().as_bytes()) {
        Against::Pipeline(pipeline, plan)
    } else {
        Against::Themselves
    };
    let id = path.display().to_string();
    let position = replay_checked(&content.records, against, &id)?.ok_or_else(|| wrong(None))?;
    if position.lifecycle.as_deref() != Some(entity.to_string().as_str()) {
        return Err(wrong(position.lifecycle.clone()));
    }
    Ok(Some((content, position)))
}

/// Open `entity`'s instance, creating it at the pipeline's initial state when it has none.
/// `vars` are recorded when it is created.
#[allow(clippy::too_many_arguments)]
pub(crate) fn open(
    state_dir: &StateDir,
    durability: Durability,
    pipeline_path: &Path,
    pipeline: &Pipeline,
    plan: &Plan,
    name: &Wbs,
    entity: &EntityKey,
    vars: &Vars,
) -> Result<Instance, LifecycleError> {
    let path = journal_path(state_dir, name, entity);
    let io = |source| LifecycleError::Io {
        path: path.clone(),
        source,
    };
    let key = key_for_writing(state_dir).map_err(RunError::Key)?;
    if let Some((content, position)) = read_checked(state_dir, &path, pipeline, plan, entity)? {
        let journal = Journal::reopen(&path, &content, durability, key).map_err(io)?;
        return Ok(Instance {
            journal,
            position,
            path,
        });
    }
    let mut journal = Journal::create(&path, durability, key).map_err(io)?;
    let initial = pipeline.initial_state.value.clone();
    let first = [
        Event::RunStarted {
            pipeline: pipeline_path.display().to_string(),
            pipeline_name: pipeline.name.value.clone(),
            pipeline_sha256: sha256_hex(pipeline.source.text().as_bytes()),
            vars: vars.clone(),
            wbs: entity.task().map(ToString::to_string),
            force_done_reason: None,
            // A lifecycle instance lives on across requests; each request asks the gate
            // under the policy of the call that makes it.
            policy_sha256: None,
            worktree: None,
        },
        Event::LifecycleBound {
            entity: entity.to_string(),
        },
        Event::StateEntered {
            state: initial,
            iteration: 0,
        },
    ];
    let mut records: Vec<Record> = Vec::with_capacity(first.len());
    for event in first {
        records.push(journal.append(event, Timestamp::now()).map_err(io)?);
    }
    let position =
        crate::run::replay::replay(&records).ok_or_else(|| LifecycleError::WrongInstance {
            path: path.clone(),
            expected: entity.to_string(),
            found: None,
        })?;
    Ok(Instance {
        journal,
        position,
        path,
    })
}
