//! `spur workflow …`: the TypeScript spur's command names, as aliases
//! (`spur workflow validate` = `spur check`, `workflow run|continue` = `run|continue`).

use super::{check, continue_run, run, CliResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: WorkflowCommand,
}

#[derive(Debug, clap::Subcommand)]
enum WorkflowCommand {
    /// Statically check pipelines (same as `spur check`).
    Validate(check::Args),
    /// Run a pipeline (same as `spur run`).
    Run(run::Args),
    /// Resume a paused or interrupted run (same as `spur continue`).
    Continue(continue_run::Args),
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        WorkflowCommand::Validate(args) => check::run(args),
        WorkflowCommand::Run(args) => run::run(args),
        WorkflowCommand::Continue(args) => continue_run::run(args),
    }
}
