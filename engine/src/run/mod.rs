//! Running pipelines: the runner drives a checked pipeline from its initial
//! state to a terminal state or a pause, journaling every step durably so a crashed or
//! paused run resumes exactly where it stopped.
//!
//! Flow: [`start`] / [`resume`] → `runner` (onEnter → terminal? → pause? → guards in
//! declaration order → done gate → onExit → one durable commit) → [`RunOutcome`]. The
//! runner journals, runs effects and asks the gate through a `RunHost`; `LocalHost`
//! is this machine's.

pub mod actions;
pub(crate) mod agent_config;
mod certify;
pub(crate) mod child_env;
mod cursor;
pub(crate) mod done_gate_port;
pub mod dry_run;
pub(crate) mod effect;
pub mod engine_config;
pub(crate) mod event;
pub mod explain;
pub(crate) mod finish;
pub mod fleet_state;
pub mod fleet_tree;
pub mod git_worktree;
pub(crate) mod guard_eval;
pub(crate) mod host;
pub mod http_allow;
pub mod interrupt;
pub mod journal;
mod journaled_host;
pub(crate) mod jq_guard;
mod left_groups;
pub(crate) mod local_host;
pub(crate) mod lock;
#[cfg(test)]
mod memory_host;
pub mod nested_call;
pub(crate) mod observer;
pub(crate) mod outcome;
mod pause;
pub(crate) mod plan;
pub(crate) mod preflight;
pub mod question;
pub(crate) mod render;
pub mod replay;
pub(crate) mod replay_check;
mod resumable;
pub(crate) mod retry;
pub(crate) mod rule_set;
pub mod run_error;
pub(crate) mod run_id;
pub(crate) mod runner;
pub mod runs_list;
pub(crate) mod secret_config;
pub(crate) mod secrets;
mod select;
mod sequence;
pub mod step_timeouts;
pub mod vars;

pub use done_gate_port::{DoneGate, GateAnswer, GateRequest, TaskDoneGate};
pub use event::DenialReason;
pub use journal::Durability;
pub use journaled_host::{start_journaled, PauseAnswer, PauseNote, StepJournal, LONGEST_ACTION};
pub use lock::LockError;
pub use observer::{RunObserver, SilentObserver};
pub use outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
pub use resumable::recorded_pipeline;
pub use run_error::RunError;
pub use run_id::RunId;
pub use runner::{resume, retry, start, ResumeRequest, RetryRequest, RunSettings, StartRequest};
