//! The entity a lifecycle instance belongs to: `task:<wbs>` or `feature:<id>`, each binding
//! one var of the pipeline (`wbs`, `featureId`) so its guards (`spur task check ${vars.wbs}`)
//! look at this entity, as the reference's lifecycle adapter binds them.

use std::fmt;
use std::path::PathBuf;

use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// What kind of entity a lifecycle follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityKind {
    /// A task (`task:<wbs>`): its status is the task ledger's, its `done` the done gate's.
    Task,
    /// A feature (`feature:<id>`): spur keeps no status of its own for it.
    Feature,
}

impl EntityKind {
    const ALL: [EntityKind; 2] = [EntityKind::Task, EntityKind::Feature];

    /// The prefix of its keys (`task`, `feature`).
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Task => "task",
            EntityKind::Feature => "feature",
        }
    }

    /// The pipeline var its id is bound to.
    pub fn var(self) -> &'static str {
        match self {
            EntityKind::Task => "wbs",
            EntityKind::Feature => "featureId",
        }
    }
}

/// An entity key, `<kind>:<id>`, whose id is safe as a path segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityKey {
    kind: EntityKind,
    /// Validated with the task-id rule: `^[A-Za-z0-9][A-Za-z0-9._-]*$`.
    id: Wbs,
}

/// Why a string is not an entity key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an entity: write task:<wbs> or feature:<id>")]
pub struct InvalidEntity(pub(crate) String);

impl EntityKey {
    /// `task:0592`, `feature:F-12`, or why not.
    pub fn parse(text: &str) -> Result<Self, InvalidEntity> {
        let invalid = || InvalidEntity(text.to_owned());
        let (kind, id) = text.split_once(':').ok_or_else(invalid)?;
        let kind = EntityKind::ALL
            .into_iter()
            .find(|k| k.as_str() == kind)
            .ok_or_else(invalid)?;
        let id = Wbs::parse(id).map_err(|_| invalid())?;
        Ok(Self { kind, id })
    }

    /// `task:<wbs>`: the task's key.
    pub fn of_task(wbs: &Wbs) -> Self {
        Self {
            kind: EntityKind::Task,
            id: wbs.clone(),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> EntityKind {
        self.kind
    }

    /// Its id (`0592`).
    pub fn id(&self) -> &str {
        self.id.as_str()
    }

    /// The task, for a task entity.
    pub fn task(&self) -> Option<&Wbs> {
        (self.kind == EntityKind::Task).then_some(&self.id)
    }

    /// `<protected>/lifecycles/<pipeline>/<kind>/<id>/`: the instance's directory.
    pub(crate) fn dir_in(&self, state_dir: &StateDir, pipeline: &Wbs) -> PathBuf {
        state_dir
            .lifecycles_dir()
            .join(pipeline.as_str())
            .join(self.kind.as_str())
            .join(self.id.as_str())
    }

    /// `<state>/locks/lifecycles/<pipeline>/<kind>/<id>.lock`: one request at a time.
    pub(crate) fn lock_in(&self, state_dir: &StateDir, pipeline: &Wbs) -> PathBuf {
        state_dir
            .root()
            .join("locks")
            .join("lifecycles")
            .join(pipeline.as_str())
            .join(self.kind.as_str())
            .join(format!("{}.lock", self.id))
    }
}

impl fmt::Display for EntityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_task_and_feature_keys_and_refuses_paths() {
        let task = EntityKey::parse("task:0592").unwrap();
        assert_eq!((task.kind(), task.id()), (EntityKind::Task, "0592"));
        assert_eq!(task.to_string(), "task:0592");
        assert_eq!(task.task().map(Wbs::as_str), Some("0592"));
        let feature = EntityKey::parse("feature:F-1").unwrap();
        assert_eq!(feature.task(), None);
        assert_eq!(feature.kind().var(), "featureId");
        for bad in [
            "0592",
            "task:",
            "task:../x",
            "task:a/b",
            "epic:1",
            ":1",
            "task:.x",
        ] {
            assert!(EntityKey::parse(bad).is_err(), "{bad}");
        }
    }
}
