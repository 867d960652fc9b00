//! Features as the reference keeps them: `docs/features*/<id>_<slug>.md`, YAML frontmatter
//! (`id`, `name`, `status`, `priority`, `tags`, …) and `##` sections (Goal, Scope,
//! Acceptance Criteria, Tasks, Notes, History). Ids encode the tree (`A`, `A1`, `A12`: a
//! group letter, then one digit 1–9 per level). A task belongs to a feature through its
//! frontmatter `feature_id`; a feature is done only when each of its tasks is done through
//! the done gate (`check.rs`, the `L4.task-not-done` rule).
//!
//! Flow: files (`file.rs`) → the structural check (`check.rs`, with the linked tasks of
//! `linked_tasks.rs`) → the lifecycle (`spur feature update`, a request to the
//! `feature:<id>` instance) → status alignment from the tasks (`sync.rs`).

mod check;
mod create;
mod error;
mod file;
mod id;
mod linked_tasks;
mod status;
mod sync;

pub use check::{check_feature, FeatureCheckOptions, FeatureCheckReport, FeatureFinding, Severity};
pub use create::{create_feature, CreatedFeature};
pub use error::FeatureError;
pub use file::{features_dir, list_features, locate_feature, FeatureFile};
pub use id::{is_feature_id, parent_of};
pub use linked_tasks::{linked_tasks, LinkedTask};
pub use status::{canonical_feature_status, FEATURE_STATUSES};
pub use sync::{propose, Proposal};
