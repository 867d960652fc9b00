//! The project's working tree as evidence is bound to it: [`fingerprint`] is what
//! `spur verify` records in a `verified` record and what the done gate compares, and what
//! `agent.run requireDiff` and `proof.fingerprint` compare too.

mod config;
mod fingerprint;
mod task_sections;

pub(crate) use config::config_excludes;
pub use config::{policy_excludes, ExcludesError};
pub use fingerprint::{fingerprint, Excludes, Fingerprint, TreeError};
pub(crate) use task_sections::is_task_or_feature_file;
pub(crate) use task_sections::kept_text;
