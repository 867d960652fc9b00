//! Running pipelines (DESIGN §2, §5): the runner drives a checked pipeline from its initial
//! state to a terminal state or a pause, journaling every step durably so a crashed or
//! paused run resumes exactly where it stopped.
//!
//! Flow: [`start`] / [`resume`] → `runner` (onEnter → terminal? → pause? → guards in
//! declaration order → done gate → onExit → one durable commit) → [`RunOutcome`].

pub mod actions;
pub mod agent_config;
pub mod done_gate_port;
pub mod dry_run;
pub mod guard_eval;
pub mod interrupt;
pub mod journal;
pub mod jq_guard;
pub mod lock;
pub mod observer;
pub mod outcome;
pub mod preflight;
pub mod render;
pub mod replay;
pub mod run_error;
pub mod run_id;
pub mod runner;
pub mod runs_list;
pub mod vars;

pub use done_gate_port::{DoneGate, GateAnswer, GateRequest, TaskDoneGate};
pub use journal::Durability;
pub use observer::{RunObserver, SilentObserver};
pub use outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
pub use run_error::RunError;
pub use run_id::RunId;
pub use runner::{resume, start, ResumeRequest, RunSettings, StartRequest};
