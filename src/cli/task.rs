//! `spur task …`: tasks and their status. `update` moves a status (to done only through
//! the done gate) or writes a section of the task file, `certify` runs the gate for done,
//! `show` prints the status, its history, whether it is certified, and the task file,
//! `verify-certs` checks the done certificates in the repository. Other task subcommands
//! add a variant to [`TaskCommand`] and live in their own file.

use spur_engine::cost::UsageTotal;
use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::done_gate::ForceReason;
use spur_engine::store::audit::current_user;
use spur_engine::store::certification::{self, Certification, LedgerSummary, ViewSummary};
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::{self, ChangeContext, Status};
use spur_engine::store::task_view::{ChangeVia, HistoryEntry};
use spur_engine::task::file_status::{claim, reconcile, FileClaim};
use spur_engine::task_file::{locate_task_file, TaskDocument, TaskFileError};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_status_change::{change_status, ChangeRequest};
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: TaskCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum TaskCommand {
    /// Set a task's status (done through the done gate), or replace a section of its file.
    Update(UpdateArgs),
    /// Certify a task done through the done gate (or adopt it, audited, with --force-done).
    Certify(super::task_certify::Args),
    /// Show a task: its status, history, certification and task file.
    #[command(alias = "get")]
    Show(ShowArgs),
    /// Derive the verdict artifact from the verifier's answer file.
    Verdict(super::task_verdict::Args),
    /// Create a task file with the next free WBS.
    Create(super::task_create::CreateArgs),
    /// Create several task files from a JSON batch, all or nothing.
    BatchCreate(super::task_create::BatchArgs),
    /// List the tasks of the task folders as a board (or JSON).
    List(super::task_list::Args),
    /// Print the path of a task's file.
    Path(super::task_path::Args),
    /// Check a task file's structure for its status, or for the one it is to enter.
    Check(super::task_check::Args),
    /// Write Testing and Review from the verdict (and Solution from the diff); optionally move on.
    Record(super::task_record::Args),
    /// Check that every task file claiming done has a valid signed done certificate.
    VerifyCerts(super::task_verify_certs::Args),
    /// Why a task is or is not done: every reason, read only.
    Why(super::task_why::Args),
}

#[derive(Debug, clap::Args)]
struct UpdateArgs {
    /// The task id (wbs).
    wbs: String,
    /// The new status (backlog, todo, wip, testing, blocked, done, cancelled, or an alias;
    /// a task without a task file takes any lower-case word).
    #[arg(
        required_unless_present_any = ["section", "feature", "priority"],
        conflicts_with_all = ["section", "feature", "priority"]
    )]
    status: Option<String>,
    /// Set the frontmatter's `feature_id` (the task's feature).
    #[arg(long, value_name = "ID", conflicts_with_all = ["section", "priority"])]
    feature: Option<String>,
    /// Set the frontmatter's `priority` (P0–P3).
    #[arg(long, value_name = "P", conflicts_with = "section")]
    priority: Option<String>,
    /// Replace this section of the task file (with --from-file).
    #[arg(long, requires = "from_file", value_name = "NAME")]
    section: Option<String>,
    /// The file holding the section's new body.
    #[arg(long, requires = "section", value_name = "FILE")]
    from_file: Option<PathBuf>,
    /// Do not check the change against the lifecycle graph (the reference's flag: no
    /// lifecycle run). The structural check for testing and done, and the done gate, still apply.
    #[arg(long)]
    no_lifecycle: bool,
    /// Mark done whatever the verdict says; recorded in the audit log. Needs --reason.
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why the override is justified (non-empty).
    #[arg(long, requires = "force_done")]
    reason: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The task id (wbs).
    wbs: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Show a fleet's task: its ledger on the server (book: *Running a fleet*).
    #[command(flatten)]
    engine: super::engine::ReadEngineArgs,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    // Lifecycle guards run sandboxed (ARCHITECTURE.md, *Sandbox*).
    spur_engine::sandbox::confine_steps(&state_dir);
    match args.command {
        TaskCommand::Update(update_args) => update(update_args, &state_dir),
        TaskCommand::Certify(certify_args) => super::task_certify::run(certify_args, &state_dir),
        TaskCommand::Show(show_args) => show(show_args, &state_dir),
        TaskCommand::Verdict(verdict_args) => super::task_verdict::run(verdict_args, &state_dir),
        TaskCommand::Create(a) => super::task_create::create(a, &state_dir),
        TaskCommand::BatchCreate(a) => super::task_create::batch_create(a, &state_dir),
        TaskCommand::List(a) => super::task_list::run(a, &state_dir),
        TaskCommand::Path(a) => super::task_path::run(a, &state_dir),
        TaskCommand::Check(a) => super::task_check::run(a, &state_dir),
        TaskCommand::Record(a) => super::task_record::run(a, &state_dir),
        TaskCommand::VerifyCerts(args) => super::task_verify_certs::run(args, &state_dir),
        TaskCommand::Why(args) => super::task_why::run(args, &state_dir),
    }
}

