//! `spur runs [--json]`: the runs of the state directory, newest first.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::run::runs_list::list_runs;
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array of {runId, pipeline, wbs, outcome, state, startedAt}.
    #[arg(long)]
    json: bool,
    /// The state directory (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let runs = list_runs(&state_dir);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&runs).unwrap_or_else(|_| "[]".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        outln!("no runs in {}", state_dir.root().display());
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<24} {:<20} {:<10} {:<11} {:<16} STARTED",
        "RUN",
        "PIPELINE",
        "WBS",
        "OUTCOME",
        "STATE"
    );
    for r in runs {
        outln!(
            "{:<24} {:<20} {:<10} {:<11} {:<16} {}",
            r.run_id,
            r.pipeline,
            r.wbs.as_deref().unwrap_or("-"),
            r.outcome,
            r.state.as_deref().unwrap_or("-"),
            r.started_at
        );
    }
    Ok(ExitCode::SUCCESS)
}
