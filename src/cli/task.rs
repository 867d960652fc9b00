//! `spur task …`: a task's status. `update` moves it (to done only through the done gate),
//! `show` prints it with its history. Other task subcommands add a variant to
//! [`TaskCommand`] and live in their own file.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::done_gate::{
    evaluate_done_transition, DoneDecision, DoneRequest, ForceReason, GateDecision,
};
use spur_engine::store::audit::current_user;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::{self, ChangeContext, ChangeVia, Status, StatusChange};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TaskCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true)]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum TaskCommand {
    /// Set a task's status; done goes through the done gate.
    Update(UpdateArgs),
    /// Show a task's status and history.
    Show(ShowArgs),
    /// Derive the verdict artifact from the verifier's answer file.
    Verdict(super::task_verdict::Args),
}

#[derive(Debug, clap::Args)]
struct UpdateArgs {
    /// The task id (wbs).
    wbs: String,
    /// The new status: done, or any other lower-case word (todo, in-progress, blocked, …).
    status: String,
    /// Mark done whatever the verdict says; recorded in the audit log. Needs --reason.
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why the override is justified (non-empty).
    #[arg(long, requires = "force_done")]
    reason: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The task id (wbs).
    wbs: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    match args.command {
        TaskCommand::Update(update_args) => update(update_args, &state_dir),
        TaskCommand::Show(show_args) => show(show_args, &state_dir),
        TaskCommand::Verdict(verdict_args) => super::task_verdict::run(verdict_args, &state_dir),
    }
}

/// What `update` did, for rendering.
#[derive(serde::Serialize)]
struct Outcome {
    decision: GateDecision,
    reason: Option<&'static str>,
    verdict: Option<String>,
    message: String,
    status: String,
}

/// The `--json` document of `update`, fields in the documented order.
#[derive(serde::Serialize)]
struct UpdateJson<'a> {
    wbs: &'a str,
    #[serde(flatten)]
    outcome: &'a Outcome,
}

fn update(args: UpdateArgs, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let to_done = Status::names_done(&args.status);
    let open = if to_done {
        None
    } else {
        Some(Status::open(&args.status).map_err(Failure::usage)?)
    };
    let force = match (&args.reason, args.force_done) {
        (Some(reason), true) => Some(ForceReason::new(reason.as_str()).map_err(Failure::usage)?),
        _ => None,
    };
    if force.is_some() && !to_done {
        return Err(Failure::usage(miette::miette!(
            code = Code::UsageForceDoneNeedsDone,
            help = "use `spur task update WBS done --force-done --reason \"why\"`",
            "--force-done applies only to the status done, not {:?}",
            args.status
        )));
    }
    let current = task_status::current_status(state_dir, &wbs).map_err(Failure::usage)?;
    let user = current_user();
    let context = ChangeContext {
        user: &user,
        run_id: None,
        time: spur_engine::store::timestamp::now(),
    };

    let outcome = match open {
        Some(open) => {
            if open.status() == &current {
                Outcome {
                    decision: GateDecision::Noop,
                    reason: None,
                    verdict: None,
                    message: format!("task {wbs} is already {current}; nothing to do"),
                    status: current.to_string(),
                }
            } else {
                let record =
                    task_status::record_change(state_dir, &wbs, StatusChange::To(open), &context)
                        .map_err(Failure::usage)?;
                Outcome {
                    decision: GateDecision::Allow,
                    reason: None,
                    verdict: None,
                    message: format!("task {wbs}: {current} → {}", record.status),
                    status: record.status.to_string(),
                }
            }
        }
        None => {
            let decision = evaluate_done_transition(&DoneRequest {
                wbs: &wbs,
                current: &current,
                force: force.as_ref(),
                state_dir,
                run_id: None,
                user: &user,
            });
            // The artifact's warnings (malformed artifact, self-inconsistent, other task)
            // are diagnostics: stderr, in every output mode.
            if let DoneDecision::Allow { evaluation, .. } | DoneDecision::Deny { evaluation, .. } =
                &decision
            {
                for warning in &evaluation.warnings {
                    eprintln!("warning[{}]: {}", warning.code, warning.message);
                }
            }
            match decision {
                DoneDecision::Noop { message } => Outcome {
                    decision: GateDecision::Noop,
                    reason: None,
                    verdict: None,
                    message,
                    status: current.to_string(),
                },
                DoneDecision::Allow {
                    reason,
                    done,
                    verdict,
                    message,
                    ..
                } => {
                    let record = task_status::record_change(
                        state_dir,
                        &wbs,
                        StatusChange::Done(&done),
                        &context,
                    )
                    .map_err(|e| Failure::with_code(e, exit::FAILED))?;
                    Outcome {
                        decision: GateDecision::Allow,
                        reason: Some(reason.as_str()),
                        verdict: Some(verdict.to_string()),
                        message,
                        status: record.status.to_string(),
                    }
                }
                DoneDecision::Deny {
                    verdict, message, ..
                } => Outcome {
                    decision: GateDecision::Deny,
                    reason: None,
                    verdict: Some(verdict.to_string()),
                    message,
                    status: current.to_string(),
                },
            }
        }
    };

    if args.json {
        let document = UpdateJson {
            wbs: wbs.as_str(),
            outcome: &outcome,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else if outcome.decision == GateDecision::Deny {
        eprintln!("denied: {}", outcome.message);
    } else {
        println!("{}", outcome.message);
    }
    Ok(ExitCode::from(if outcome.decision == GateDecision::Deny {
        exit::FAILED
    } else {
        exit::SUCCESS
    }))
}

#[derive(serde::Serialize)]
struct ShowJson<'a> {
    wbs: &'a str,
    status: &'a Status,
    history: &'a [task_status::HistoryEntry],
}

fn show(args: ShowArgs, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let record = task_status::load(state_dir, &wbs).map_err(Failure::usage)?;
    let status = record
        .as_ref()
        .map_or_else(Status::initial, |r| r.status.clone());
    let history = record.map(|r| r.history).unwrap_or_default();
    if args.json {
        let document = ShowJson {
            wbs: wbs.as_str(),
            status: &status,
            history: &history,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("task {wbs}: {status}");
    if history.is_empty() {
        println!("  no status changes recorded");
    }
    for entry in &history {
        let how = match &entry.via {
            ChangeVia::Update => "update".to_owned(),
            ChangeVia::DoneGatePass => "done gate: verdict PASS".to_owned(),
            ChangeVia::ForcedOverride { reason, .. } => {
                format!("forced override: {reason:?}")
            }
        };
        let run = entry
            .run_id
            .as_deref()
            .map(|id| format!(" in run {id}"))
            .unwrap_or_default();
        println!(
            "  {}  {} → {}  by {}{run} ({how})",
            entry.time, entry.from, entry.to, entry.user
        );
    }
    Ok(ExitCode::SUCCESS)
}
