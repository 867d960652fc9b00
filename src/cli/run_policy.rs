//! The gate's policy for this spur call: in a step of a run (`SPUR_RUN_ID`, which a run sets
//! for its steps, or the task's run lock held by a run), the policy that run pinned; else
//! `.spur/config.yaml` as it is now.

use spur_engine::policy::PolicySource;
use spur_engine::store::state_dir::StateDir;
use spur_engine::wbs::Wbs;

use super::Failure;

/// Where this call takes the gate's policy from; a run that is named but whose pinned
/// policy cannot be had is a usage error (exit 2).
pub fn policy_for(state_dir: &StateDir, wbs: Option<&Wbs>) -> Result<PolicySource, Failure> {
    let run_id = std::env::var("SPUR_RUN_ID").ok();
    PolicySource::for_invocation(state_dir, run_id.as_deref(), wbs)
        .map_err(|e| Failure::usage(miette::Report::new(e)))
}
