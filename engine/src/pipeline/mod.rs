//! Pipelines: the typed model of the state-machine dialect, the loader that
//! builds it from YAML with a span for every value a diagnostic may point at, and the
//! static checker.

pub mod action_kind;
pub mod check;
pub mod guard_kind;
pub mod load;
mod load_failure;
pub mod model;
pub mod read;
pub mod scalar_span;
pub mod templated;
mod yaml_error;

pub use action_kind::*;
pub use check::{check, CheckedPipeline};
pub use guard_kind::*;
pub use load::{load, Loaded};
pub use load_failure::LoadFailure;
pub use model::*;
pub use read::read_source;
pub use templated::{EnvVars, FromRendered, Problem, ShellText, Templated};

/// The JSON Schema (draft 2020-12) of the pipeline format, printed by `spur schema`.
pub const SCHEMA_JSON: &str = include_str!("schema.json");
