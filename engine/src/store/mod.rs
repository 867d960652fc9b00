//! Storage plumbing under the domain: where state lives on disk and how it is written.
//!
//! Nothing here knows about pipelines or verdicts beyond the records it stores: the state
//! directory's layout, atomic writes, advisory locks, bounded reads of files spur did not
//! create, timestamps, digests, the audit chain of forced overrides and task status.

pub mod atomic_file;
pub mod audit;
pub mod bounded_read;
pub mod digest;
pub mod file_lock;
pub(crate) mod format_version;
pub mod state_dir;
pub mod task_status;
pub mod timestamp;
