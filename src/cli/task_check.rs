//! `spur task check [WBS] [--as STATUS] [--strict] [--strict-core] [--folder PATH] [--json]`:
//! the structural check of task files (see `task::check`). Each finding is rendered like
//! `spur check`'s, with its place in the file, on stderr; one line per task on stdout
//! (`0592 (testing): PASS`). JSON: an array, one object per task. Exit 1 when a task does
//! not pass, 2 when a task cannot be found or read.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task::check::{check_task, CheckJson, CheckOptions, CheckReport};
use spur_engine::task::status_name::{canonical_status, TASK_STATUSES};
use spur_engine::task_file::{list_task_files, locate_task_file, TaskDocument};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs); every task of the task folders when omitted.
    wbs: Option<String>,
    /// Check the task as if it were in this status: the one it is about to enter.
    #[arg(long = "as", value_name = "STATUS")]
    as_status: Option<String>,
    /// Every warning is an error.
    #[arg(long)]
    strict: bool,
    /// Accepted for the reference's pipelines (its testing → done guard): the rules that
    /// gate done are errors already, so it changes nothing.
    #[arg(long)]
    strict_core: bool,
    /// With no WBS: one folder (relative to the project root) instead of every docs/tasks*/.
    #[arg(long, value_name = "PATH")]
    folder: Option<PathBuf>,
    /// Print a JSON array instead of reports.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let as_status = match args.as_status.as_deref() {
        None => None,
        Some(raw) => Some(canonical_status(raw).ok_or_else(|| {
            Failure::usage(miette::miette!(
                code = Code::UsageInvalidStatus,
                help = format!("the task statuses are {}", TASK_STATUSES.join(", ")),
                "invalid --as status {raw:?}"
            ))
        })?),
    };
    let root = state_dir.project_root();
    let targets: Vec<(Wbs, PathBuf)> = match args.wbs.as_deref() {
        Some(raw) => {
            let wbs = Wbs::parse(raw).map_err(Failure::usage)?;
            let path = locate_task_file(&wbs, None, root, state_dir).map_err(Failure::usage)?;
            vec![(wbs, path)]
        }
        None => list_task_files(root, args.folder.as_deref())
            .into_iter()
            .map(|t| (t.wbs, t.path))
            .collect(),
    };
    let options = CheckOptions {
        as_status,
        strict: args.strict,
        project_root: Some(root),
    };
    let mut reports: Vec<CheckReport> = Vec::new();
    let mut unreadable = false;
    for (wbs, path) in targets {
        let document = match TaskDocument::read(&path) {
            Ok(document) => document,
            Err(e) if args.wbs.is_some() => return Err(Failure::usage(e)),
            Err(e) => {
                eprintln!("{:?}", miette::Report::new(e));
                unreadable = true;
                continue;
            }
        };
        let shown = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        reports.push(check_task(&document, wbs.as_str(), &shown, &options));
    }
    if args.json {
        let documents: Vec<CheckJson> = reports.iter().map(CheckReport::to_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&documents).unwrap_or_default()
        );
    } else {
        for report in &reports {
            for diagnostic in report.diagnostics() {
                eprintln!("{:?}", miette::Report::new(diagnostic));
            }
            let verdict = if report.pass() { "PASS" } else { "FAIL" };
            outln!(
                "{} ({}): {verdict} — {} error{}, {} warning{}",
                report.wbs,
                report.status,
                report.errors(),
                if report.errors() == 1 { "" } else { "s" },
                report.warnings(),
                if report.warnings() == 1 { "" } else { "s" },
            );
            if !report.missing_sections.is_empty() {
                outln!("  Missing: {}", report.missing_sections.join(", "));
            }
        }
        if reports.is_empty() && !unreadable {
            outln!("(no tasks)");
        }
    }
    let code = if unreadable {
        exit::USAGE
    } else if reports.iter().all(CheckReport::pass) {
        exit::SUCCESS
    } else {
        exit::FAILED
    };
    Ok(ExitCode::from(code))
}
