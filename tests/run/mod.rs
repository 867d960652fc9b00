//! `spur run` / `spur continue` / `spur runs` / `spur trace` through the binary: the
//! semantics of a run, every guard and action kind, the done gate, exit codes, --json.
//! Crash safety and shell safety have modules of their own: `run_crash`, `run_injection`.

mod actions;
mod default_timeouts;
mod descriptors;
mod done_gate;
mod dry_run_and_trace;
mod finding;
mod guards;
mod input_errors;
mod locks;
mod orphans;
mod pause;
mod retry;
mod semantics;
mod small_things;
mod task_pipeline;
mod tty;
mod where_the_gate_runs;

pub(crate) fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
