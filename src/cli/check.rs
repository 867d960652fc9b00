//! `spur check PIPELINE… [--format human|json | --json] [--deny-warnings]`: load and statically
//! check pipelines. Human output: miette reports and a one-line summary per file on
//! stderr. JSON: one array of findings on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::{JsonDiagnostic, Tally};
use spur_engine::pipeline;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pipeline files to check.
    #[arg(required = true, value_name = "PIPELINE")]
    pipelines: Vec<PathBuf>,
    /// Output format: `human` (reports on stderr) or `json` (an array on stdout).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Print the findings as JSON on stdout (same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Human,
    Json,
}

/// What happened to one file.
enum FileOutcome {
    Checked(Vec<spur_engine::diagnostic::Diagnostic>),
    Unloadable(pipeline::LoadFailure),
}

pub fn run(mut args: Args) -> CliResult {
    if args.json {
        args.format = Format::Json;
    }
    let mut any_unloadable = false;
    let mut any_failed = false;
    let mut json: Vec<JsonDiagnostic> = Vec::new();
    // Agents are checked against the project's configuration, found as `spur run` finds it.
    let cwd = std::env::current_dir().map_err(|e| super::Failure::usage(miette::miette!("{e}")))?;
    let named = std::env::var_os("SPUR_STATE_DIR").map(PathBuf::from);
    let state_dir = StateDir::resolve(named.as_deref(), &cwd);
    for path in &args.pipelines {
        let outcome = check_file(path, &state_dir);
        match outcome {
            FileOutcome::Unloadable(failure) => {
                any_unloadable = true;
                match args.format {
                    Format::Json => json.push(failure.to_json()),
                    Format::Human => {
                        eprintln!("{:?}", miette::Report::new(failure));
                        eprintln!("{}: cannot be loaded", path.display());
                    }
                }
            }
            FileOutcome::Checked(diagnostics) => {
                let tally = Tally::of(&diagnostics);
                if tally.errors > 0 || (args.deny_warnings && tally.warnings > 0) {
                    any_failed = true;
                }
                match args.format {
                    Format::Json => json.extend(diagnostics.iter().map(|d| d.to_json())),
                    Format::Human => {
                        for d in diagnostics {
                            eprintln!("{:?}", miette::Report::new(d));
                        }
                        eprintln!("{}: {tally}", path.display());
                    }
                }
            }
        }
    }
    // `budgets:` and `prices:` of the project's config, once for all the pipelines: every
    // finding with its place in the file.
    if let Err(spur_engine::cost::config::CostConfigErrors::Invalid { errors, .. }) =
        spur_engine::cost::config::CostConfig::load(&state_dir)
    {
        any_failed |= errors.iter().any(|d| d.is_error());
        match args.format {
            Format::Json => json.extend(errors.iter().map(|d| d.to_json())),
            Format::Human => {
                for d in errors {
                    eprintln!("{:?}", miette::Report::new(d));
                }
                eprintln!(
                    "{}: budgets or prices have errors",
                    state_dir.config_path().display()
                );
            }
        }
    }
    if args.format == Format::Json {
        let text = serde_json::to_string_pretty(&json).unwrap_or_else(|_| "[]".into());
        outln!("{text}");
    }
    let code = if any_unloadable {
        exit::USAGE
    } else if any_failed {
        exit::FAILED
    } else {
        exit::SUCCESS
    };
    Ok(ExitCode::from(code))
}

fn check_file(path: &std::path::Path, state_dir: &StateDir) -> FileOutcome {
    let source = match pipeline::read_source(path) {
        Ok(source) => source,
        Err(failure) => return FileOutcome::Unloadable(failure),
    };
    let loaded = match pipeline::load(&source) {
        Ok(loaded) => loaded,
        Err(failure) => return FileOutcome::Unloadable(failure),
    };
    let mut diagnostics = loaded.diagnostics;
    diagnostics.extend(pipeline::check(&loaded.pipeline));
    diagnostics.extend(pipeline::check::check_agents(&loaded.pipeline, state_dir));
    pipeline::check::sort(&mut diagnostics);
    FileOutcome::Checked(diagnostics)
}
