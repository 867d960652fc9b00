//! Answer files → verdict (DESIGN §8): the verifier's Markdown answer is parsed, linted
//! against the task file (requirement ids, acceptance criteria, concrete anchors) and turned
//! into the verdict artifact the done gate reads.

pub mod ac_identity;
pub mod ac_label;
pub mod anchor;
pub mod diagnostic;
pub mod lint;
pub mod parse;
pub mod table;
pub mod task_file;

pub use diagnostic::{AnswerDiagnostic, LintCode, Severity};
pub use parse::{parse_answer, AcRow, Answer, DeclaredVerdict, RequirementRow, VerdictLine};
