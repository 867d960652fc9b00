//! Re-probe: a FAIL or ERROR is run once more before it is final. Agreement keeps the
//! status with high confidence; disagreement is FAIL with low confidence, noted flaky —
//! a gate that cannot pass twice in a row has no stable pass.

use super::attempt::Attempt;
use super::status::{Confidence, GateStatus};

/// The final word on one gate after its attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settled {
    pub(crate) status: GateStatus,
    pub(crate) confidence: Confidence,
    pub(crate) reprobed: bool,
    pub(crate) flaky: bool,
    /// Every attempt, in order (one, or two when re-probed).
    pub(crate) attempts: Vec<Attempt>,
    /// The attempt whose output and findings the evidence shows: the failing one of a
    /// flaky pair, otherwise the last.
    pub(crate) primary: usize,
}

impl Settled {
    pub(crate) fn primary(&self) -> Option<&Attempt> {
        self.attempts.get(self.primary).or(self.attempts.last())
    }
}

/// Settle a gate from its first attempt, running `reprobe` once when that attempt failed.
pub(crate) fn settle(first: Attempt, reprobe: impl FnOnce() -> Attempt) -> Settled {
    let first_status = first.status();
    if !first_status.is_failure() {
        return Settled {
            status: first_status,
            confidence: Confidence::High,
            reprobed: false,
            flaky: false,
            attempts: vec![first],
            primary: 0,
        };
    }
    let second = reprobe();
    let second_status = second.status();
    let attempts = vec![first, second];
    if second_status == first_status {
        return Settled {
            status: first_status,
            confidence: Confidence::High,
            reprobed: true,
            flaky: false,
            attempts,
            primary: 1,
        };
    }
    let primary = attempts
        .iter()
        .rposition(|a| a.status() == GateStatus::Fail)
        .unwrap_or(0);
    Settled {
        status: GateStatus::Fail,
        confidence: Confidence::Low,
        reprobed: true,
        flaky: true,
        attempts,
        primary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::attempt::fixtures::attempt;
    use crate::verify::attempt::Ended;

    #[test]
    fn a_pass_is_not_reprobed() {
        let settled = settle(attempt(Ended::Exited(0), vec![]), || {
            panic!("a pass must not be re-probed")
        });
        assert_eq!(
            (settled.status, settled.reprobed, settled.attempts.len()),
            (GateStatus::Pass, false, 1)
        );
    }

    #[test]
    fn a_steady_failure_is_fail_with_high_confidence() {
        let settled = settle(attempt(Ended::Exited(1), vec![]), || {
            attempt(Ended::Exited(1), vec![])
        });
        assert_eq!(settled.status, GateStatus::Fail);
        assert_eq!(settled.confidence, Confidence::High);
        assert!(settled.reprobed && !settled.flaky);
    }

    #[test]
    fn fail_then_pass_is_a_flaky_fail_with_low_confidence() {
        let settled = settle(attempt(Ended::Exited(1), vec![]), || {
            attempt(Ended::Exited(0), vec![])
        });
        assert_eq!(settled.status, GateStatus::Fail);
        assert_eq!(settled.confidence, Confidence::Low);
        assert!(settled.reprobed && settled.flaky);
        assert_eq!(settled.primary().unwrap().exit_code(), Some(1));
    }

    #[test]
    fn error_then_fail_disagrees_too() {
        let settled = settle(attempt(Ended::CannotStart("x".into()), vec![]), || {
            attempt(Ended::Exited(2), vec![])
        });
        assert_eq!((settled.status, settled.flaky), (GateStatus::Fail, true));
        assert_eq!(settled.primary().unwrap().exit_code(), Some(2));
    }
}
