//! `spur completions SHELL`: print a completion script.

use std::process::ExitCode;

use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to generate completions for.
    shell: clap_complete::Shell,
}

pub fn run(args: Args) -> CliResult {
    let mut command = super::command();
    clap_complete::generate(args.shell, &mut command, "spur", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
