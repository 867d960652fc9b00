//! `spur audit verify` and `spur audit list [--json]`: check and show the sealed, chained
//! log of forced done overrides. `verify` also checks every task ledger's chain and seals
//! and every task view against its ledger, and lists where the gate's policy changed
//! between decisions.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::policy::{policy_changes, PolicyChange};
use spur_engine::store::audit;
use spur_engine::store::certification::{self, Certification, TaskCheck};
use spur_engine::store::chain_key::key_for_reading;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status;

use super::engine::ReadEngineArgs;
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
    /// Check the audit log's chain and seals, every task ledger's and every task view
    /// against its ledger, and list policy changes between decisions; exit 1 naming the
    /// first broken line or each tampered task, 3 when nothing is tampered but some
    /// records cannot be verified (their key is missing or another).
    Verify {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Check a fleet's records on the server instead (book: *Running a fleet*).
        #[command(flatten)]
        engine: ReadEngineArgs,
    },
    /// Show every forced override.
    List {
        /// Print a JSON array instead of text.
        #[arg(long)]
        json: bool,
        /// List a fleet's overrides on the server instead.
        #[command(flatten)]
        engine: ReadEngineArgs,
    },
}

/// Exit code of `verify` when nothing is tampered but some records cannot be verified.
const UNVERIFIABLE: u8 = 3;

/// The `--json` document of `verify`: the audit log's fields as before, then the tasks.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VerifyJson<'a> {
    path: String,
    /// The audit log is intact and no task is tampered (exit 0 or 3).
    intact: bool,
    /// Everything was verified too (exit 0).
    verified: bool,
    records: usize,
    /// Audit records from before keyed chains.
    unkeyed: usize,
    /// Those no sealed record follows.
    unanchored: usize,
    unverifiable: Option<&'a audit::UnverifiableLines>,
    broken: Option<&'a audit::BrokenLine>,
    tasks: Vec<TaskJson<'a>>,
    policy_changes: &'a [PolicyChange],
}

#[derive(serde::Serialize)]
struct TaskJson<'a> {
    wbs: &'a str,
    status: &'a str,
    certification: Certification,
    detail: Option<&'a str>,
    records: usize,
    unkeyed: usize,
    unanchored: usize,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let engine = match &args.command {
        AuditCommand::Verify { engine, .. } | AuditCommand::List { engine, .. } => engine,
    };
    // A fleet's records, laid out privately while this command reads them.
    let server = match engine.ingress(&state_dir)? {
        Some(ingress) => Some(super::server_records::read(&state_dir, &ingress, None)?),
        None => None,
    };
    let state_dir = server.as_ref().map_or(state_dir, |s| s.state.clone());
    let path = state_dir.audit_path();
    // Where the records are, as said: the engine's, not the private copy's.
    let shown = |text: &str| match &server {
        Some(server) => server.shown(text),
        None => text.to_owned(),
    };
    let shown_path = shown(&path.display().to_string());
    match args.command {
        AuditCommand::Verify { json, .. } => {
            let anchors = task_status::audit_anchors(&state_dir);
            let key = key_for_reading(&state_dir);
            let check = audit::verify_anchored(&path, &key, &anchors).map_err(Failure::usage)?;
            let mut tasks = certification::check_all(&state_dir);
            for task in &mut tasks {
                task.detail = task.detail.as_deref().map(shown);
            }
            let has = |c: Certification| tasks.iter().any(|t| t.certification == c);
            let intact = check.is_intact() && !has(Certification::Tampered);
            let unanchored = tasks.iter().any(|t| t.ledger.unanchored > 0);
            let verified =
                intact && check.is_verified() && !has(Certification::Unverifiable) && !unanchored;
            let changes = policy_changes(&state_dir);
            if json {
                let document = VerifyJson {
                    path: shown_path.clone(),
                    intact,
                    verified,
                    records: check.records,
                    unkeyed: check.unkeyed,
                    unanchored: check.unanchored,
                    unverifiable: check.unverifiable.as_ref(),
                    broken: check.broken.as_ref(),
                    tasks: tasks.iter().map(task_json).collect(),
                    policy_changes: &changes,
                };
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
            } else {
                render_log(&shown_path, &check);
                render_tasks(&tasks);
                render_policy_changes(&changes);
            }
            Ok(ExitCode::from(if !intact {
                exit::FAILED
            } else if !verified {
                UNVERIFIABLE
            } else {
                exit::SUCCESS
            }))
        }
        AuditCommand::List { json, .. } => {
            let records = audit::list(&path).map_err(Failure::usage)?;
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&records).unwrap_or_default()
                );
            } else if records.is_empty() {
                outln!("no forced overrides recorded in {shown_path}");
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
        unkeyed: task.ledger.unkeyed,
        unanchored: task.ledger.unanchored,
    }
}

