//! Running pipelines: the runner drives a checked pipeline from its initial
//! state to a terminal state or a pause, journaling every step durably so a crashed or
//! paused run resumes exactly where it stopped.
//!
//! Flow: [`start`] / [`resume`] → `runner` (onEnter → terminal? → pause? → guards in
//! declaration order → done gate → onExit → one durable commit) → [`RunOutcome`]. The
//! runner journals, runs effects and asks the gate through a [`RunHost`]; [`LocalHost`]
//! is this machine's.

pub mod actions;
pub mod agent_config;
mod certify;
mod child_env;
mod cursor;
pub mod done_gate_port;
pub mod dry_run;
pub mod effect;
pub mod event;
mod finish;
pub mod guard_eval;
pub mod host;
pub mod interrupt;
pub mod journal;
pub mod jq_guard;
pub mod local_host;
pub mod lock;
#[cfg(test)]
mod memory_host;
pub mod observer;
pub mod outcome;
mod pause;
mod plan;
pub mod preflight;
pub mod render;
pub mod replay;
mod replay_check;
mod resumable;
pub mod run_error;
pub mod run_id;
pub mod runner;
pub mod runs_list;
mod select;
mod sequence;
pub mod vars;

pub use done_gate_port::{DoneGate, GateAnswer, GateRequest, TaskDoneGate};
pub use effect::{ActionStep, GuardStep};
pub use host::{ActionBody, GuardBody, Pause, Resume, RunHost};
pub use journal::Durability;
pub use local_host::LocalHost;
pub use observer::{RunObserver, SilentObserver};
pub use outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
pub use replay_check::RecordDoesNotFit;
pub use resumable::recorded_pipeline;
pub use run_error::RunError;
pub use run_id::RunId;
pub use runner::{resume, resume_on, start, start_on, ResumeRequest, RunSettings, StartRequest};
