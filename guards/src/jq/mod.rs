//! The embedded jq: jaq-core + jaq-std + jaq-json, compiled once and evaluated many times.
//!
//! ```
//! use spur_guards::jq::{JqLimits, JqProgram};
//! use serde_json::json;
//!
//! let program = JqProgram::compile(r#".verdict == $want"#, &["want"]).unwrap();
//! let out = program
//!     .first(&json!({"verdict": "PASS"}), &[json!("PASS")], &JqLimits::default())
//!     .unwrap();
//! assert_eq!(out, Some(json!(true)));
//! ```

mod deadline;
mod program;
pub mod stream;
mod value;

pub use program::JqLimits;
pub use program::JqProgram;
