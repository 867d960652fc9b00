//! `spur agent …`: the agents of `.spur/config.yaml`. `doctor` checks them (`agent_doctor.rs`);
//! `stub` is the stand-in agent the `stub` preset runs (`agent_stub.rs`).

use std::path::PathBuf;

use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: AgentCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum AgentCommand {
    /// Check that each configured agent (or the one named) is found, answers with a version
    /// and is logged in; exit 1 when one is not usable.
    Doctor(super::agent_doctor::Args),
    /// The stand-in agent of the `stub` preset: writes NOTES.md for `/implement W` and
    /// `/fix W`, answers `/verify W` by running the task's acceptance-criterion commands.
    Stub(super::agent_stub::Args),
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    match args.command {
        AgentCommand::Doctor(doctor_args) => super::agent_doctor::run(doctor_args, state_dir),
        AgentCommand::Stub(stub_args) => super::agent_stub::run(stub_args, &state_dir),
    }
}
