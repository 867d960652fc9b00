//! `spur trace RUN [--json] [--follow]`: a run's history from its journal (`--json`: the
//! journal records as an array, each with its seq; `--follow`: on as the run writes them).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use spur_engine::cost::{CostSource, Usage, UsageTotal};
use spur_engine::run::journal::{Event, JournalFormat, Record};
use spur_engine::run::runs_list::read_run;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: its id, a unique prefix of it, or `latest` (see `spur runs`).
    #[arg(value_name = "RUN")]
    run_id: String,
    /// Print the journal records as a JSON array (with --follow: one JSON object a line).
    #[arg(long)]
    json: bool,
    /// Keep printing records as the run writes them, until it finishes (Ctrl-C stops).
    #[arg(long)]
    follow: bool,
    /// The state directory (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
    #[command(flatten)]
    engine: super::engine::ReadEngineArgs,
}

/// The run `reference` names among the engine's runs: a full id as it is, `latest` (the
/// run sent last), or a prefix of exactly one run's id.
fn engine_run_id(ingress: &str, reference: &str) -> Result<String, Failure> {
    if spur_engine::run::RunId::parse(reference).is_ok() {
        return Ok(reference.to_owned());
    }
    let ids = spur_restate::client::runs(ingress)
        .map_err(|e| super::engine_run::engine_failure("cannot list the engine's runs", e))?;
    let matching: Vec<&String> = if reference == "latest" {
        ids.last().into_iter().collect()
    } else {
        ids.iter().filter(|id| id.starts_with(reference)).collect()
    };
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        found => Err(Failure::with_code(
            miette::miette!(
                code = spur_engine::diagnostic::Code::UsageEngine,
                help = "see `spur runs --engine restate` for the runs the engine knows",
                "{} run on the engine at {ingress} is `{reference}`",
                if found.is_empty() {
                    "no"
                } else {
                    "more than one"
                }
            ),
            exit::USAGE,
        )),
    }
}

/// The records of run `run_id` on the engine at `ingress`.
fn engine_records(ingress: &str, run_id: &str) -> Result<Vec<Record>, Failure> {
    let records = spur_restate::fleet_runs::run_records(ingress, run_id).map_err(|e| {
        super::engine_run::engine_failure(&format!("cannot read run {run_id} on the engine"), e)
    })?;
    records.ok_or_else(|| {
        Failure::with_code(
            miette::miette!(
                code = spur_engine::diagnostic::Code::UsageEngine,
                help = "see `spur runs --engine restate` for the runs the engine knows",
                "no run {run_id} on the engine at {ingress}"
            ),
            exit::USAGE,
        )
    })
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    if let Some(ingress) = args.engine.ingress(&state_dir)? {
        return run_on_engine(&args, &ingress);
    }
    let run_id = super::run_ref::resolve(&state_dir, &args.run_id)?;
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
    let run_dir = state_dir.runs_dir().join(run_id.to_string());
    print_records(&args, content.records, Some(&run_dir), || {
        read_run(&state_dir, &run_id)
            .map(|content| content.records)
            .map_err(|e| Failure::with_code(miette::Report::new(e), exit::USAGE))
    })
}

/// `spur trace` of a run on the engine: its records as the engine keeps them (the
/// engine's journal; action logs stay on the worker that ran them).
fn run_on_engine(args: &Args, ingress: &str) -> CliResult {
    let run_id = engine_run_id(ingress, &args.run_id)?;
    let records = engine_records(ingress, &run_id)?;
    print_records(args, records, None, || engine_records(ingress, &run_id))
}

