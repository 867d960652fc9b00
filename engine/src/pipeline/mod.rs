//! Pipelines: the typed model of the state-machine dialect (DESIGN §2), the loader that
//! builds it from YAML with a span for every value a diagnostic may point at, and the
//! static checker.

pub mod load;
pub mod model;
pub mod raw;
pub mod scalar_span;

pub use load::{load, read_source, LoadFailure, Loaded};
pub use model::*;
