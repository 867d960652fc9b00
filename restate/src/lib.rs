//! spur's runs on Restate, a durable-execution engine: a fleet of workers shares the runs,
//! and a run goes on after a worker or the server dies.
//!
//! - [`protocol`]: what a client sends a run with and what the run answers.
//! - [`workflow`]: the `SpurRun` workflow, keyed by run id. It runs spur's synchronous
//!   runner on a blocking thread and journals each of its host calls as a Restate step
//!   ([`bridge`]); a pause waits on a durable promise.
//! - [`worker`]: the HTTP endpoint a worker serves and the server calls.
//! - [`runs`]: the `Runs` object, the ids of the runs sent to the engine.
//! - [`task`]: the `Task` object, keyed by wbs: the run lock of the task on the fleet, and
//!   the task's ledger and verdict artifact the done gate decides from.
//! - [`audit`]: the `Audit` object, the audit hash chain on the fleet.
//! - [`fleet_runs`]: the runs the engine knows, summed up and read as the CLI and the UI
//!   show them.
//! - [`client`]: the ingress and admin calls of `spur run`, `spur continue` and
//!   `spur engine register` (blocking, no async runtime).

// The object macro writes undocumented methods of its own.
#[allow(missing_docs)]
pub mod audit;
mod bridge;
pub mod client;
pub mod fleet_runs;
pub mod protocol;
// The object macro writes undocumented methods of its own.
#[allow(missing_docs)]
pub mod runs;
// The object macro writes undocumented methods of its own.
#[allow(missing_docs)]
pub mod task;
pub mod worker;
// The workflow macro writes undocumented methods of its own.
#[allow(missing_docs)]
pub mod workflow;

pub use protocol::{AmbiguousAction, RunReply, RunRequest};
pub use worker::{serve, Worker};
