//! `spur agent stub [--] INPUT`: the `stub` preset's agent, run by `agent.run`; it works in
//! the project root (the directory that holds the state directory). It prints its answer on stdout; exit 1 (with the reason) when it cannot do
//! what the input asks.

use std::process::ExitCode;

use spur_engine::agent::stub::respond;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The step's input (`/implement 0001`, `/verify 0001`, …).
    #[arg(allow_hyphen_values = true)]
    input: String,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    match respond(state_dir.project_root(), state_dir, &args.input) {
        Ok(text) => {
            out!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(Failure::with_code(miette::Report::new(e), exit::FAILED)),
    }
}
