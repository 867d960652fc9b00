//! `spur workflow …`: the TypeScript spur's command names, as aliases
//! (`spur workflow validate` = `spur check`).

use super::{check, CliResult};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: WorkflowCommand,
}

#[derive(Debug, clap::Subcommand)]
enum WorkflowCommand {
    /// Statically check pipelines (same as `spur check`).
    Validate(check::Args),
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        WorkflowCommand::Validate(args) => check::run(args),
    }
}
