//! `spur lifecycle request PIPELINE --entity KIND:ID --to STATE [--from STATE] [--var k=v]…
//! [--force-done --reason R] [--json]`: ask an entity's lifecycle instance to move; the
//! pipeline's guards decide (and the done gate, for a task's done). `spur lifecycle show
//! PIPELINE --entity KIND:ID [--json]`: where the instance stands and its history.
//! Exit 0 allowed (or already there), 1 refused, 2 bad usage, 4 the instance cannot be used.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::lifecycle::{
    self, EntityKey, LifecycleError, RequestOutcome, TransitionAnswer, TransitionRequest,
};
use spur_engine::run::{DenialReason, TaskDoneGate};

use super::failure::exit;
use super::run::{load_checked, CommonRunArgs};
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: LifecycleCommand,
}

#[derive(Debug, clap::Subcommand)]
enum LifecycleCommand {
    /// Ask the entity's instance to move into a state; its guards decide.
    Request(RequestArgs),
    /// Show where the entity's instance stands and its history.
    Show(ShowArgs),
}

#[derive(Debug, clap::Args)]
struct RequestArgs {
    /// The lifecycle pipeline file (e.g. task-lifecycle.yaml).
    #[arg(value_name = "PIPELINE")]
    pipeline: PathBuf,
    /// The entity: task:<wbs> (binds the var `wbs`) or feature:<id> (binds `featureId`).
    #[arg(long, value_name = "KIND:ID")]
    entity: String,
    /// The state asked for.
    #[arg(long, value_name = "STATE")]
    to: String,
    /// The entity's status as its file says (not for a task: its ledger is its status);
    /// the instance is re-seeded to it first.
    #[arg(long, value_name = "STATE")]
    from: Option<String>,
    /// Set a var for the guards (repeatable; the entity's var is the entity's).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Certify the task done even if the verdict is not PASS (needs --reason; audited).
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why --force-done is justified (written to the audit log).
    #[arg(long, value_name = "R", requires = "force_done")]
    reason: Option<String>,
    #[command(flatten)]
    common: CommonRunArgs,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The lifecycle pipeline file.
    #[arg(value_name = "PIPELINE")]
    pipeline: PathBuf,
    /// The entity: task:<wbs> or feature:<id>.
    #[arg(long, value_name = "KIND:ID")]
    entity: String,
    #[command(flatten)]
    common: CommonRunArgs,
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        LifecycleCommand::Request(args) => request(args),
        LifecycleCommand::Show(args) => show(args),
    }
}

fn failure(e: LifecycleError) -> Failure {
    let code = if e.is_usage() {
        exit::USAGE
    } else {
        exit::CANNOT_START
    };
    Failure::with_code(miette::Report::new(e), code)
}

fn request(args: RequestArgs) -> CliResult {
    let entity = EntityKey::parse(&args.entity).map_err(|e| failure(e.into()))?;
    let force_done_reason = super::run::force_done_reason(args.force_done, args.reason)?;
    let checked = load_checked(&args.pipeline)?;
    let state_dir = args.common.state_dir()?;
    let settings = args.common.settings(state_dir)?;
    let pipeline_path = std::fs::canonicalize(&args.pipeline).unwrap_or(args.pipeline.clone());
    let answer = lifecycle::request_transition(
        &TransitionRequest {
            pipeline: &checked,
            pipeline_path,
            entity,
            to: args.to,
            current: args.from,
            vars: args.vars,
            force_done_reason,
            structural_check: None,
        },
        &settings,
        &mut TaskDoneGate,
    )
    .map_err(failure)?;
    render(&answer, args.common.json)
}

fn render(answer: &TransitionAnswer, json: bool) -> CliResult {
    let denied = answer.outcome == RequestOutcome::Denied;
    if json {
        let text = serde_json::to_string_pretty(answer).unwrap_or_else(|_| "{}".into());
        outln!("{text}");
        let code = if denied { exit::FAILED } else { exit::SUCCESS };
        return Ok(ExitCode::from(code));
    }
    let who = format!("{} ({})", answer.entity, answer.pipeline);
    if let Some([from, to]) = &answer.reseeded {
        outln!("{who}: re-seeded {from} → {to} from the entity's status");
    }
    match (&answer.outcome, &answer.denied) {
        (RequestOutcome::Allowed, _) => outln!("{who}: {} → {}", answer.from, answer.to),
        (RequestOutcome::Unchanged, _) => outln!("{who}: already {}; nothing to do", answer.to),
        (RequestOutcome::Denied, Some(denial)) => {
            let help = match denial.reason {
                DenialReason::NoSuchTransition => {
                    "the pipeline's transitions are its lifecycle: request a state they lead to"
                        .to_owned()
                }
                DenialReason::GuardFailed => format!(
                    "the pipeline's guard decides; `spur lifecycle show PIPELINE --entity {}` shows every request and what its guards said",
                    answer.entity
                ),
                DenialReason::CheckFailed => {
                    "run `spur task check WBS --as STATUS` to see each finding in place".to_owned()
                }
                DenialReason::DoneGateDenied => {
                    "re-verify the task (`spur verify --wbs WBS`), or pass --force-done --reason \"why\" (audited)"
                        .to_owned()
                }
            };
            return Err(Failure::with_code(
                miette::miette!(
                    code = Code::LifecycleDenied,
                    help = help,
                    "{who}: {} → {} refused ({}): {}",
                    answer.from,
                    answer.to,
                    denial.reason.as_str(),
                    denial.detail
                ),
                exit::FAILED,
            ));
        }
        (RequestOutcome::Denied, None) => outln!("{who}: {} → {} refused", answer.from, answer.to),
    }
    if let Some(status) = &answer.task_status {
        outln!("  task status: {status}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--json` document of `show`.
#[derive(serde::Serialize)]
struct ShowJson<'a> {
    entity: &'a str,
    pipeline: &'a str,
    state: Option<&'a str>,
    journal: String,
    records: &'a [spur_engine::run::journal::Record],
}

fn show(args: ShowArgs) -> CliResult {
    let entity = EntityKey::parse(&args.entity).map_err(|e| failure(e.into()))?;
    let checked = load_checked(&args.pipeline)?;
    let state_dir = args.common.state_dir()?;
    let view = lifecycle::show(&state_dir, &checked, &entity).map_err(failure)?;
    if args.common.json {
        let doc = ShowJson {
            entity: &view.entity,
            pipeline: &view.pipeline,
            state: view.state.as_deref(),
            journal: view.journal.display().to_string(),
            records: &view.records,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    match &view.state {
        Some(state) => outln!("{} ({}): {state}", view.entity, view.pipeline),
        None => {
            outln!(
                "{} ({}): no instance yet (it starts in {})",
                view.entity,
                view.pipeline,
                checked.pipeline().initial_state.value
            );
            return Ok(ExitCode::SUCCESS);
        }
    }
    for r in &view.records {
        outln!(
            "{:>4} {} {:<20} {}",
            r.seq,
            r.at,
            r.event.name(),
            super::trace::describe(&r.event, None)
        );
    }
    Ok(ExitCode::SUCCESS)
}
