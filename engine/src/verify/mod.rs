//! Verify gates: configured in `.spur/config.yaml` `verify.gates`, run in the
//! topological order of their `needs` (read-only gates side by side), each FAIL re-probed
//! once, one evidence file per gate, every verdict appended to the ledger, and the results
//! merged into the task's verdict artifact as `checks[]` rows.
//!
//! Flow: `config::VerifyConfig` (parsed, checked, ordered) → `scheduler` runs each
//! gate through an `attempt::GateExecutor` → `reprobe::settle` → evidence, ledger,
//! report → verdict checks.

pub(crate) mod attempt;
pub(crate) mod config;
pub(crate) mod config_error;
pub(crate) mod evidence;
pub(crate) mod evidence_dir;
pub(crate) mod finding;
pub(crate) mod gate;
pub(crate) mod gate_result;
pub mod ledger;
pub(crate) mod outcome;
pub(crate) mod plan;
pub(crate) mod process_executor;
pub(crate) mod report;
pub(crate) mod reprobe;
pub(crate) mod run;
pub(crate) mod scheduler;
pub(crate) mod scope;
pub(crate) mod standard_gates;
pub(crate) mod status;
pub(crate) mod verdict_checks;

pub use run::run_gates;
pub use run::VerifyError;

pub use run::VerifyRequest;
pub use scope::VerifyScope;
pub use status::GateStatus;
