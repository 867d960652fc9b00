//! `spur continue RUN [--answer A] [--rerun-ambiguous] [--allow-changed-pipeline]
//! [--force-done --reason R]`: resume a paused or interrupted (or crashed) run from its
//! journal.

use spur_engine::run;
use spur_engine::task::lifecycle_done_gate::LifecycleDoneGate;

use super::run::CommonRunArgs;
use super::run_progress::Progress;
use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: its id, a unique prefix of it, or `latest` (see `spur runs`).
    #[arg(value_name = "RUN")]
    run_id: String,
    /// The operator's answer to the question the run paused on (yes, no, cancel, or a
    /// choice of an hitl.select).
    #[arg(long, value_name = "A")]
    answer: Option<String>,
    /// Run again an action that started and never finished (it may have run partly).
    #[arg(long)]
    rerun_ambiguous: bool,
    /// Resume even though the pipeline file changed since the run started.
    #[arg(long)]
    allow_changed_pipeline: bool,
    /// Mark the task done even without a PASS verdict (needs --reason; audited). The
    /// reason a run was started with is not used again: give it to this resume.
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why --force-done is justified (written to the audit log).
    #[arg(long, value_name = "R", requires = "force_done")]
    reason: Option<String>,
    /// Give a secret var again (NAME=VALUE, repeatable): spur records a var listed under
    /// `secrets:` only as `[redacted]`, so a resumed run needs its value again. Only secret
    /// vars are accepted.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    secret_vars: Vec<String>,
    /// Who gives the answer, recorded with it in the journal (`spur ui` says the user it
    /// runs as and the address of the page).
    #[arg(long, value_name = "WHO")]
    answered_by: Option<String>,
    #[command(flatten)]
    engine: super::engine::EngineArgs,
    #[command(flatten)]
    common: CommonRunArgs,
}

pub fn run(args: Args) -> CliResult {
    let force_done_reason = super::run::force_done_reason(args.force_done, args.reason)?;
    let state_dir = args.common.state_dir()?;
    if let super::engine::Target::Restate { ingress, .. } = args.engine.target(&state_dir)? {
        // The run waits on the engine: the answer resolves its pause.
        let answer = args.answer.unwrap_or_default();
        let answered = super::engine_run::answer(
            &ingress,
            &args.run_id,
            &answer,
            args.answered_by.as_deref(),
        )?;
        if args.engine.detach {
            return super::engine_run::detached(&args.run_id);
        }
        return super::engine_run::wait_and_print(
            &ingress,
            &args.run_id,
            args.common.json,
            None,
            answered.as_deref(),
        );
    }
    let (run_id, checked) = super::run::recorded_run(&state_dir, &args.run_id)?;
    let (state_dir, worktree) = super::run::recorded_tree(state_dir, &run_id)?;
    let settings = args.common.settings(state_dir)?;
    super::interrupt_notice::install(args.common.state_dir.clone());
    let mut progress = Progress::new(false);
    let outcome = run::resume(
        run::ResumeRequest {
            pipeline: &checked,
            run_id,
            answer: args.answer,
            rerun_ambiguous: args.rerun_ambiguous,
            allow_changed_pipeline: args.allow_changed_pipeline,
            force_done_reason,
            secret_vars: args.secret_vars,
            answered_by: args.answered_by,
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
