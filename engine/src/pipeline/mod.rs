//! Pipelines: the typed model of the state-machine dialect (DESIGN §2), the loader that
//! builds it from YAML with a span for every value a diagnostic may point at, and the
//! static checker.

pub mod check;
pub mod load;
pub mod model;
pub mod raw;
pub mod scalar_span;

pub use check::{check, CheckedPipeline};
pub use load::{load, read_source, LoadFailure, Loaded};
pub use model::*;

/// The JSON Schema (draft 2020-12) of the pipeline format, printed by `spur schema`.
pub const SCHEMA_JSON: &str = include_str!("schema.json");
