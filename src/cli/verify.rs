//! `spur verify [--gate NAME] [--wbs W] [--json]` runs the verify gates;
//! `spur verify history [WBS] [--json]` shows the verdict ledger with flips marked;
//! `spur verify fingerprint [--json]` prints the tree fingerprint verify records.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::store::state_dir::StateDir;
use spur_engine::tree;
use spur_engine::verify::ledger::Ledger;
use spur_engine::verify::{run_gates, VerifyError, VerifyRequest, VerifyScope};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    /// Run only this gate (its needs are not run).
    #[arg(long, value_name = "NAME")]
    gate: Option<String>,
    /// The task: evidence, report and ledger are kept per task and the gate results are
    /// merged into `.spur/run/<WBS>-verdict.json`. Without it: project-wide, no verdict.
    #[arg(long, value_name = "WBS")]
    wbs: Option<String>,
    /// Print the outcome as one JSON document.
    #[arg(long)]
    json: bool,
    /// The state directory (default: the nearest `.spur/`).
    #[arg(long, value_name = "DIR", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Show the verdict ledger of a task (or of the project), flips marked.
    History(HistoryArgs),
    /// Print the fingerprint of the project tree that verify records and the done gate
    /// compares (to see whether, and when, the tree changed since a verify run).
    Fingerprint(FingerprintArgs),
}

#[derive(Debug, clap::Args)]
struct FingerprintArgs {
    #[arg(long)]
    json: bool,
    #[arg(long, value_name = "DIR", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct HistoryArgs {
    /// The task; without it, the project-wide ledger.
    wbs: Option<String>,
    #[arg(long)]
    json: bool,
    #[arg(long, value_name = "DIR", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        Some(Sub::History(history_args)) => history(history_args),
        Some(Sub::Fingerprint(fingerprint_args)) => fingerprint(fingerprint_args),
        None => verify(args),
    }
}

fn state_dir(explicit: Option<&PathBuf>) -> Result<StateDir, Failure> {
    let cwd = std::env::current_dir().map_err(|e| {
        Failure::usage(miette::miette!(
            code = Code::UsageCwd,
            "cannot read the current directory: {e}"
        ))
    })?;
    let state_dir = StateDir::resolve(explicit.map(PathBuf::as_path), &cwd);
    // Gates run sandboxed (ARCHITECTURE.md, *Sandbox*); a run says when that is off.
    spur_engine::sandbox::confine_steps(&state_dir);
    Ok(state_dir)
}

fn parse_wbs(wbs: Option<&String>) -> Result<Option<Wbs>, Failure> {
    wbs.map(|w| Wbs::parse(w).map_err(Failure::usage))
        .transpose()
}