/// Print `records` (JSON or a line each, then what the run spent); with `--follow`, read
/// them again with `reread` until the last one ends the run. (Polling: a journal is
/// appended by another process, and a few reads a second cost nothing.) Action logs are
/// named under `run_dir` when they are on this machine.
fn print_records(
    args: &Args,
    records: Vec<Record>,
    run_dir: Option<&Path>,
    mut reread: impl FnMut() -> Result<Vec<Record>, Failure>,
) -> CliResult {
    if args.json && !args.follow {
        outln!(
            "{}",
            serde_json::to_string_pretty(&records).unwrap_or_else(|_| "[]".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    let show = |r: &Record| {
        if args.json {
            outln!("{}", serde_json::to_string(r).unwrap_or_default());
        } else {
            outln!(
                "{:>4} {} {:<16} {}",
                r.seq,
                r.at,
                r.event.name(),
                describe(&r.event, run_dir)
            );
        }
    };
    records.iter().for_each(show);
    if !args.follow {
        let total = spur_engine::run::runs_list::run_usage(&records);
        if total.steps > 0 {
            outln!("spent: {}", total_text(&total));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut shown = records.last().map_or(0, |r| r.seq);
    let mut finished = ends_run(records.last());
    while !finished {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let records = reread()?;
        let before = shown;
        for r in records.iter().filter(|r| r.seq > before) {
            show(r);
            shown = r.seq;
        }
        finished = ends_run(records.last());
    }
    Ok(ExitCode::SUCCESS)
}

/// `1200 tokens (in 1000, cached 200, out 200), $0.0100 in 2 steps`.
pub(crate) fn total_text(total: &UsageTotal) -> String {
    format!(
        "{} tokens (in {}, cached {}, out {}), {} in {} step{}",
        total.tokens(),
        total.input_tokens,
        total.cached_tokens,
        total.output_tokens,
        total.cost_text(),
        total.steps,
        if total.steps == 1 { "" } else { "s" }
    )
}

/// One step's spend: `1200 tokens, $0.0100 (claude-sonnet-4-5)`.
fn spent(usage: &Usage) -> String {
    let cost = match (usage.cost_usd, usage.cost_source) {
        (Some(c), Some(CostSource::Priced)) => format!(", ${c:.4} priced"),
        (Some(c), _) => format!(", ${c:.4}"),
        (None, _) => String::new(),
    };
    let model = usage
        .model
        .as_deref()
        .map(|m| format!(" {m}"))
        .unwrap_or_default();
    format!("{} tokens{cost}{model}", usage.tokens())
}

/// Whether `last` is the record that ends a run (a later `spur retry` may go on with it).
fn ends_run(last: Option<&Record>) -> bool {
    matches!(last.map(|r| &r.event), Some(Event::RunFinished { .. }))
}

/// One line on what `event` says, after its name.
/// `run_dir`: the run's directory, which action logs are shown under (relative to the
/// current directory when they are beneath it).
pub(crate) fn describe(event: &Event, run_dir: Option<&Path>) -> String {
    match event {
        Event::RunStarted {
            pipeline_name,
            wbs,
            worktree,
            ..
        } => {
            format!(
                "{pipeline_name}{}{}",
                wbs.as_deref()
                    .map(|w| format!(" wbs={w}"))
                    .unwrap_or_default(),
                worktree
                    .as_ref()
                    .map(|w| format!(" worktree={} branch={}", w.path, w.branch))
                    .unwrap_or_default()
            )
        }
        Event::StateEntered { state, iteration } => format!("{state} (iteration {iteration})"),
        Event::ActionStarted {
            state,
            index,
            kind,
            log,
            ..
        } => format!(
            "{state}[{index}] {kind}{}",
            log.as_deref()
                .map(|l| match run_dir {
                    Some(dir) => format!(" (log {})", super::run_failure::shown_path(&dir.join(l))),
                    None => format!(" (log {l})"),
                })
                .unwrap_or_default()
        ),
        Event::ActionProcess {
            state, index, pgid, ..
        } => format!("{state}[{index}] process group {pgid}"),
        Event::ActionFinished {
            state,
            index,
            kind,
            ok,
            error,
            message,
            exit_code,
            duration_ms,
            timed_out,
            usage,
            commit,
            ..
        } => {
            let what = if *timed_out {
                "timed out"
            } else if *ok {
                "ok"
            } else {
                "failed"
            };
            let said = error
                .as_deref()
                .or(message.as_deref())
                .map(|e| format!(": {}", super::run_failure::without_kind(kind, e)))
                .unwrap_or_default();
            let code = match exit_code {
                Some(c) if *c != 0 && !said.contains("code") => format!(" (exit {c})"),
                _ => String::new(),
            };
            let spent = usage
                .as_ref()
                .map(|u| format!(" [{}]", spent(u)))
                .unwrap_or_default();
            // A fleet run's tree after the action, short as git shows it.
            let tree = commit
                .as_deref()
                .map(|c| format!(" → {}", c.get(..12).unwrap_or(c)))
                .unwrap_or_default();
            format!(
                "{state}[{index}] {kind} {what} in {}{spent}{tree}{said}{code}",
                duration(*duration_ms)
            )
        }
        Event::GuardEvaluated {
            state,
            to,
            kind,
            passed,
            detail,
            ..
        } => {
            format!(
                "{state} → {to} {kind} {}{}",
                if *passed { "passed" } else { "did not pass" },
                detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
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
        Event::Retried {
            state,
            force_done_reason,
            ..
        } => format!(
            "re-enters {state}{}",
            force_done_reason
                .as_deref()
                .map(|r| format!(" (--force-done: {r})"))
                .unwrap_or_default()
        ),
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

/// A duration for people: milliseconds under a second, else seconds.
fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.2}s", ms as f64 / 1000.0)
    }
}
