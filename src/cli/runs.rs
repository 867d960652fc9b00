//! `spur runs [--task W] [--status S] [--json]`: the runs of the state directory, newest
//! first, with what stopped each.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::run::runs_list::{list_runs, RunSummary};
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array of {runId, pipeline, wbs, outcome, state, reason, startedAt, usage}.
    #[arg(long)]
    json: bool,
    /// Only the runs of this task.
    #[arg(long, value_name = "W")]
    task: Option<String>,
    /// Only the runs with this outcome: done, completed, failed, paused, interrupted, running.
    #[arg(long, value_name = "S", value_parser = ["done", "completed", "failed", "paused", "interrupted", "running"])]
    status: Option<String>,
    /// The state directory (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
    #[command(flatten)]
    engine: super::engine::ReadEngineArgs,
}

/// The runs the engine at `ingress` knows, newest first.
fn engine_runs(ingress: &str) -> Result<Vec<RunSummary>, Failure> {
    spur_restate::fleet_runs::run_summaries(ingress)
        .map_err(|e| super::engine_run::engine_failure("cannot list the engine's runs", e))
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let (all, place) = match args.engine.ingress(&state_dir)? {
        Some(ingress) => (engine_runs(&ingress)?, format!("the engine at {ingress}")),
        None => (
            list_runs(&state_dir),
            state_dir.root().display().to_string(),
        ),
    };
    let runs: Vec<_> = all
        .into_iter()
        .filter(|r| args.task.is_none() || r.wbs.as_deref() == args.task.as_deref())
        .filter(|r| args.status.as_deref().is_none_or(|s| r.outcome == s))
        .collect();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&runs).unwrap_or_else(|_| "[]".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        let which = if args.task.is_some() || args.status.is_some() {
            "no such runs"
        } else {
            "no runs"
        };
        outln!("{which} in {place}");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<24} {:<20} {:<10} {:<11} {:<16} {:<24} {:<12} STARTED",
        "RUN",
        "PIPELINE",
        "WBS",
        "OUTCOME",
        "STATE",
        "REASON",
        "COST"
    );
    for r in runs {
        let cost = if r.usage.steps == 0 {
            "-".to_owned()
        } else {
            r.usage.cost_text()
        };
        outln!(
            "{:<24} {:<20} {:<10} {:<11} {:<16} {:<24} {:<12} {}",
            r.run_id,
            r.pipeline,
            r.wbs.as_deref().unwrap_or("-"),
            r.outcome,
            r.state.as_deref().unwrap_or("-"),
            r.reason.as_deref().unwrap_or("-"),
            cost,
            r.started_at
        );
        if let Some(w) = &r.worktree {
            outln!("  worktree {} (branch {})", w.path, w.branch);
        }
    }
    Ok(ExitCode::SUCCESS)
}
