//! Run ids: time-ordered and unique, e.g. `20261129T183414Z-3fa9c1`. Sorting ids as strings
//! sorts runs by start time; the random suffix keeps ids unique within one second.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::state_dir::StateDir;
use crate::store::timestamp::Timestamp;

/// A run's id, `20261129T183414Z-3fa9c1`: the start time in UTC and a random suffix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(String);

/// Why a string is not a run id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a run id")]
pub struct InvalidRunId(pub(crate) String);

coded_diagnostic! {
    InvalidRunId {
        Self(..) => Code::RunInvalidRunId,
            help("run ids look like 20261129T183414Z-3fa9c1; `spur runs` lists them");
    }
}

impl RunId {
    pub(crate) fn generate(now: Timestamp) -> Self {
        // RandomState is seeded per process from the OS; mixing in the pid and the time
        // keeps two runs started in the same second apart.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now.millis());
        h.write_u32(std::process::id());
        let suffix = h.finish() & 0xff_ffff;
        Self(format!("{}-{suffix:06x}", now.compact()))
    }

    /// A new run id made now: for a run started elsewhere (a fleet's engine keys the run
    /// by it before any worker runs it).
    pub fn fresh() -> Self {
        Self::generate(Timestamp::now())
    }

    /// Accepts only the shape this module generates, so a run id is a safe path segment.
    pub fn parse(s: &str) -> Result<Self, InvalidRunId> {
        let ok = s.len() == 23
            && s.bytes().enumerate().all(|(i, b)| match i {
                8 => b == b'T',
                15 => b == b'Z',
                16 => b == b'-',
                17..=22 => b.is_ascii_hexdigit(),
                _ => b.is_ascii_digit(),
            });
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(InvalidRunId(s.to_owned()))
        }
    }

    /// The id as text (its directory's name under `runs/`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The run's directory under `state_dir`: its journal and its actions' logs.
    pub(crate) fn dir_in(&self, state_dir: &StateDir) -> PathBuf {
        state_dir.runs_dir().join(&self.0)
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_and_differ() {
        let now = Timestamp::now();
        let a = RunId::generate(now);
        let b = RunId::generate(now);
        assert!(RunId::parse(a.as_str()).is_ok(), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn rejects_paths() {
        for bad in [
            "",
            "..",
            "../20261129T183414Z-3fa9c1",
            "20261129T183414Z-3fa9cZ",
        ] {
            assert!(RunId::parse(bad).is_err(), "{bad}");
        }
    }
}
