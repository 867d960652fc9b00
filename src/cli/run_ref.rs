//! A run as the commands that take one name it: its id, a unique start of it, or `latest`.

use spur_engine::run::runs_list::resolve_ref;
use spur_engine::run::RunId;
use spur_engine::store::state_dir::StateDir;

use super::Failure;

/// The run `reference` names in `state_dir` (bad or unknown → usage error, exit 2).
pub fn resolve(state_dir: &StateDir, reference: &str) -> Result<RunId, Failure> {
    resolve_ref(state_dir, reference).map_err(|e| Failure::usage(miette::Report::new(e)))
}
