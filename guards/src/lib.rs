//! spur-guards: the guard kinds of a pipeline, the embedded jq (jaq), and the process
//! execution that shell guards and shell actions share.
//!
//! Nothing here knows about pipelines or runs: every function takes plain inputs (a
//! rendered command, an environment, a JSON value), so the engine's runner and the verify
//! gates call the same primitives. The engine composes them (`all`/`any`/`not`,
//! `always`/`never`, `action-ok` need run state and live there).

// `unsafe` lives only in the process layer (fork/exec setup, waiting, signals: libc calls
// std does not wrap); every other module is checked safe.
#![deny(unsafe_code)]

pub mod bounded_read;
#[allow(unsafe_code)]
mod child_setup;
pub(crate) mod executable_search;
pub(crate) mod file_exists;
pub(crate) mod guard_result;
pub mod jq;
pub(crate) mod jq_guard;
pub mod jq_shim;
pub(crate) mod plugin;
#[allow(unsafe_code)]
pub mod process;
pub mod shell_guard;
pub mod shell_template;
#[allow(unsafe_code)]
mod spawn;

pub use executable_search::find_executable;
pub use file_exists::file_exists_guard;
pub use guard_result::GuardResult;
pub use jq_guard::{jq_file_guard, jq_guard_passes};
pub use plugin::{find_plugin, plugin_action, plugin_guard, PluginError, PluginRole, PluginRun};
pub use shell_guard::shell_guard;
