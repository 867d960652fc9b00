//! The outcome of one guard evaluation, as the journal records it — the guards' own and the
//! engine's (an unguarded transition, `always`, a combinator) alike.

use std::time::Duration;

/// Whether a guard passed, why, and how long it took. The guards of this crate always say
/// why; an empty detail is a result with nothing to explain (see [`GuardResult::bare`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardResult {
    /// Whether the guard passed.
    pub passed: bool,
    /// Why it passed or failed, for the journal and people.
    pub detail: String,
    pub(crate) duration: Duration,
}

impl GuardResult {
    /// A passing result.
    pub fn pass(detail: impl Into<String>, duration: Duration) -> Self {
        Self {
            passed: true,
            detail: detail.into(),
            duration,
        }
    }

    /// A failing result.
    pub fn fail(detail: impl Into<String>, duration: Duration) -> Self {
        Self {
            passed: false,
            detail: detail.into(),
            duration,
        }
    }

    /// A result with nothing to explain (an unguarded transition, `always`, `never`).
    pub fn bare(passed: bool) -> Self {
        Self {
            passed,
            detail: String::new(),
            duration: Duration::ZERO,
        }
    }

    /// The detail, when there is one.
    pub fn detail_if_any(&self) -> Option<&str> {
        Some(self.detail.as_str()).filter(|d| !d.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_result_has_no_detail() {
        assert_eq!(GuardResult::bare(true).detail_if_any(), None);
        let failed = GuardResult::fail("exit 1", Duration::ZERO);
        assert_eq!(failed.detail_if_any(), Some("exit 1"));
    }
}
