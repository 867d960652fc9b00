//! Answer files → verdict (DESIGN §8): the verifier's Markdown answer is parsed, linted
//! against the task file (requirement ids, acceptance criteria, concrete anchors) and turned
//! into the verdict artifact the done gate reads.
//!
//! The flow is the module list: [`parse`] (answer text → rows) and [`task_file`] (task →
//! requirement ids and criteria) feed [`lint`] (with [`ac_identity`] and [`anchor`]), whose
//! typed rows [`derive`] turns into an artifact through the one aggregation function;
//! [`request`] reads the files and commits the artifact atomically.

pub mod ac_identity;
pub mod ac_label;
pub mod anchor;
pub mod derive;
pub mod diagnostic;
pub mod lint;
pub mod parse;
pub mod request;
pub mod table;
pub mod task_file;

pub use derive::{derive_artifact, Derivation};
pub use diagnostic::{AnswerDiagnostic, LintCode, Severity};
pub use lint::{lint, LintReport};
pub use parse::{parse_answer, AcRow, Answer, DeclaredVerdict, RequirementRow, VerdictLine};
pub use request::{
    derive_verdict, derive_verdict_with, DeriveError, DeriveOutcome, DeriveRequest,
    MAX_ANSWER_BYTES,
};
pub use task_file::{locate_task_file, read_task_file, TaskFile, TaskFileError};
