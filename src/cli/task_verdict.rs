//! `spur task verdict WBS --from-answer FILE [--task FILE] [--json] [--lint-only]`: lint the
//! verifier's answer and derive the verdict artifact from it.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::answer::{derive_verdict_with, AnswerDiagnostic, DeriveError, DeriveRequest};
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_ledger::VerdictWriter;
use spur_engine::verdict::Verdict;
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs).
    wbs: String,
    /// The verifier's Markdown answer file.
    #[arg(long = "from-answer", value_name = "FILE")]
    from_answer: PathBuf,
    /// The task file (default: docs/tasks*/<wbs>_*.md, else .spur/tasks/<wbs>.md).
    #[arg(long, value_name = "FILE")]
    task: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Lint the answer and print the diagnostics; write nothing.
    #[arg(long)]
    lint_only: bool,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let request = DeriveRequest {
        wbs,
        answer: args.from_answer,
        task: args.task,
        state_dir: state_dir.clone(),
        project_root: state_dir.project_root().to_path_buf(),
        write: !args.lint_only,
        writer: VerdictWriter::TaskVerdict,
        run_id: None,
    };
    let outcome = derive_verdict_with(&request, &mut crash_hook).map_err(|e| match e {
        DeriveError::Write { .. } | DeriveError::Unrecorded(_) => {
            Failure::with_code(e, exit::FAILED)
        }
        other => Failure::usage(other),
    })?;

    let cwd = std::env::current_dir().unwrap_or_default();
    let shown = |p: &Path| p.strip_prefix(&cwd).unwrap_or(p).display().to_string();
    let errors = outcome.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = outcome.diagnostics.len() - errors;
    let answer_name = shown(&request.answer);

    if args.json {
        let document = JsonReport {
            wbs: outcome.wbs.as_str(),
            verdict: outcome.verdict.as_str(),
            artifact: outcome.artifact_path.as_deref().map(shown),
            diagnostics: &outcome.diagnostics,
            task: shown(&outcome.task_path),
            lint_failed: outcome.lint_failed,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        for diagnostic in &outcome.diagnostics {
            eprintln!("{}", render(diagnostic, &answer_name));
        }
        let counts = format!(
            "{errors} error{}, {warnings} warning{}",
            plural(errors),
            plural(warnings)
        );
        let summary = match (&outcome.artifact_path, outcome.lint_failed) {
            (None, false) => format!(
                "{}: the answer passes the lint ({counts}); it would derive {} (nothing written: --lint-only)",
                outcome.wbs, outcome.verdict
            ),
            (None, true) => format!(
                "{}: the answer fails the lint ({counts}); nothing written (--lint-only)",
                outcome.wbs
            ),
            (Some(path), false) => format!(
                "{}: {} ({counts}); wrote {}",
                outcome.wbs,
                outcome.verdict,
                shown(path)
            ),
            (Some(path), true) => format!(
                "{}: FAIL: the answer fails the lint ({counts}); wrote an explicit FAIL artifact to {} — the done gate will deny until a clean answer is derived",
                outcome.wbs,
                shown(path)
            ),
        };
        outln!("{summary}");
    }

    let success = match outcome.artifact_path {
        Some(_) => outcome.verdict == Verdict::Pass,
        None => !outcome.lint_failed,
    };
    Ok(ExitCode::from(if success {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}

/// The `--json` document, fields in this order.
#[derive(Serialize)]
struct JsonReport<'a> {
    wbs: &'a str,
    verdict: &'a str,
    /// Where the artifact was written; null with --lint-only.
    artifact: Option<String>,
    diagnostics: &'a [AnswerDiagnostic],
    task: String,
    #[serde(rename = "lintFailed")]
    lint_failed: bool,
}

/// `error[code]: answer.md:12: message`, then the row and the help, indented.
fn render(d: &AnswerDiagnostic, answer: &str) -> String {
    let severity = if d.is_error() { "error" } else { "warning" };
    let place = match d.line {
        Some(line) => format!("{answer}:{line}"),
        None => answer.to_owned(),
    };
    let mut text = format!("{severity}[{}]: {place}: {}", d.code, d.message);
    if let Some(row) = &d.row {
        text.push_str(&format!("\n    row: {row}"));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\n    help: {help}"));
    }
    text
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Debug builds only: `SPUR_TEST_CRASH_BEFORE_RENAME=1` kills the process after the new
/// artifact is staged and before it replaces the old one, so tests can show that a crash at
/// the worst moment leaves the previous artifact intact. Release builds ignore it.
fn crash_hook(_staged: &Path) -> io::Result<()> {
    if cfg!(debug_assertions) && std::env::var_os("SPUR_TEST_CRASH_BEFORE_RENAME").is_some() {
        std::process::abort();
    }
    Ok(())
}
