//! `spur task create TITLE` and `spur task batch-create --file F`: new task files with the
//! next free WBS (see `task::create`). JSON: the reference's write result (`ref`,
//! `eventName`) with `wbs` and `filePath` for create; `{created, wbs, parentsWired}` for a
//! batch (spur wires no parent rosters: always `[]`).

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task::batch::read_batch;
use spur_engine::task::create::{create_tasks, Created, NewTask, DEFAULT_TASKS_FOLDER};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_path::EntityRef;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The task's name.
    title: String,
    /// The feature it implements (feature_id); the task then starts at todo.
    #[arg(long, value_name = "ID")]
    feature: Option<String>,
    /// Its parent task (parent_wbs).
    #[arg(long, value_name = "WBS")]
    parent: Option<String>,
    /// The template variant: standard, feature-impl, issue, review, meta, brainstorm.
    #[arg(long, value_name = "VARIANT")]
    template: Option<String>,
    /// The folder, relative to the project root.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_TASKS_FOLDER)]
    folder: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// The batch: a JSON array of {name, background?, requirements?, feature_id?,
    /// parent_wbs?, priority?, tags?, template?}.
    #[arg(long, value_name = "FILE")]
    file: PathBuf,
    /// The folder, relative to the project root.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_TASKS_FOLDER)]
    folder: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateJson<'a> {
    #[serde(rename = "ref")]
    entity: EntityRef,
    event_name: &'static str,
    wbs: &'a str,
    file_path: String,
    name: &'a str,
    status: &'a str,
    template: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchJson {
    created: usize,
    wbs: Vec<String>,
    parents_wired: Vec<serde_json::Value>,
}

fn create_failure(e: spur_engine::task::create::CreateError) -> Failure {
    use spur_engine::task::create::CreateError;
    match e {
        CreateError::Invalid { .. } | CreateError::Folder(_) => Failure::usage(e),
        CreateError::Exhausted | CreateError::Write { .. } => Failure::with_code(e, exit::FAILED),
    }
}

pub fn create(args: CreateArgs, state_dir: &StateDir) -> CliResult {
    let task = NewTask {
        name: args.title,
        feature_id: args.feature,
        parent_wbs: args.parent,
        template: args.template,
        ..NewTask::default()
    };
    let created = create_tasks(state_dir, &args.folder, &[task]).map_err(create_failure)?;
    let Some(created) = created.first() else {
        return Err(Failure::with_code(
            miette::miette!("no task was created"),
            exit::FAILED,
        ));
    };
    if args.json {
        let wbs = Wbs::parse(&created.wbs).map_err(Failure::usage)?;
        let document = CreateJson {
            entity: EntityRef::task(&wbs, &created.file_path),
            event_name: "task.created",
            wbs: &created.wbs,
            file_path: created.file_path.display().to_string(),
            name: &created.name,
            status: &created.status,
            template: &created.template,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        outln!(
            "Created task {}: {}",
            created.wbs,
            shown(state_dir, created)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn batch_create(args: BatchArgs, state_dir: &StateDir) -> CliResult {
    let tasks = read_batch(&args.file).map_err(Failure::usage)?;
    let created = create_tasks(state_dir, &args.folder, &tasks).map_err(create_failure)?;
    if args.json {
        let document = BatchJson {
            created: created.len(),
            wbs: created.iter().map(|c| c.wbs.clone()).collect(),
            parents_wired: Vec::new(),
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        outln!("Created {} task(s)", created.len());
        for c in &created {
            outln!("  {}  {}", c.wbs, shown(state_dir, c));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn shown(state_dir: &StateDir, created: &Created) -> String {
    created
        .file_path
        .strip_prefix(state_dir.project_root())
        .unwrap_or(&created.file_path)
        .display()
        .to_string()
}
