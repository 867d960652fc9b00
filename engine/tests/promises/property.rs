//! Running a property: proptest's runner with a case count that `PROPTEST_CASES` can raise,
//! a count of the cases that really ran, and a line naming both, so a run's output says how
//! hard each promise was searched.

use std::sync::atomic::{AtomicU32, Ordering};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseResult, TestRunner};

/// The case count: `PROPTEST_CASES` when set (to search longer), else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Search for a counterexample to `test` among `cases(default)` generated values. Panics
/// with the shrunk counterexample; otherwise prints `property NAME: N cases, 0 failures`
/// and returns N. Counterexamples are kept as named regression tests, not in a file.
pub(crate) fn property<S: Strategy>(
    name: &str,
    default: u32,
    strategy: S,
    test: impl Fn(S::Value) -> TestCaseResult,
) -> u32 {
    let wanted = cases(default);
    let config = Config {
        cases: wanted,
        failure_persistence: None,
        ..Config::default()
    };
    let ran = AtomicU32::new(0);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |value| {
        ran.fetch_add(1, Ordering::Relaxed);
        test(value)
    });
    if let Err(error) = result {
        panic!("property {name}: counterexample found: {error}");
    }
    let ran = ran.load(Ordering::Relaxed);
    assert!(
        ran >= wanted,
        "property {name}: only {ran} of {wanted} cases ran"
    );
    eprintln!("property {name}: {ran} cases, 0 failures");
    ran
}
