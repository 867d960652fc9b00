//! spur's promises, each turned into a generated search for a counterexample
//! (book/src/guarantees.md). `PROPTEST_CASES=N` searches longer.

mod aggregation;
mod property;
mod regressions;
