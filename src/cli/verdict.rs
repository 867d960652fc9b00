//! `spur verdict check FILE [--wbs W] [--json]`: parse + aggregate one verdict artifact and
//! say what it certifies. Exit 0 only when the effective verdict is PASS.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::verdict::{read_artifact, Evaluation, OutcomeKind, Verdict, Warning};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: VerdictCommand,
}

#[derive(Debug, clap::Subcommand)]
enum VerdictCommand {
    /// Parse a verdict artifact, recompute its verdict, and report what it certifies.
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The verdict artifact (e.g. .spur/run/0592-verdict.json).
    file: PathBuf,
    /// The task the artifact should certify; another `wbs` in it makes it UNKNOWN.
    #[arg(long)]
    wbs: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        VerdictCommand::Check(args) => check(args),
    }
}

fn check(args: CheckArgs) -> CliResult {
    let wbs = args
        .wbs
        .as_deref()
        .map(Wbs::parse)
        .transpose()
        .map_err(Failure::usage)?;
    let outcome = read_artifact(&args.file);
    let evaluation = Evaluation::new(&args.file, outcome, wbs.as_ref().map(Wbs::as_str));
    if args.json {
        outln!("{}", render_json(&evaluation));
    } else {
        for warning in &evaluation.warnings {
            eprintln!("warning[{}]: {}", warning.code, warning.message);
        }
        out!("{}", render_text(&evaluation));
    }
    Ok(ExitCode::from(if evaluation.effective == Verdict::Pass {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}

fn row_counts(evaluation: &Evaluation) -> (usize, usize, usize) {
    evaluation.outcome.artifact().map_or((0, 0, 0), |a| {
        (
            a.requirements.len(),
            a.acceptance_criteria.len(),
            a.checks.len(),
        )
    })
}

/// The `--json` document, fields in the documented order.
#[derive(serde::Serialize)]
struct CheckJson<'a> {
    path: String,
    outcome: OutcomeKind,
    reason: Option<String>,
    stored: Option<Verdict>,
    computed: Option<Verdict>,
    effective: Verdict,
    warnings: &'a [Warning],
    rows: RowsJson,
    /// The rules that fired, as the human output lists them.
    fired: &'a [spur_engine::verdict::aggregate::FiredRule],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RowsJson {
    requirements: usize,
    acceptance_criteria: usize,
    checks: usize,
}

fn render_json(evaluation: &Evaluation) -> String {
    let (requirements, acceptance_criteria, checks) = row_counts(evaluation);
    let document = CheckJson {
        path: evaluation.path.display().to_string(),
        outcome: evaluation.kind(),
        reason: evaluation.outcome.reason(),
        stored: evaluation.stored,
        computed: evaluation.computed_verdict(),
        effective: evaluation.effective,
        warnings: &evaluation.warnings,
        rows: RowsJson {
            requirements,
            acceptance_criteria,
            checks,
        },
        fired: evaluation
            .computed
            .as_ref()
            .map_or(&[], |a| a.fired.as_slice()),
    };
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

fn render_text(evaluation: &Evaluation) -> String {
    let show = |v: Option<Verdict>| v.map_or("-".to_owned(), |v| v.to_string());
    let mut out = format!("verdict artifact {}\n", evaluation.path.display());
    out.push_str(&format!("  outcome:   {}", evaluation.kind()));
    if let Some(reason) = evaluation.outcome.reason() {
        out.push_str(&format!(" — {reason}"));
    }
    out.push('\n');
    if let Some(artifact) = evaluation.outcome.artifact() {
        out.push_str(&format!("  task:      {}\n", artifact.wbs));
    }
    out.push_str(&format!("  stored:    {}\n", show(evaluation.stored)));
    out.push_str(&format!(
        "  computed:  {}\n",
        show(evaluation.computed_verdict())
    ));
    let note = if evaluation.is_self_inconsistent() {
        " (stored PASS is self-inconsistent)"
    } else if evaluation.wbs_mismatch.is_some() {
        " (the artifact certifies another task)"
    } else {
        ""
    };
    out.push_str(&format!("  effective: {}{note}\n", evaluation.effective));
    if let Some(artifact) = evaluation.outcome.artifact() {
        out.push_str(&format!(
            "  rows:      {}, {}, {}\n",
            count(artifact.requirements.len(), "requirement", "requirements"),
            count(
                artifact.acceptance_criteria.len(),
                "acceptance criterion",
                "acceptance criteria"
            ),
            count(artifact.checks.len(), "check", "checks")
        ));
    }
    if let Some(aggregation) = &evaluation.computed {
        out.push_str("rules fired:\n");
        for fired in &aggregation.fired {
            out.push_str(&format!(
                "  {} → {}  {}: {}\n",
                fired.rule, fired.verdict, fired.subject, fired.detail
            ));
        }
    }
    out
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
