//! `spur audit verify` and `spur audit list [--json]`: check and show the hash-chained log
//! of forced done overrides. `verify` also checks every task ledger's chain and every task
//! view against its ledger.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::store::audit;
use spur_engine::store::certification::{self, Certification, TaskCheck};
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
    /// Check the audit log's hash chain, every task ledger's chain and every task view
    /// against its ledger; exit 1 naming the first broken line or each tampered task.
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

/// The `--json` document of `verify`: the audit log's fields as before, then the tasks.
#[derive(serde::Serialize)]
struct VerifyJson<'a> {
    path: String,
    /// The audit log is intact and no task is tampered (the exit code).
    intact: bool,
    records: usize,
    broken: Option<&'a audit::BrokenLine>,
    tasks: Vec<TaskJson<'a>>,
}

#[derive(serde::Serialize)]
struct TaskJson<'a> {
    wbs: &'a str,
    status: &'a str,
    certification: Certification,
    detail: Option<&'a str>,
    records: usize,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let path = state_dir.audit_path();
    match args.command {
        AuditCommand::Verify { json } => {
            let anchors = task_status::audit_anchors(&state_dir);
            let check = audit::verify_anchored(&path, &anchors).map_err(Failure::usage)?;
            let tasks = certification::check_all(&state_dir);
            let tampered = tasks
                .iter()
                .any(|t| t.certification == Certification::Tampered);
            let intact = check.is_intact() && !tampered;
            if json {
                let document = VerifyJson {
                    path: path.display().to_string(),
                    intact,
                    records: check.records,
                    broken: check.broken.as_ref(),
                    tasks: tasks.iter().map(task_json).collect(),
                };
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
            } else {
                match &check.broken {
                    None => outln!(
                        "audit log {} is intact: {} {}",
                        path.display(),
                        check.records,
                        plural(check.records, "record", "records")
                    ),
                    Some(broken) => eprintln!(
                        "audit log {} is broken at line {}: {}",
                        path.display(),
                        broken.line,
                        broken.problem
                    ),
                }
                render_tasks(&tasks);
            }
            Ok(ExitCode::from(if intact {
                exit::SUCCESS
            } else {
                exit::FAILED
            }))
        }
        AuditCommand::List { json } => {
            let records = audit::list(&path).map_err(Failure::usage)?;
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&records).unwrap_or_default()
                );
            } else if records.is_empty() {
                outln!("no forced overrides recorded in {}", path.display());
            } else {
                for (i, r) in records.iter().enumerate() {
                    outln!(
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

fn task_json(task: &TaskCheck) -> TaskJson<'_> {
    TaskJson {
        wbs: task.wbs.as_str(),
        status: task.record.status.as_str(),
        certification: task.certification,
        detail: task.detail.as_deref(),
        records: task.ledger.records,
    }
}

/// One summary line, then each tampered task (stderr) and each uncertified one (stdout).
fn render_tasks(tasks: &[TaskCheck]) {
    let count = |c: Certification| tasks.iter().filter(|t| t.certification == c).count();
    let (tampered, uncertified) = (
        count(Certification::Tampered),
        count(Certification::Uncertified),
    );
    let summary = format!(
        "{} {} checked ({} certified)",
        tasks.len(),
        plural(tasks.len(), "task", "tasks"),
        count(Certification::Certified)
    );
    if tampered == 0 {
        outln!("task ledgers and views agree: {summary}");
    } else {
        eprintln!("task ledgers and views: {summary}, {tampered} tampered");
    }
    for task in tasks {
        let detail = task.detail.as_deref().unwrap_or_default();
        match task.certification {
            Certification::Tampered => eprintln!("task {} is tampered: {detail}", task.wbs),
            Certification::Uncertified => outln!(
                "task {} is uncertified (listed, not a failure): {detail}; certify it with \
                 `spur task certify {}`",
                task.wbs,
                task.wbs
            ),
            Certification::Certified | Certification::None => {}
        }
    }
    if uncertified > 0 {
        outln!(
            "{uncertified} uncertified {} listed above: not a failure of the audit",
            plural(uncertified, "task", "tasks")
        );
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}
