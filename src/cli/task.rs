//! `spur task …` (temporary shape on the answer branch until the verdict branch's task
//! group is merged): only `verdict`.

use std::path::PathBuf;

use spur_engine::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TaskCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true)]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum TaskCommand {
    /// Derive the verdict artifact from the verifier's answer file.
    Verdict(super::task_verdict::Args),
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    match args.command {
        TaskCommand::Verdict(verdict_args) => super::task_verdict::run(verdict_args, &state_dir),
    }
}
