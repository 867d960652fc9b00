//! Tasks as the reference keeps them: a task file per task (`docs/tasks*/<wbs>_<slug>.md`,
//! see `task_file`) whose frontmatter `status:` is a view of the task ledger, the
//! lifecycle its statuses move through, and what the `spur task …` verbs do with them.

pub mod batch;
pub mod check;
pub mod create;
pub mod file_status;
pub mod lifecycle_done_gate;
pub mod lifecycle_gate;
pub mod record;
pub mod status_name;
