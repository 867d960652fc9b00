//! spur-guards: the guard kinds of a pipeline, the embedded jq (jaq), and the process
//! execution that shell guards and shell actions share.
//!
//! Nothing here knows about pipelines or runs: every function takes plain inputs (a
//! rendered command, an environment, a JSON value), so the engine's runner and the verify
//! gates call the same primitives. The engine composes them (`all`/`any`/`not`,
//! `always`/`never`, `action-ok` need run state and live there).

// `unsafe` is allowed only in spur-process (the process layer), which this crate uses.
#![forbid(unsafe_code)]

pub mod bounded_read;
pub(crate) mod file_exists;
pub(crate) mod guard_result;
pub mod jq;
pub(crate) mod jq_guard;
pub mod jq_shim;
pub(crate) mod plugin;
pub mod shell_guard;
pub mod shell_template;

pub use file_exists::file_exists_guard;
pub use guard_result::GuardResult;
pub use jq_guard::{jq_file_guard, jq_guard_passes};
pub use plugin::{find_plugin, plugin_action, plugin_guard, PluginError, PluginRole, PluginRun};
pub use shell_guard::shell_guard;
pub use spur_process::find_executable;
