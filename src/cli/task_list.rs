//! `spur task list [--status S] [--feature ID] [--parent WBS] [--folder PATH] [--json]`: the
//! task files of the task folders, each with its status — the ledger's, or the file's where
//! the file wins (a claim of done never does). Text: a board by status; JSON: the
//! reference's array of `{wbs, name, status, filePath, frontmatter}`, each with
//! `fileStatus` and `certification` too.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status;
use spur_engine::task::file_status::{claim, shown_status, FileClaim};
use spur_engine::task::status_name::{canonical_status, status_icon, TASK_STATUSES};
use spur_engine::task_file::{list_task_files, TaskDocument};

use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only tasks in this status (any spelling of it).
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// The same as --status (the reference's older name).
    #[arg(long, value_name = "STATUS", conflicts_with = "status")]
    phase: Option<String>,
    /// Only the sub-tasks of this task (parent_wbs).
    #[arg(long, value_name = "WBS")]
    parent: Option<String>,
    /// Only the tasks of this feature (feature_id).
    #[arg(long, value_name = "ID")]
    feature: Option<String>,
    /// One folder (relative to the project root) instead of every docs/tasks*/.
    #[arg(long, value_name = "PATH")]
    folder: Option<PathBuf>,
    /// Print a JSON array instead of the board.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskJson {
    wbs: String,
    name: String,
    status: String,
    file_path: String,
    frontmatter: serde_json::Map<String, serde_json::Value>,
    /// What the file's `status:` says.
    file_status: Option<String>,
    /// `uncertified` when the file says done and the ledger has no done record; else
    /// `certified` (the ledger says done) or `none`.
    certification: &'static str,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let root = state_dir.project_root();
    let wanted = args
        .status
        .as_deref()
        .or(args.phase.as_deref())
        .map(|s| canonical_status(s).map_or_else(|| s.to_owned(), str::to_owned));
    let mut tasks = Vec::new();
    for listed in list_task_files(root, args.folder.as_deref()) {
        let document = match TaskDocument::read(&listed.path) {
            Ok(document) => document,
            Err(e) => {
                eprintln!("warning: {e}");
                continue;
            }
        };
        let ledger = match task_status::current_status(state_dir, &listed.wbs) {
            Ok(status) => status,
            Err(e) => {
                eprintln!("warning: task {}: {e}", listed.wbs);
                continue;
            }
        };
        let file_status = document.status_text();
        let file_claim = claim(&ledger, file_status.as_deref());
        let status = shown_status(&ledger, &file_claim);
        let certification = if file_claim == FileClaim::UncertifiedDone {
            "uncertified"
        } else if ledger.is_done() {
            "certified"
        } else {
            "none"
        };
        if wanted.as_deref().is_some_and(|w| w != status) {
            continue;
        }
        let frontmatter = document.frontmatter();
        let parent =
            frontmatter.and_then(|f| f.scalar("parent_wbs").or_else(|| f.scalar("parent-wbs")));
        if args.parent.is_some() && parent != args.parent {
            continue;
        }
        if args.feature.is_some() && document.feature_id() != args.feature {
            continue;
        }
        let mut map = frontmatter.map(|f| f.to_json()).unwrap_or_default();
        if map.contains_key("status") {
            map.insert("status".into(), serde_json::Value::String(status.clone()));
        }
        tasks.push(TaskJson {
            wbs: listed.wbs.to_string(),
            name: document.name().unwrap_or_else(|| {
                listed
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
            status,
            file_path: listed.path.display().to_string(),
            frontmatter: map,
            file_status,
            certification,
        });
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&tasks).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if tasks.is_empty() {
        outln!("(no tasks)");
        return Ok(ExitCode::SUCCESS);
    }
    let title = args
        .folder
        .as_ref()
        .map_or_else(|| "docs/tasks*".to_owned(), |f| f.display().to_string());
    outln!();
    outln!("  Kanban Board — {title}");
    outln!();
    let columns: Vec<&str> = match wanted.as_deref() {
        Some(w) if TASK_STATUSES.contains(&w) => vec![w],
        _ => TASK_STATUSES.to_vec(),
    };
    for column in columns {
        outln!("  {} {}", status_icon(column), column_title(column));
        for task in tasks.iter().filter(|t| t.status == column) {
            let note = if task.certification == "uncertified" {
                "  (its file says done: uncertified)"
            } else {
                ""
            };
            outln!("  • {}  {}{note}", task.wbs, task.name);
        }
        outln!();
    }
    let others: Vec<&TaskJson> = tasks
        .iter()
        .filter(|t| !TASK_STATUSES.contains(&t.status.as_str()))
        .collect();
    if !others.is_empty() {
        outln!("  Other");
        for task in others {
            outln!("  • {}  {}  ({})", task.wbs, task.name, task.status);
        }
        outln!();
    }
    Ok(ExitCode::SUCCESS)
}

fn column_title(status: &str) -> &'static str {
    match status {
        "backlog" => "Backlog",
        "todo" => "Todo",
        "wip" => "WIP",
        "testing" => "Testing",
        "blocked" => "Blocked",
        "done" => "Done",
        "cancelled" => "Canceled",
        _ => "Other",
    }
}