fn update(args: UpdateArgs, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    if let (Some(section), Some(from_file)) = (&args.section, &args.from_file) {
        return super::task_section::run(state_dir, &wbs, section, from_file, args.json);
    }
    if let Some(id) = &args.feature {
        return super::task_field::run(state_dir, &wbs, "feature_id", id, args.json);
    }
    if let Some(priority) = &args.priority {
        return super::task_field::run(state_dir, &wbs, "priority", priority, args.json);
    }
    let Some(status) = args.status.as_deref() else {
        return Err(Failure::usage(miette::miette!(
            "give a status, or --section NAME --from-file FILE"
        )));
    };
    let force = match (&args.reason, args.force_done) {
        (Some(reason), true) => Some(ForceReason::new(reason.as_str()).map_err(Failure::usage)?),
        _ => None,
    };
    let outcome = change_status(
        state_dir,
        &ChangeRequest {
            wbs: &wbs,
            status,
            force: force.as_ref(),
            no_lifecycle: args.no_lifecycle,
        },
    )?;
    Ok(outcome.render(&wbs, args.json))
}

/// The task file of `wbs`, if it has one (recording a status it claims and wins with).
fn task_document(state_dir: &StateDir, wbs: &Wbs) -> Result<Option<TaskDocument>, Failure> {
    let path = match locate_task_file(wbs, None, state_dir.project_root(), state_dir) {
        Ok(path) => path,
        Err(TaskFileError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(Failure::usage(e)),
    };
    let document = TaskDocument::read(&path).map_err(Failure::usage)?;
    // Only a claim that wins takes the lock and writes: a plain `show` writes nothing.
    let wins = task_status::current_status(state_dir, wbs).is_ok_and(|ledger| {
        matches!(
            claim(&ledger, document.status_text().as_deref()),
            FileClaim::Wins(_)
        )
    });
    if wins {
        let lock =
            DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
        let user = current_user();
        let context = ChangeContext {
            user: &user,
            run_id: None,
            time: spur_engine::store::timestamp::now(),
        };
        if let Err(e) = reconcile(&lock, state_dir, &document, &context) {
            eprintln!("warning: {e}");
        }
    }
    Ok(Some(document))
}

/// The `--json` document of `show`, fields in the documented order: the reference's
/// (`wbs`, `name`, `status`, `filePath`, `feature_id`, `content`, `frontmatter`), then the
/// ledger's. `status` and `frontmatter.status` are the ledger's (as the file wins, a claim
/// of done never); `fileStatus` is what the file says.
#[derive(serde::Serialize)]
struct ShowJson<'a> {
    wbs: &'a str,
    name: Option<String>,
    status: &'a Status,
    #[serde(rename = "filePath")]
    file_path: Option<String>,
    feature_id: Option<String>,
    #[serde(rename = "fileStatus")]
    file_status: Option<String>,
    content: Option<&'a str>,
    frontmatter: Option<serde_json::Map<String, serde_json::Value>>,
    history: &'a [HistoryEntry],
    certification: Certification,
    detail: Option<&'a str>,
    ledger: &'a LedgerSummary,
    view: &'a ViewSummary,
    usage: &'a TaskUsage,
}

/// What the task's steps spent, from its usage ledger: in all, and per run (in the order
/// the runs first spent); or why the ledger cannot be used.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskUsage {
    /// The usage ledger file.
    path: String,
    total: Option<UsageTotal>,
    runs: Vec<RunUsage>,
    error: Option<String>,
}

#[derive(serde::Serialize)]
struct RunUsage {
    run: String,
    usage: UsageTotal,
}

impl TaskUsage {
    fn read(state_dir: &StateDir, wbs: &Wbs) -> Self {
        let path = state_dir.usage_ledger_path(wbs).display().to_string();
        match spur_engine::store::usage_ledger::read(state_dir, wbs) {
            Ok(ledger) => {
                let mut runs: Vec<RunUsage> = Vec::new();
                for record in &ledger.records {
                    match runs.iter_mut().find(|r| r.run == record.run) {
                        Some(run) => run.usage.add(&record.usage),
                        None => runs.push(RunUsage {
                            run: record.run.clone(),
                            usage: std::iter::once(record.usage.clone()).collect(),
                        }),
                    }
                }
                TaskUsage {
                    path,
                    total: Some(ledger.total()),
                    runs,
                    error: None,
                }
            }
            Err(e) => TaskUsage {
                path,
                total: None,
                runs: Vec::new(),
                error: Some(e.to_string()),
            },
        }
    }
}

