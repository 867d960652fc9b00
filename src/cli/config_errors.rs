//! A command stopped by an error in `.spur/config.yaml` reports every error of the file,
//! every section's, at once.

use spur_engine::config_check::config_errors;
use spur_engine::store::state_dir::StateDir;

use super::Failure;

/// Every error of the config on stderr but the last, which is the failure (exit 2); `first`
/// when the sections' readers find none (the file changed meanwhile).
pub fn config_failure(state_dir: &StateDir, first: miette::Report) -> Failure {
    let mut errors = config_errors(state_dir);
    let Some(last) = errors.pop() else {
        return Failure::usage(first);
    };
    let total = errors.len() + 1;
    if total > 1 {
        eprintln!(
            "{} has errors in {total} sections; every one:",
            state_dir.config_path().display()
        );
    }
    for e in errors {
        eprintln!("{e:?}");
    }
    Failure::usage(last)
}
