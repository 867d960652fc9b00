//! `spur trace RUN [--json]`: a run's history from its journal (`--json`: the journal
//! records as an array, each with its seq).

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::run::journal::{Event, JournalFormat};
use spur_engine::run::runs_list::read_run;
use spur_engine::run::RunId;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see `spur runs`).
    #[arg(value_name = "RUN")]
    run_id: String,
    /// Print the journal records as a JSON array.
    #[arg(long)]
    json: bool,
    /// The state directory (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    let run_id = RunId::parse(&args.run_id).map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let content = read_run(&state_dir, &run_id)
        .map_err(|e| Failure::with_code(miette::Report::new(e), exit::USAGE))?;
    // Shown all the same: what the journal says, with what cannot be vouched for.
    match (&content.format, &content.unverifiable) {
        (JournalFormat::Current, Some(u)) => eprintln!(
            "note: this journal cannot be verified from seq {}: {}",
            u.seq, u.why
        ),
        (JournalFormat::Unkeyed, _) => eprintln!(
            "note: this journal is not sealed with a key (format 1): nothing shows it was not rewritten"
        ),
        _ => {}
    }
    let records = content.records;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&records).unwrap_or_else(|_| "[]".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    for r in &records {
        outln!(
            "{:>4} {} {:<16} {}",
            r.seq,
            r.at,
            r.event.name(),
            describe(&r.event)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One line on what `event` says, after its name.
pub(crate) fn describe(event: &Event) -> String {
    match event {
        Event::RunStarted {
            pipeline_name, wbs, ..
        } => {
            format!(
                "{pipeline_name}{}",
                wbs.as_deref()
                    .map(|w| format!(" wbs={w}"))
                    .unwrap_or_default()
            )
        }
        Event::StateEntered { state, iteration } => format!("{state} (iteration {iteration})"),
        Event::ActionStarted {
            state, index, kind, ..
        } => format!("{state}[{index}] {kind}"),
        Event::ActionProcess {
            state, index, pgid, ..
        } => format!("{state}[{index}] process group {pgid}"),
        Event::ActionFinished {
            state,
            index,
            kind,
            ok,
            error,
            ..
        } => format!(
            "{state}[{index}] {kind} {}{}",
            if *ok { "ok" } else { "failed" },
            error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        Event::GuardEvaluated {
            state,
            to,
            kind,
            passed,
            ..
        } => {
            format!(
                "{state} → {to} {kind} {}",
                if *passed { "passed" } else { "did not pass" }
            )
        }
        Event::Transition {
            from,
            to,
            iteration,
            ..
        } => format!("{from} → {to} (#{iteration})"),
        Event::Paused { state, prompt, .. } => format!(
            "{state}{}",
            prompt
                .as_deref()
                .map(|p| format!(": {p}"))
                .unwrap_or_default()
        ),
        Event::Resumed {
            answer,
            force_done_reason,
            ..
        } => {
            let answer = answer.as_deref().map(|a| format!("answer {a}"));
            let forced = force_done_reason
                .as_deref()
                .map(|r| format!("--force-done: {r}"));
            [answer, forced]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", ")
        }
        Event::DoneGate {
            decision, verdict, ..
        } => format!("{decision} {}", verdict.as_deref().unwrap_or("")),
        Event::Interrupted { state } => state.clone(),
        Event::LifecycleBound { entity } => entity.clone(),
        Event::TransitionRequested {
            state,
            to,
            force_done_reason,
            ..
        } => format!(
            "{state} → {to}{}",
            force_done_reason
                .as_deref()
                .map(|r| format!(" (--force-done: {r})"))
                .unwrap_or_default()
        ),
        Event::Reseeded { from, to } => format!("{from} → {to} (from the entity's status)"),
        Event::TransitionDenied {
            state,
            to,
            reason,
            detail,
        } => format!("{state} → {to} refused ({}): {detail}", reason.as_str()),
        Event::RunFinished {
            outcome,
            state,
            terminal_reason,
            reason,
            ..
        } => {
            format!(
                "{outcome} at {state} ({}, {reason})",
                terminal_reason.as_str()
            )
        }
    }
}
