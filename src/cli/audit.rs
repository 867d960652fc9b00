//! `spur audit verify` and `spur audit list [--json]`: check and show the hash-chained log
//! of forced done overrides.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::store::audit;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: AuditCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum AuditCommand {
    /// Check the hash chain; exit 1 naming the first broken line.
    Verify {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show every forced override.
    List {
        /// Print a JSON array instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(serde::Serialize)]
struct VerifyJson<'a> {
    path: String,
    intact: bool,
    records: usize,
    broken: Option<&'a audit::BrokenLine>,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let path = state_dir.audit_path();
    match args.command {
        AuditCommand::Verify { json } => {
            let anchors = task_status::audit_anchors(&state_dir);
            let check = audit::verify_anchored(&path, &anchors).map_err(Failure::usage)?;
            if json {
                let document = VerifyJson {
                    path: path.display().to_string(),
                    intact: check.is_intact(),
                    records: check.records,
                    broken: check.broken.as_ref(),
                };
                println!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
            } else {
                match &check.broken {
                    None => println!(
                        "audit log {} is intact: {} {}",
                        path.display(),
                        check.records,
                        if check.records == 1 {
                            "record"
                        } else {
                            "records"
                        }
                    ),
                    Some(broken) => eprintln!(
                        "audit log {} is broken at line {}: {}",
                        path.display(),
                        broken.line,
                        broken.problem
                    ),
                }
            }
            Ok(ExitCode::from(if check.is_intact() {
                exit::SUCCESS
            } else {
                exit::FAILED
            }))
        }
        AuditCommand::List { json } => {
            let records = audit::list(&path).map_err(Failure::usage)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&records).unwrap_or_default()
                );
            } else if records.is_empty() {
                println!("no forced overrides recorded in {}", path.display());
            } else {
                for (i, r) in records.iter().enumerate() {
                    println!(
                        "{}. {} task {} forced done by {}{}: {:?} (verdict {})",
                        i + 1,
                        r.time,
                        r.wbs,
                        r.user,
                        r.run_id
                            .as_deref()
                            .map(|id| format!(" in run {id}"))
                            .unwrap_or_default(),
                        r.reason,
                        r.effective_verdict
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
