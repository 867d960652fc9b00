//! spur-guards: the guard kinds of a pipeline, the embedded jq (jaq), and the process
//! execution that shell guards and shell actions share.
//!
//! Nothing here knows about pipelines or runs: every function takes plain inputs (a
//! rendered command, an environment, a JSON value), so the engine's runner and the verify
//! gates call the same primitives.

pub mod process;
