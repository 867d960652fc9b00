//! spur-engine: the pipeline model and everything that reads it.
//!
//! Data flows one way (DESIGN §1): YAML text → [`pipeline::load`] → [`pipeline::check`] →
//! graph → run → done gate. The engine returns values and `miette` diagnostics; it never
//! prints. The `spur` binary renders.

pub mod answer;
pub mod atomic_file;
pub mod audit;
pub mod diagnostic;
pub mod done_gate;
pub mod file_lock;
pub mod graph;
pub mod ledger;
pub mod pipeline;
pub mod run;
pub mod source;
pub mod state_dir;
pub mod task_status;
pub mod template;
pub mod timestamp;
pub mod verdict;
pub mod verify;
pub mod wbs;
