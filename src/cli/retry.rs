//! `spur retry RUN [--allow-changed-pipeline] [--force-done --reason R] [--var NAME=VALUE]`:
//! a failed run goes on from where it failed — the state whose action failed, or the state
//! it left for a failure terminal — running that state's onEnter again with a fresh
//! iteration bound. What the run did before stays done; the done gate is asked as ever.

use spur_engine::run;
use spur_engine::task::lifecycle_done_gate::LifecycleDoneGate;

use super::run::CommonRunArgs;
use super::run_progress::Progress;
use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The failed run: its id, a unique prefix of it, or `latest` (see `spur runs`).
    #[arg(value_name = "RUN")]
    run_id: String,
    /// Retry even though the pipeline file changed since the run started.
    #[arg(long)]
    allow_changed_pipeline: bool,
    /// Mark the task done even without a PASS verdict (needs --reason; audited).
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why --force-done is justified (written to the audit log).
    #[arg(long, value_name = "R", requires = "force_done")]
    reason: Option<String>,
    /// Give a secret var again (NAME=VALUE, repeatable), as for `spur continue`.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    secret_vars: Vec<String>,
    #[command(flatten)]
    common: CommonRunArgs,
}

pub fn run(args: Args) -> CliResult {
    let force_done_reason = super::run::force_done_reason(args.force_done, args.reason)?;
    let state_dir = args.common.state_dir()?;
    let (run_id, checked) = super::run::recorded_run(&state_dir, &args.run_id)?;
    let (state_dir, worktree) = super::run::recorded_tree(state_dir, &run_id)?;
    let settings = args.common.settings(state_dir)?;
    super::interrupt_notice::install(args.common.state_dir.clone());
    let mut progress = Progress::new(false);
    let outcome = run::retry(
        run::RetryRequest {
            pipeline: &checked,
            run_id,
            allow_changed_pipeline: args.allow_changed_pipeline,
            force_done_reason,
            secret_vars: args.secret_vars,
        },
        &settings,
        &mut progress,
        &mut LifecycleDoneGate::new(settings.clone()),
    );
    drop(progress);
    let result = super::run::finish_in_worktree(
        outcome,
        args.common.json,
        Some((&settings.state_dir, &checked)),
        worktree.as_ref(),
    );
    if let Some(record) = &worktree {
        super::run::worktree_notice(&settings.state_dir, record, false);
    }
    result
}
