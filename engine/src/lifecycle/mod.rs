//! Lifecycles driven from outside: a long-lived instance of a lifecycle pipeline per
//! entity (`task:<wbs>`, `feature:<id>`), moved by requests that name the target state —
//! the reference engine's durable named runs and external transition API
//! (`createOrAttachRun`, `reseedRun`, `requestTransition`), as its task and feature
//! lifecycle adapters use them.
//!
//! Flow: [`request_transition`] → the instance (a run journal under
//! `<protected>/lifecycles/<pipeline>/<kind>/<id>/`, checked like a resumed run's) → re-seeded to
//! the entity's status → the guards of the edges to the target, journaled → the done gate
//! for a task's `done` → one transition, or a journaled refusal → [`TransitionAnswer`].
//! A task's status changes go into its ledger, so `spur task update` can be this request.

mod answer;
mod entity;
mod error;
mod instance;
mod project_lifecycle;
mod request;
mod show;

pub use answer::{Denial, RequestOutcome, TransitionAnswer};
pub use entity::{EntityKey, EntityKind, InvalidEntity};
pub use error::LifecycleError;
pub use project_lifecycle::{
    project_lifecycle, project_lifecycle_path, LifecyclePipelineError, ProjectLifecycle,
    SHIPPED_FEATURE_LIFECYCLE, SHIPPED_TASK_LIFECYCLE,
};
pub use request::{request_transition, StructuralCheck, TransitionRequest};
pub use show::{show, InstanceView};
