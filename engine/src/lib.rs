//! spur-engine: pipelines, runs, and the done gate that certifies a task.
//!
//! Three flows run through this crate, each a chain of plain function calls on values:
//!
//! 1. **pipeline → run → gate.** YAML text → [`pipeline::load()`] (a typed model with spans) →
//!    [`pipeline::check()`] (diagnostics, a checked pipeline) → [`graph::TransitionGraph`] →
//!    [`run`] (journal, actions, guards) → [`done_gate::evaluate_done_transition`], the one
//!    function that can certify a task done.
//! 2. **answer → verdict.** A verifier's Markdown answer → [`answer`] (parse, lint against the
//!    task file) → a verdict artifact → [`verdict`] (parse, aggregate), which the gate reads.
//! 3. **gates → evidence → ledger.** [`verify`] runs the project's verify gates in dependency
//!    order, writes one evidence file per gate, appends every per-criterion verdict to the
//!    [`verify::ledger`] and merges the results into the verdict.
//!
//! The three share one reader of task files, [`task_file`]: the answer lint checks rows
//! against it, the gate checks that a verdict has a row for each of its requirements and
//! criteria, and verify runs the command each criterion names.
//!
//! Beneath them, [`store`] holds the storage plumbing (state directory, atomic writes, locks,
//! bounded reads, the audit chain, task status). The engine returns values and `miette`
//! diagnostics; it never prints. The `spur` binary renders.

#![forbid(unsafe_code)]

pub mod agent;
pub mod answer;
pub mod config_check;
pub mod cost;
pub mod diagnostic;
pub mod done_certificate;
pub mod done_gate;
pub mod feature;
pub mod graph;
pub mod lifecycle;
pub mod pipeline;
pub mod policy;
pub mod redact;
pub mod run;
pub mod sandbox;
pub mod scaffold;
pub(crate) mod shell_text;
pub mod source;
pub mod store;
pub mod task;
pub mod task_file;
pub(crate) mod template;
pub mod tree;
pub mod verdict;
pub mod verify;
pub(crate) mod visible_text;
pub mod wbs;
mod yaml;
