//! The embedded jq: jaq-core + jaq-std + jaq-json, compiled once and evaluated many times.
//! Filters a pipeline author wrote are evaluated in a separate worker process
//! ([`JqSandbox`]), so a filter that recurses too deeply, allocates without end or never
//! finishes fails its guard instead of aborting or stalling the run.
//!
//! ```
//! use spur_guards::jq::{JqLimits, JqProgram};
//! use serde_json::json;
//!
//! let program = JqProgram::compile(r#".verdict == $want"#, &["want"]).unwrap();
//! let out = program
//!     .first_in_process(&json!({"verdict": "PASS"}), &[json!("PASS")], &JqLimits::default())
//!     .unwrap();
//! assert_eq!(out, Some(json!(true)));
//! ```

mod bounded;
mod json_depth;
mod nesting;
mod program;
mod sandbox;
mod std_library;
pub mod stream;
mod value;
mod wire;
pub mod worker;

pub use json_depth::MAX_JSON_DEPTH;
pub use nesting::{MAX_BRACKET_NESTING, MAX_NESTING_TOKENS};
pub use program::{JqCompileError, JqEvalError, JqLimits, JqProgram, DEFAULT_TIMEOUT};
pub use sandbox::JqSandbox;
pub use worker::{WORKER_MEMORY_MIB, WORKER_STACK_MIB};
