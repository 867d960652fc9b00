//! Verify gates: configured in `.spur/config.yaml` `verify.gates`, run in the
//! topological order of their `needs` (read-only gates side by side), each FAIL re-probed
//! once, one evidence file per gate, every verdict appended to the ledger, and the results
//! merged into the task's verdict artifact as `checks[]` rows.
//!
//! Flow: [`config::VerifyConfig`] (parsed, checked, ordered) → [`scheduler`] runs each
//! gate through an [`attempt::GateExecutor`] → [`reprobe::settle`] → evidence, ledger,
//! report → verdict checks.

pub mod attempt;
pub mod config;
pub mod config_error;
pub mod evidence;
pub mod evidence_dir;
pub mod finding;
pub mod gate;
pub mod gate_result;
pub mod ledger;
pub mod outcome;
pub mod plan;
pub mod process_executor;
pub mod report;
pub mod reprobe;
pub mod run;
pub mod scheduler;
pub mod scope;
pub mod standard_gates;
pub mod status;
pub mod verdict_checks;

pub use config::{DoneGateConfig, ExternalVerdicts, VerifyConfig};
pub use config_error::VerifyConfigErrors;
pub use gate_result::GateResult;
pub use outcome::VerifyOutcome;
pub use run::{run_gates, VerifyError, VerifyRequest};
pub use scope::VerifyScope;
pub use status::{Confidence, GateStatus};