fn verify(args: Args) -> CliResult {
    let state = state_dir(args.state_dir.as_ref())?;
    // Verify reads its gates from `.spur/config.yaml`: with no state directory found there
    // is nothing to run, and nothing is written. One named with --state-dir is made.
    if args.state_dir.is_none() && !state.root().is_dir() {
        return Err(Failure::usage(miette::miette!(
            code = Code::UsageNoStateDir,
            help = "`spur init` makes one (with verify gates in .spur/config.yaml); or name one with --state-dir",
            "no state directory: {} does not exist, and none was found above {}",
            state.root().display(),
            state.project_root().display()
        )));
    }
    let wbs = parse_wbs(args.wbs.as_ref())?;
    let policy = super::run_policy::policy_for(&state, wbs.as_ref())?;
    let mut request = VerifyRequest::new(state.clone());
    request.wbs = wbs;
    request.policy = policy;
    request.gate = args.gate;
    let outcome = match run_gates(&request) {
        Ok(outcome) => outcome,
        Err(e) => {
            if let (true, VerifyError::Config(config)) = (args.json, &e) {
                // The same flat form as `spur check --format json`.
                let doc = serde_json::json!({ "errors": config.to_json() });
                outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            }
            if !args.json && matches!(e, VerifyError::Config(_)) {
                return Err(super::config_errors::config_failure(
                    &state,
                    miette::Report::new(e),
                ));
            }
            let code = if e.is_usage() {
                exit::USAGE
            } else if e.is_busy() {
                exit::CANNOT_START
            } else {
                exit::FAILED
            };
            return Err(Failure::with_code(miette::Report::new(e), code));
        }
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&outcome).unwrap_or_default()
        );
    } else {
        out!("{}", outcome.markdown);
        eprintln!("report: {}", outcome.report);
        if let Some(verdict) = &outcome.verdict {
            eprintln!("verdict: {verdict} (gate rows merged into checks[])");
        }
        if let Some(fingerprint) = &outcome.fingerprint {
            eprintln!("tree: {fingerprint} (the results are recorded for this tree)");
        }
        if !outcome.tree_changed_by.is_empty() {
            eprintln!(
                "warning: the tree changed while the gates ran (gates that could have changed it: {}); the done gate will not count this run: run spur verify again",
                outcome.tree_changed_by.join(", ")
            );
        }
    }
    for warning in &outcome.warnings {
        eprintln!("warning[{}]: {}", warning.code, warning.message);
    }
    for problem in &outcome.problems {
        eprintln!("error[{}]: {}", problem.code, problem.message);
    }
    if outcome.summary.ran() == 0 {
        eprintln!("warning: no gate ran; nothing was verified");
    }
    Ok(ExitCode::from(if outcome.passed {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}

fn fingerprint(args: FingerprintArgs) -> CliResult {
    let state = state_dir(args.state_dir.as_ref())?;
    let policy = super::run_policy::policy_for(&state, None)?;
    let excludes = tree::policy_excludes(&state, &policy)
        .map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let print = tree::fingerprint(state.project_root(), state.root(), &excludes)
        .map_err(|e| Failure::with_code(miette::Report::new(e), exit::FAILED))?;
    if args.json {
        let doc = serde_json::json!({ "fingerprint": print.hex, "entries": print.entries });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        outln!("{}  {} entries", print.hex, print.entries);
    }
    Ok(ExitCode::SUCCESS)
}

fn history(args: HistoryArgs) -> CliResult {
    let state = state_dir(args.state_dir.as_ref())?;
    let wbs = parse_wbs(args.wbs.as_ref())?;
    let scope = VerifyScope::new(&state, wbs.as_ref());
    let ledger = Ledger::at(scope.ledger_path());
    let contents = ledger
        .read()
        .map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let shown = ledger
        .path()
        .strip_prefix(state.project_root())
        .unwrap_or(ledger.path())
        .display()
        .to_string();
    let flips = contents.entries.iter().filter(|e| e.flip).count();
    if args.json {
        let doc = serde_json::json!({
            "ledger": shown,
            "task": wbs.as_ref().map(Wbs::as_str),
            "entries": contents.entries,
            "flips": flips,
            "unreadableLines": contents.unreadable_lines,
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    let subject = wbs
        .as_ref()
        .map_or_else(|| "project".to_owned(), |w| format!("task {w}"));
    let mut out = format!("# Verdict ledger — {subject}\n\n`{shown}`\n\n");
    if contents.entries.is_empty() {
        out.push_str("No verdicts recorded yet: run `spur verify`.\n");
    } else {
        out.push_str("| Run | Criterion | Verdict | Confidence | Re-probed | Flip | At |\n|---|---|---|---|---|---|---|\n");
        for e in &contents.entries {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                e.run,
                e.criterion,
                e.verdict,
                e.confidence,
                if e.reprobed { "yes" } else { "no" },
                if e.flip { "**FLIP**" } else { "" },
                e.at
            );
        }
        let _ = writeln!(
            out,
            "\n{} verdicts, {flips} flip{}.",
            contents.entries.len(),
            if flips == 1 { "" } else { "s" }
        );
    }
    if contents.unreadable_lines > 0 {
        let _ = writeln!(
            out,
            "\n{} unreadable line(s) skipped (a torn write or a hand edit).",
            contents.unreadable_lines
        );
    }
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}
