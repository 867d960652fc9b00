//! Command-line surface (DESIGN §10). One file per subcommand; each parses its arguments,
//! calls the engine and renders. No domain logic lives here.

mod audit;
mod completions;
mod failure;
mod task;
mod verdict;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use failure::{CliResult, Failure};

/// spur — a workflow state-machine engine driven by YAML pipelines.
#[derive(Debug, Parser)]
#[command(name = "spur", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print shell completions.
    Completions(completions::Args),
    /// Run the verify gates (or `verify history` to show the verdict ledger).
    Verify(verify::Args),
    /// Check and inspect verdict artifacts.
    Verdict(verdict::Args),
    /// Task status: update (done through the done gate) and show.
    Task(task::Args),
    /// The audit log of forced done overrides.
    Audit(audit::Args),
}

pub fn main() -> ExitCode {
    failure::install_miette_hook();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Completions(args) => completions::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Verdict(args) => verdict::run(args),
        Command::Task(args) => task::run(args),
        Command::Audit(args) => audit::run(args),
    };
    failure::finish(result)
}

/// The clap command, for completions.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