/// The audit log's line: intact (stdout), or broken (stderr); then, on stderr, the records
/// that cannot be verified; on stdout, how many are unkeyed.
fn render_log(path: &str, check: &audit::ChainCheck) {
    match &check.broken {
        None => outln!(
            "audit log {path} is intact: {} {}",
            check.records,
            plural(check.records, "record", "records")
        ),
        Some(broken) => eprintln!(
            "audit log {path} is broken at line {}: {}",
            broken.line, broken.problem
        ),
    }
    if let Some(u) = &check.unverifiable {
        eprintln!(
            "audit log {path} cannot be verified: {} {} from line {} on: {} (not tampered, not verified: restore the key, see `spur key show`)",
            u.count,
            plural(u.count, "record", "records"),
            u.first_line,
            u.why
        );
    }
    if check.unanchored > 0 {
        eprintln!(
            "audit log {path} is unkeyed: {} (written before keyed chains, or rewritten without the key: nothing shows which)",
            unanchored(check.unanchored)
        );
    } else if check.unkeyed > 0 {
        outln!(
            "audit log {path}: {} unkeyed {} from before keyed chains, anchored by the sealed records after them",
            check.unkeyed,
            plural(check.unkeyed, "record", "records")
        );
    }
}

/// Where the policy changed between decisions (stdout; not a failure: a change can be
/// honest, and it is on record).
fn render_policy_changes(changes: &[PolicyChange]) {
    if changes.is_empty() {
        return;
    }
    outln!(
        "the gate's policy changed between decisions {} {}:",
        changes.len(),
        plural(changes.len(), "time", "times")
    );
    for change in changes {
        outln!("  {}", change.describe());
    }
}

/// One summary line, then each tampered or unverifiable task (stderr) and each uncertified
/// one (stdout).
fn render_tasks(tasks: &[TaskCheck]) {
    let count = |c: Certification| tasks.iter().filter(|t| t.certification == c).count();
    let (tampered, unverifiable, uncertified) = (
        count(Certification::Tampered),
        count(Certification::Unverifiable),
        count(Certification::Uncertified),
    );
    let summary = format!(
        "{} {} checked ({} certified)",
        tasks.len(),
        plural(tasks.len(), "task", "tasks"),
        count(Certification::Certified)
    );
    match (tampered, unverifiable) {
        (0, 0) => outln!("task ledgers and views agree: {summary}"),
        (_, 0) => eprintln!("task ledgers and views: {summary}, {tampered} tampered"),
        (0, _) => eprintln!("task ledgers and views: {summary}, {unverifiable} unverifiable"),
        _ => eprintln!(
            "task ledgers and views: {summary}, {tampered} tampered, {unverifiable} unverifiable"
        ),
    }
    for task in tasks.iter().filter(|t| t.ledger.unanchored > 0) {
        eprintln!(
            "task {} has an unkeyed task ledger: {} (written before keyed chains, or rewritten without the key: nothing shows which); its next change seals it",
            task.wbs,
            unanchored(task.ledger.unanchored)
        );
    }
    for task in tasks {
        let detail = task.detail.as_deref().unwrap_or_default();
        match task.certification {
            Certification::Tampered => eprintln!("task {} is tampered: {detail}", task.wbs),
            Certification::Unverifiable => eprintln!(
                "task {} is unverifiable (not tampered, not verified): {detail}",
                task.wbs
            ),
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

/// "its 2 records are chained by plain sha256, and no sealed record follows them".
fn unanchored(n: usize) -> String {
    if n == 1 {
        "its 1 record is chained by plain sha256, and no sealed record follows it".to_owned()
    } else {
        format!("its {n} records are chained by plain sha256, and no sealed record follows them")
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}
