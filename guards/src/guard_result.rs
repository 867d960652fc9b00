//! The outcome of one guard evaluation, as the journal records it.

use std::time::Duration;

/// Whether a guard passed, why (always filled, also on failure), and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardResult {
    pub passed: bool,
    pub detail: String,
    pub duration: Duration,
}

impl GuardResult {
    pub fn pass(detail: impl Into<String>, duration: Duration) -> Self {
        Self {
            passed: true,
            detail: detail.into(),
            duration,
        }
    }

    pub fn fail(detail: impl Into<String>, duration: Duration) -> Self {
        Self {
            passed: false,
            detail: detail.into(),
            duration,
        }
    }
}
