//! `spur task …`: a task's status. `update` moves it (to done only through the done gate),
//! `certify` runs the gate for done, `show` prints the status, its history and whether it
//! is certified, `verify-certs` checks the done certificates in the repository. Other task
//! subcommands add a variant to [`TaskCommand`] and live in their own file.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::done_gate::{ForceReason, GateDecision};
use spur_engine::store::audit::current_user;
use spur_engine::store::certification::{self, Certification, LedgerSummary, ViewSummary};
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::{self, ChangeContext, Status, StatusChange};
use spur_engine::store::task_view::{ChangeVia, HistoryEntry};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_certify::{certify_done, Outcome};
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TaskCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum TaskCommand {
    /// Set a task's status; done goes through the done gate.
    Update(UpdateArgs),
    /// Certify a task done through the done gate (or adopt it, audited, with --force-done).
    Certify(super::task_certify::Args),
    /// Show a task's status, history and certification.
    Show(ShowArgs),
    /// Derive the verdict artifact from the verifier's answer file.
    Verdict(super::task_verdict::Args),
    /// Check that every task file claiming done has a valid signed done certificate.
    VerifyCerts(super::task_verify_certs::Args),
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
        TaskCommand::Certify(certify_args) => super::task_certify::run(certify_args, &state_dir),
        TaskCommand::Show(show_args) => show(show_args, &state_dir),
        TaskCommand::Verdict(verdict_args) => super::task_verdict::run(verdict_args, &state_dir),
        TaskCommand::VerifyCerts(args) => super::task_verify_certs::run(args, &state_dir),
    }
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
    let Some(open) = open else {
        let outcome = certify_done(state_dir, &wbs, force.as_ref())?;
        return Ok(outcome.render(&wbs, args.json));
    };
    // Read, decide and append under the data lock: no other writer of the task between.
    let lock =
        DataLock::acquire(state_dir, &wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let current = task_status::current_status(state_dir, &wbs).map_err(Failure::usage)?;
    let user = current_user();
    let context = ChangeContext {
        user: &user,
        run_id: None,
        time: spur_engine::store::timestamp::now(),
    };
    let noop = open.status() == &current;
    let record = task_status::record_change(&lock, state_dir, StatusChange::To(open), &context)
        .map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let outcome = if noop {
        Outcome {
            decision: GateDecision::Noop,
            reason: None,
            verdict: None,
            message: format!("task {wbs} is already {current}; nothing to do"),
            status: current.to_string(),
            certificate: None,
        }
    } else {
        Outcome {
            decision: GateDecision::Allow,
            reason: None,
            verdict: None,
            message: format!("task {wbs}: {current} → {}", record.status),
            status: record.status.to_string(),
            certificate: None,
        }
    };
    Ok(outcome.render(&wbs, args.json))
}

/// The `--json` document of `show`, fields in the documented order.
#[derive(serde::Serialize)]
struct ShowJson<'a> {
    wbs: &'a str,
    status: &'a Status,
    history: &'a [HistoryEntry],
    certification: Certification,
    detail: Option<&'a str>,
    ledger: &'a LedgerSummary,
    view: &'a ViewSummary,
}

fn show(args: ShowArgs, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let check = certification::check(state_dir, &wbs);
    let status = &check.record.status;
    let history = &check.record.history;
    if args.json {
        let document = ShowJson {
            wbs: wbs.as_str(),
            status,
            history,
            certification: check.certification,
            detail: check.detail.as_deref(),
            ledger: &check.ledger,
            view: &check.view,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if check.certification == Certification::Unverifiable {
        // Its records' claims cannot be checked: no status is shown as if it were one.
        outln!("task {wbs}: unverifiable");
    } else {
        outln!("task {wbs}: {status}");
    }
    let detail = check.detail.as_deref().unwrap_or_default();
    match check.certification {
        Certification::Certified => {
            outln!("  certified: the task ledger's last record is done");
        }
        Certification::Uncertified => {
            outln!("  uncertified: {detail}");
            outln!(
                "  certify it with `spur task certify {wbs}` (runs the done gate), or adopt it \
                 with `spur task certify {wbs} --force-done --reason \"why\"` (audited)"
            );
        }
        Certification::Tampered if check.ledger.intact => {
            outln!("  tampered: {detail}");
            outln!(
                "  the task ledger is the status; the next status change rewrites the view from \
                 it (`spur task update {wbs} {status}` does so without changing it)"
            );
        }
        Certification::Tampered => {
            outln!("  tampered: {detail}");
            outln!(
                "  spur neither reads a status from this ledger nor appends to it: restore it \
                 from a copy (git)"
            );
        }
        Certification::Unverifiable => {
            outln!("  unverifiable: {detail}");
            outln!(
                "  not tampered, not verified: spur neither reads a status from this ledger nor \
                 appends to it until the key that sealed it is back (`spur key show` says where \
                 spur looks for it)"
            );
        }
        Certification::None if !detail.is_empty() => outln!("  note: {detail}"),
        Certification::None => {}
    }
    if history.is_empty() && check.certification != Certification::Unverifiable {
        outln!("  no status changes recorded");
    }
    for entry in history {
        let how = match &entry.via {
            ChangeVia::Update => "update".to_owned(),
            ChangeVia::DoneGatePass => "done gate: verdict PASS".to_owned(),
            ChangeVia::DoneGateExternal => {
                "done gate: verdict PASS in an artifact written outside spur (externalVerdicts: allow)"
                    .to_owned()
            }
            ChangeVia::ForcedOverride { reason, .. } => {
                format!("forced override: {reason:?}")
            }
        };
        let run = entry
            .run_id
            .as_deref()
            .map(|id| format!(" in run {id}"))
            .unwrap_or_default();
        outln!(
            "  {}  {} → {}  by {}{run} ({how})",
            entry.time,
            entry.from,
            entry.to,
            entry.user
        );
    }
    Ok(ExitCode::SUCCESS)
}
