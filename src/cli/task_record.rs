//! `spur task record WBS [--verdict-file F] [--solution-from-diff] [--transition STATUS]
//! [--no-lifecycle] [--json]`: write the verify results into the task file (see
//! `task::record`; the boxes of the requirements it proves are ticked), then optionally change the status as `spur task update` does. The
//! sections are written even when the change is then refused (exit 1).

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::done_gate::GateDecision;
use spur_engine::store::audit::current_user;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::ChangeContext;
use spur_engine::task::file_status::reconcile;
use spur_engine::task::record::{
    is_record_review, proven_box_edits, render_review, render_solution_from_diff, render_testing,
    section_is_bare,
};
use spur_engine::task_file::{locate_task_file, TaskDocument};
use spur_engine::verdict::read_artifact;
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_section::stamp_updated_at;
use super::task_status_change::{change_status, ChangeRequest};
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs).
    wbs: String,
    /// The verdict artifact (default: .spur/run/<wbs>-verdict.json).
    #[arg(long, value_name = "FILE")]
    verdict_file: Option<PathBuf>,
    /// Fill an empty Solution with the `file:line` of each change (`git diff -U0 HEAD`,
    /// untracked files at line 1).
    #[arg(long)]
    solution_from_diff: bool,
    /// Then change the status (as `spur task update WBS STATUS`).
    #[arg(long, value_name = "STATUS")]
    transition: Option<String>,
    /// With --transition: do not check it against the lifecycle graph (never skips the
    /// structural check or the done gate).
    #[arg(long)]
    no_lifecycle: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The reference's record result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordJson {
    testing_written: bool,
    review_written: bool,
    solution_backfilled: bool,
    boxes_ticked: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    transitioned_to: Option<String>,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let root = state_dir.project_root();
    let path = locate_task_file(&wbs, None, root, state_dir).map_err(Failure::usage)?;
    let verdict_path = args
        .verdict_file
        .clone()
        .unwrap_or_else(|| state_dir.verdict_path(&wbs));
    let verdict = read_artifact(&verdict_path);
    // The diff is taken before the lock: git may take a while, the lock is short.
    let solution = if args.solution_from_diff
        && section_is_bare(
            TaskDocument::read(&path)
                .map_err(Failure::usage)?
                .section_body("Solution"),
        ) {
        let state_rel = state_dir.root().strip_prefix(root).ok();
        Some(render_solution_from_diff(root, state_rel))
    } else {
        None
    };
    let lock =
        DataLock::acquire(state_dir, &wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let mut document = TaskDocument::read(&path).map_err(Failure::usage)?;
    if document.status_text().is_some() {
        let user = current_user();
        let context = ChangeContext {
            user: &user,
            run_id: None,
            time: spur_engine::store::timestamp::now(),
        };
        if let Err(e) = reconcile(&lock, state_dir, &document, &context) {
            eprintln!("warning: {e}");
        }
    }
    let ticks = proven_box_edits(&document, &verdict);
    document = document.apply_edits(&ticks).map_err(Failure::usage)?;
    document = document
        .replace_section("Testing", &render_testing(&verdict))
        .map_err(Failure::usage)?
        .document;
    let review = document.section_body("Review");
    let review_written = section_is_bare(review) || is_record_review(review);
    if review_written {
        document = document
            .replace_section("Review", &render_review(&verdict))
            .map_err(Failure::usage)?
            .document;
    }
    let mut solution_backfilled = false;
    if let Some(solution) = solution {
        if section_is_bare(document.section_body("Solution")) {
            document = document
                .replace_section("Solution", &solution)
                .map_err(Failure::usage)?
                .document;
            solution_backfilled = true;
        }
    }
    stamp_updated_at(document)
        .map_err(Failure::usage)?
        .write()
        .map_err(|e| Failure::with_code(e, exit::FAILED))?;
    drop(lock);

    let mut transitioned_to = None;
    let mut denied = None;
    if let Some(status) = args.transition.as_deref() {
        let outcome = change_status(
            state_dir,
            &ChangeRequest {
                wbs: &wbs,
                status,
                force: None,
                no_lifecycle: args.no_lifecycle,
            },
        )?;
        if outcome.decision == GateDecision::Deny {
            denied = Some(outcome.message);
        } else {
            transitioned_to = Some(outcome.status);
        }
    }
    if let Some(message) = &denied {
        eprintln!("denied: {message}");
    }
    if args.json {
        let document = RecordJson {
            testing_written: true,
            review_written,
            solution_backfilled,
            boxes_ticked: ticks.len(),
            transitioned_to,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        let mut parts = vec!["Testing written".to_owned()];
        if review_written {
            parts.push("Review written".to_owned());
        }
        if solution_backfilled {
            parts.push("Solution backfilled".to_owned());
        }
        if !ticks.is_empty() {
            parts.push(format!(
                "{} box{} ticked",
                ticks.len(),
                if ticks.len() == 1 { "" } else { "es" }
            ));
        }
        if let Some(status) = &transitioned_to {
            parts.push(format!("{wbs} → {status}"));
        }
        outln!("{}", parts.join(", "));
    }
    Ok(ExitCode::from(if denied.is_some() {
        exit::FAILED
    } else {
        exit::SUCCESS
    }))
}
