//! What a gate returned, and how sure spur is of it.

use serde::{Deserialize, Serialize};

/// The status of one gate in one verify run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum GateStatus {
    /// Exit 0 and no warning or blocking finding.
    Pass,
    /// Exit 0 with warning findings only.
    Warn,
    /// A non-zero exit, or a blocking finding.
    Fail,
    /// The gate produced no trustworthy evidence: timed out, could not start, was killed,
    /// or its expected evidence file is missing. Fail-closed: counts like a FAIL.
    Error,
    /// Not run: disabled, or a standard gate the config does not mention.
    Skip,
}

impl GateStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::Error => "ERROR",
            Self::Skip => "SKIP",
        }
    }

    /// FAIL and ERROR make `spur verify` exit 1 and are re-probed before they are final.
    pub(crate) fn is_failure(self) -> bool {
        matches!(self, Self::Fail | Self::Error)
    }
}

impl std::fmt::Display for GateStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a verdict can be trusted: low when a re-probe disagreed (flaky) or the verdict
/// flipped since the last run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Confidence {
    High,
    Low,
}

impl Confidence {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Low => "low",
        }
    }
}
