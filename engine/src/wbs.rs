//! A task identifier (WBS) that is safe as a path segment under the state directory.

use std::fmt;

use crate::diagnostic::{coded_diagnostic, Code};

/// A validated task id: matches `^[A-Za-z0-9][A-Za-z0-9._-]*$` (so it can never name a
/// parent directory or contain a separator).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wbs(String);

/// Why a string is not a valid WBS.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid task id {0:?}: a wbs must match ^[A-Za-z0-9][A-Za-z0-9._-]*$")]
pub struct InvalidWbs(pub(crate) String);

coded_diagnostic! {
    InvalidWbs {
        Self(..) => Code::UsageInvalidWbs,
            help("use letters, digits, '.', '_' and '-', starting with a letter or digit (e.g. 0592)");
    }
}

impl Wbs {
    /// A task id, or why `s` is not one.
    pub fn parse(s: &str) -> Result<Self, InvalidWbs> {
        let mut chars = s.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
        let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if first_ok && rest_ok && s.len() <= 200 {
            Ok(Self(s.to_owned()))
        } else {
            Err(InvalidWbs(s.to_owned()))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Wbs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Wbs {
    type Err = InvalidWbs;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_safe_ids_and_rejects_paths() {
        for ok in ["0592", "a", "A1.b_c-d", "0.1"] {
            assert!(Wbs::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "-a", "_a", "a b", "a\n", "é"] {
            assert!(Wbs::parse(bad).is_err(), "{bad:?}");
        }
    }
}
