//! What agent steps spend, and the budgets that bound it (book: *Cost and budgets*). An
//! `agent.run` step reads the usage its agent CLI reports in its own machine-readable output
//! ([`agent_output`]), any process step the `{"spurUsage": …}` lines it prints on stderr
//! ([`usage_line`]); where no cost is reported, it is priced from `prices:` of
//! `.spur/config.yaml` ([`config`]). The step's [`Usage`] goes into its `action-finished`
//! record and, for a task, into the task's usage ledger (`store::usage_ledger`); the budgets
//! of `budgets:` are held against the run's and the task's totals ([`budget`]).

pub(crate) mod agent_output;
pub mod budget;
pub mod config;
mod lines;
mod usage;
pub(crate) mod usage_line;

pub use usage::{CostSource, Usage, UsageTotal};
