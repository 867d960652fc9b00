//! Command-line surface (DESIGN §10). One file per subcommand; each parses its arguments,
//! calls the engine and renders. No domain logic lives here.

mod completions;
mod failure;
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
}

pub fn main() -> ExitCode {
    failure::install_miette_hook();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Completions(args) => completions::run(args),
        Command::Verify(args) => verify::run(args),
    };
    failure::finish(result)
}

/// The clap command, for completions.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
