//! The gate's policy for this spur call: in a step of a run (`SPUR_RUN_ID`, which a run sets
//! for its steps, or the task's run lock held by a run), the policy that run pinned; else
//! `.spur/config.yaml` as it is now, which must be the policy a person approved.

use spur_engine::policy::{approval, short, PolicyError, PolicySource};
use spur_engine::store::audit::current_user;
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

/// For a person's call that decides under the project's policy — a run that starts or goes
/// on, a gate decision outside runs: when no policy was approved yet, approve the config's
/// (trust on first use), saying so once on stderr when it has a `verify` or `doneGate`
/// section. A call under a run's pin was held to the approval when that run started.
/// Whether the config's policy is the approved one is the error (`spur::policy::unapproved`,
/// or the record's own when it approves nothing).
pub fn approve_on_first_use(
    state_dir: &StateDir,
    source: &PolicySource,
) -> Result<(), PolicyError> {
    if let PolicySource::Pinned(_) = source {
        return Ok(());
    }
    let Some(approved) = approval::approve_on_first_use(state_dir, current_user)? else {
        return Ok(());
    };
    if !approved.policy().described_fields().is_empty() {
        eprintln!(
            "note: approved the gate's policy of {} on first use ({}): from now on a change \
             to its verify or doneGate sections needs `spur policy approve` (`spur policy \
             show` shows it)",
            state_dir.config_path().display(),
            short(approved.policy().sha256())
        );
    }
    Ok(())
}
