//! Answer files → verdict: the verifier's Markdown answer is parsed, linted
//! against the task file (requirement ids, acceptance criteria, concrete anchors) and turned
//! into the verdict artifact the done gate reads.
//!
//! The flow is the module list: `parse` (answer text → rows) and [`task_file`] (task →
//! requirement ids and criteria) feed [`lint()`] (with `ac_identity` and [`anchor`]), whose
//! typed rows [`derive`] turns into an artifact through the one aggregation function;
//! `request` reads the files and commits the artifact atomically.
//!
//! ```
//! use spur_engine::answer::{anchor::AnchorChecker, derive_artifact, lint, parse_answer};
//! use spur_engine::answer::task_file::parse_task_file;
//! use spur_engine::{verdict::Verdict, wbs::Wbs};
//!
//! let project = tempfile::tempdir().unwrap();
//! std::fs::write(project.path().join("lib.rs"), "fn a() {}\nfn b() {}\n").unwrap();
//! let task = parse_task_file(
//!     "docs/tasks/0804_x.md".as_ref(),
//!     "## Requirements\n- R1: a and b\n## Acceptance Criteria\n- [ ] AC-1: b runs\n",
//! ).unwrap();
//! let answer = parse_answer(
//!     "Verdict: PASS\n\
//!      | Req | Status | Evidence |\n|---|---|---|\n| R1 | MET | `./lib.rs:1-2` |\n\n\
//!      | AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n\
//!      | AC-1 | MET | static-ref | `./lib.rs:2` |\n",
//! );
//! let report = lint(&answer, &task, &mut AnchorChecker::new(project.path()).unwrap());
//! assert!(!report.has_errors());
//! let derived = derive_artifact(&Wbs::parse("0804").unwrap(), &task, &answer, &report, "answer.md");
//! // AC-1 is behaviour-bearing but only has static-ref evidence: written PARTIAL.
//! assert_eq!(derived.artifact.verdict, Verdict::Partial);
//! ```

pub(crate) mod ac_identity;
pub(crate) mod ac_label;
pub mod anchor;
pub(crate) mod derive;
pub(crate) mod diagnostic;
pub mod lint;
pub(crate) mod parse;
pub(crate) mod request;
pub(crate) mod table;
/// The task-file parser, which the answer lint shares with the done gate and verify.
pub use crate::task_file;

pub use derive::derive_artifact;
pub use diagnostic::AnswerDiagnostic;
pub use lint::lint;
pub use parse::parse_answer;
pub use request::{derive_verdict, derive_verdict_with, DeriveError, DeriveRequest};
