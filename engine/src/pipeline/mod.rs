//! Pipelines: the typed model (states and transitions), the loader that builds it from
//! YAML of either dialect (`state-machine`, `transition-flow`) with a span for every value a
//! diagnostic may point at, and the static checker.

pub(crate) mod action_kind;
pub mod check;
pub(crate) mod guard_kind;
pub mod load;
mod load_failure;
pub(crate) mod model;
pub(crate) mod read;
pub(crate) mod scalar_span;
pub(crate) mod templated;
mod yaml_error;

pub(crate) use action_kind::*;
pub use check::{check, CheckedPipeline};
pub(crate) use guard_kind::*;
pub use load::load;
pub use load_failure::LoadFailure;
pub use model::*;
pub use read::read_source;
pub(crate) use templated::{FromRendered, Problem, ShellText, Templated};

/// The JSON Schema (draft 2020-12) of the pipeline format, printed by `spur schema`.
pub const SCHEMA_JSON: &str = include_str!("schema.json");
