//! The verdict contract: the artifact a verifier writes, the one parser that
//! reads it (`read`, row by row in `rows`, to an `outcome`), and the one aggregation
//! policy every consumer applies.
//!
//! ```
//! use spur_engine::verdict::{parse_artifact, aggregate, ArtifactOutcome, Verdict};
//! let text = br#"{"wbs":"0592","verdict":"pass",
//!   "requirements":[{"id":"R1","status":"met","evidence":"src/lib.rs:3"}]}"#;
//! let ArtifactOutcome::Valid(artifact) = parse_artifact(text) else { panic!() };
//! assert_eq!(artifact.verdict, Verdict::Pass);
//! assert_eq!(aggregate(&artifact).verdict, Verdict::Pass);
//! ```

pub mod aggregate;
pub(crate) mod artifact;
pub(crate) mod artifact_file;
mod duplicate_keys;
pub(crate) mod evaluation;
pub(crate) mod outcome;
mod raw;
pub(crate) mod read;
mod rows;

pub use aggregate::{aggregate, Aggregation, Subject};
pub use artifact::{
    AcceptanceCriterion, Artifact, Check, CheckStatus, EvidenceKind, EvidenceType, Requirement,
    RowStatus, Severity, Verdict,
};
pub use artifact_file::ArtifactWriteError;
pub(crate) use artifact_file::{replace_checks, write_artifact};
pub use evaluation::{Evaluation, Warning};
pub use outcome::{ArtifactOutcome, OutcomeKind};
pub(crate) use read::read_artifact_file;
pub use read::{parse_artifact, read_artifact};
