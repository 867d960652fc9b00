//! spur's integration tests: one test binary, one module per command or behaviour, all
//! running the `spur` binary through the helpers in `common`.

#![forbid(unsafe_code)]

mod common;

mod agents;
mod bounded_reads;
mod check;
mod check_hostile;
mod closed_stdout;
mod completions;
mod corpus_run;
mod cost;
mod criteria;
mod data_lock;
mod dialect;
mod done_certificates;
mod done_gate;
mod features;
mod fleet;
mod graph;
mod journal_forgery;
mod jq;
mod jq_containment;
mod keyed_chains;
mod pinned_policy;
mod policy_approval;
mod run;
mod run_crash;
mod run_injection;
mod sandbox;
mod secrets;
mod shell_templates;
mod strict_input;
mod task_files;
mod task_ledger;
mod task_lifecycle;
mod task_verbs;
mod task_verdict;
mod task_why;
mod ui;
mod verdict;
mod verdict_provenance;
mod verified_tree;
mod verify;
mod worktree_runs;
