//! Pipelines: the typed model of the state-machine dialect (DESIGN §2), the loader that
//! builds it from YAML with a span for every value a diagnostic may point at, and the
//! static checker.

pub mod model;

pub use model::*;
