//! Storage plumbing under the domain: where state lives on disk and how it is written.
//!
//! Nothing here knows about pipelines or verdicts beyond the records it stores: the state
//! directory's layout, atomic writes, advisory locks (the per-task data lock among them),
//! bounded reads of files spur did not create, timestamps, digests, format versions, the
//! key of the chains and the seal of their lines, the audit chain of forced overrides, and
//! task status: the task ledger, its views, and whether a task is certified; and beside
//! the task ledger, what each task's steps spent (the usage ledger).

pub(crate) mod atomic_file;
pub mod audit;
pub mod bounded_read;
pub mod certification;
pub mod chain_key;
pub mod data_lock;
pub mod digest;
pub(crate) mod file_lock;
pub(crate) mod format_version;
pub mod ledger_record;
pub mod legacy_state;
pub mod seal;
pub mod state_dir;
pub mod task_ledger;
pub mod task_status;
pub mod task_view;
pub mod timestamp;
pub mod usage_ledger;
