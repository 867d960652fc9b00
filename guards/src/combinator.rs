//! `always`, `never`, and the combinators `all` / `any` / `not` over child guards. Children
//! are closures so evaluation short-circuits like `&&` / `||` (a later shell guard does not
//! run once the answer is known); the detail names which child decided.

use std::time::{Duration, Instant};

use crate::guard_result::GuardResult;

pub fn always() -> GuardResult {
    GuardResult::pass("always passes", Duration::ZERO)
}

pub fn never() -> GuardResult {
    GuardResult::fail("never passes", Duration::ZERO)
}

/// Passes when every child passes (and when there are none); stops at the first failure.
pub fn all<F: FnOnce() -> GuardResult>(children: impl IntoIterator<Item = F>) -> GuardResult {
    let started = Instant::now();
    let mut count = 0;
    for (i, child) in children.into_iter().enumerate() {
        let result = child();
        count += 1;
        if !result.passed {
            return GuardResult::fail(
                format!("guard {} of all failed: {}", i + 1, result.detail),
                started.elapsed(),
            );
        }
    }
    GuardResult::pass(format!("all {count} passed"), started.elapsed())
}

/// Passes when some child passes (never when there are none); stops at the first pass.
pub fn any<F: FnOnce() -> GuardResult>(children: impl IntoIterator<Item = F>) -> GuardResult {
    let started = Instant::now();
    let mut count = 0;
    for (i, child) in children.into_iter().enumerate() {
        let result = child();
        count += 1;
        if result.passed {
            return GuardResult::pass(
                format!("guard {} of any passed: {}", i + 1, result.detail),
                started.elapsed(),
            );
        }
    }
    GuardResult::fail(format!("none of {count} passed"), started.elapsed())
}

/// Passes when the child fails. A child that failed closed (error, timeout) also makes
/// `not` pass: wrap with care, and prefer a positive condition.
pub fn not(child: impl FnOnce() -> GuardResult) -> GuardResult {
    let started = Instant::now();
    let result = child();
    GuardResult {
        passed: !result.passed,
        detail: format!("not: {}", result.detail),
        duration: started.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn all_and_any_short_circuit() {
        let ran = Cell::new(0);
        let child = |pass: bool| {
            let ran = &ran;
            move || {
                ran.set(ran.get() + 1);
                if pass {
                    always()
                } else {
                    never()
                }
            }
        };
        let r = all([child(true), child(false), child(true)]);
        assert!(!r.passed);
        assert_eq!(r.detail, "guard 2 of all failed: never passes");
        assert_eq!(ran.get(), 2);
        ran.set(0);
        let r = any([child(false), child(true), child(false)]);
        assert!(r.passed);
        assert_eq!(ran.get(), 2);
    }

    #[test]
    fn empty_all_passes_empty_any_fails_not_inverts() {
        assert!(all(Vec::<fn() -> GuardResult>::new()).passed);
        assert!(!any(Vec::<fn() -> GuardResult>::new()).passed);
        assert!(not(never).passed);
        assert!(!not(always).passed);
    }
}
