//! `spur task path WBS [--json]`: the path of the task's file (`{wbs, filePath, path}` in
//! JSON: the reference's `filePath`, and `path` as the corpus pipelines read it).

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task_file::locate_task_file;
use spur_engine::wbs::Wbs;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs).
    wbs: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The reference's reference to a task file in its write results.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EntityRef {
    kind: &'static str,
    id: String,
    file_path: String,
    folder: String,
}

impl EntityRef {
    pub(super) fn task(wbs: &Wbs, path: &Path) -> Self {
        Self {
            kind: "task",
            id: wbs.to_string(),
            file_path: path.display().to_string(),
            folder: path
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PathJson<'a> {
    wbs: &'a str,
    file_path: String,
    path: String,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let path = locate_task_file(&wbs, None, state_dir.project_root(), state_dir)
        .map_err(Failure::usage)?;
    let path = std::path::absolute(&path).unwrap_or(path);
    let shown = path.display().to_string();
    if args.json {
        let document = PathJson {
            wbs: wbs.as_str(),
            file_path: shown.clone(),
            path: shown,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        outln!("{shown}");
    }
    Ok(ExitCode::SUCCESS)
}
