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
pub mod artifact;
pub mod artifact_file;
mod duplicate_keys;
pub mod evaluation;
pub mod outcome;
mod raw;
pub mod read;
mod rows;

pub use aggregate::{aggregate, Aggregation, FiredRule, Rule, Subject};
pub use artifact::{
    AcceptanceCriterion, Artifact, Check, CheckStatus, EvidenceKind, EvidenceType, Requirement,
    RowStatus, Severity, Verdict,
};
pub use artifact_file::{replace_checks, write_artifact, ArtifactWriteError, ChecksReplaced};
pub use evaluation::{Evaluation, Warning, WbsMismatch};
pub use outcome::{
    ArtifactOutcome, FieldProblem, Invalidity, MissingDetail, OutcomeKind, RejectedRow, Section,
};
pub use read::{
    parse_artifact, parse_value, read_artifact, read_artifact_file, ArtifactRead,
    MAX_ARTIFACT_BYTES,
};