fn show(args: ShowArgs, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    // A fleet's task: its ledger on the server, laid out privately while it is shown.
    let server = match args.engine.ingress(state_dir)? {
        Some(ingress) => Some(super::server_records::read(
            state_dir,
            &ingress,
            Some(std::slice::from_ref(&wbs)),
        )?),
        None => None,
    };
    let state_dir = server.as_ref().map_or(state_dir, |s| &s.state);
    // A task file that cannot be used is said, and the ledger's part still shown.
    let document = match task_document(state_dir, &wbs) {
        Ok(document) => document,
        Err(failure) => {
            eprintln!("warning: {:?}", failure.report);
            None
        }
    };
    let mut check = certification::check(state_dir, &wbs);
    let status = &check.record.status;
    let file_status = document.as_ref().and_then(TaskDocument::status_text);
    let shown_path = document.as_ref().map(|d| {
        d.path()
            .strip_prefix(state_dir.project_root())
            .unwrap_or(d.path())
            .display()
            .to_string()
    });
    if claim(status, file_status.as_deref()) == FileClaim::UncertifiedDone
        && check.certification == Certification::None
    {
        check.certification = Certification::Uncertified;
        check.detail = Some(format!(
            "its task file {} says `status: done`, but its task ledger {} has no done record",
            shown_path.as_deref().unwrap_or_default(),
            state_dir.task_ledger_path(&wbs).display()
        ));
    }
    if let Some(server) = &server {
        check.detail = check.detail.as_deref().map(|d| server.shown(d));
    }
    let status = &check.record.status;
    let history = &check.record.history;
    let usage = TaskUsage::read(state_dir, &wbs);
    if args.json {
        let frontmatter = document.as_ref().and_then(|d| d.frontmatter()).map(|f| {
            let mut map = f.to_json();
            if map.contains_key("status") {
                map.insert(
                    "status".into(),
                    serde_json::Value::String(status.to_string()),
                );
            }
            map
        });
        let document_json = ShowJson {
            wbs: wbs.as_str(),
            name: document.as_ref().and_then(TaskDocument::name),
            status,
            file_path: document.as_ref().map(|d| d.path().display().to_string()),
            feature_id: document.as_ref().and_then(TaskDocument::feature_id),
            file_status: file_status.clone(),
            content: document.as_ref().map(TaskDocument::content),
            frontmatter,
            history,
            certification: check.certification,
            detail: check.detail.as_deref(),
            ledger: &check.ledger,
            view: &check.view,
            usage: &usage,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document_json).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if check.certification == Certification::Unverifiable {
        // Its records' claims cannot be checked: no status is shown as if it were one.
        outln!("task {wbs}: unverifiable");
    } else {
        outln!("task {wbs}: {status}");
    }
    if let (Some(document), Some(path)) = (&document, &shown_path) {
        outln!("  file: {path}");
        if let Some(name) = document.name() {
            outln!("  name: {name}");
        }
        if let Some(feature) = document.feature_id() {
            outln!("  feature: {feature}");
        }
    }
    let detail = check.detail.as_deref().unwrap_or_default();
    match check.certification {
        Certification::Certified => {
            outln!("  certified: the task ledger's last record is done");
        }
        Certification::Uncertified => {
            outln!("  uncertified: {detail}");
            outln!(
                "  certify it with `spur task certify {wbs}` (runs the done gate), or adopt it \
                 with `spur task certify {wbs} --force-done --reason \"why\"` (audited)"
            );
        }
        Certification::Tampered if check.ledger.intact => {
            outln!("  tampered: {detail}");
            outln!(
                "  the task ledger is the status; the next status change rewrites the view from \
                 it (`spur task update {wbs} {status}` does so without changing it)"
            );
        }
        Certification::Tampered => {
            outln!("  tampered: {detail}");
            outln!(
                "  spur neither reads a status from this ledger nor appends to it: restore it \
                 from a copy (git)"
            );
        }
        Certification::Unverifiable => {
            outln!("  unverifiable: {detail}");
            outln!(
                "  not tampered, not verified: spur neither reads a status from this ledger nor \
                 appends to it until the key that sealed it is back (`spur key show` says where \
                 spur looks for it)"
            );
        }
        Certification::None if !detail.is_empty() => outln!("  note: {detail}"),
        Certification::None => {}
    }
    if history.is_empty() && check.certification != Certification::Unverifiable {
        outln!("  no status changes recorded");
    }
    for entry in history {
        let how = match &entry.via {
            ChangeVia::Update => "update".to_owned(),
            ChangeVia::DoneGatePass => "done gate: verdict PASS".to_owned(),
            ChangeVia::DoneGateExternal => {
                "done gate: verdict PASS in an artifact written outside spur (externalVerdicts: allow)"
                    .to_owned()
            }
            ChangeVia::ForcedOverride { reason, .. } => {
                format!("forced override: {reason:?}")
            }
        };
        let run = entry
            .run_id
            .as_deref()
            .map(|id| format!(" in run {id}"))
            .unwrap_or_default();
        outln!(
            "  {}  {} → {}  by {}{run} ({how})",
            entry.time,
            entry.from,
            entry.to,
            entry.user
        );
    }
    match (&usage.total, &usage.error) {
        (_, Some(error)) => outln!("  spent: cannot be shown: {error}"),
        (Some(total), None) if total.steps > 0 => {
            let runs = usage.runs.len();
            outln!(
                "  spent: {} over {runs} run{}",
                super::trace::total_text(total),
                if runs == 1 { "" } else { "s" }
            );
        }
        _ => {}
    }
    if let Some(document) = &document {
        outln!();
        out!("{}", document.content().trim_start_matches('\n'));
    }
    Ok(ExitCode::SUCCESS)
}
