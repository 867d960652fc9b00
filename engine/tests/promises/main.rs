//! spur's promises, each turned into a generated search for a counterexample
//! (book/src/guarantees.md). `PROPTEST_CASES=N` searches longer.

#![forbid(unsafe_code)]

mod aggregation;
mod forgery;
mod journal;
mod journaled_replay;
mod legacy_journal;
mod non_bypass;
mod property;
mod regressions;
mod run_harness;
mod tree_edit;
mod verdict_forgery;
