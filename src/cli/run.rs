//! `spur run PIPELINE [--var k=v]… [--vars JSON] [--force-done --reason R] [--dry-run]
//! [--json] [--state-dir D] [--jq auto|embedded|system]`: run a pipeline to a terminal
//! state or a pause. Progress on stderr; the outcome on stdout (one JSON object with
//! `--json`). Exit 0 done/completed, 1 failed, 2 bad usage, 3 paused, 4 could not start.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::done_certificate::CertificateReport;
use spur_engine::done_gate::ForceReason;
use spur_engine::pipeline::{self, CheckedPipeline};
use spur_engine::run::explain::FailureExplanation;
use spur_engine::run::fleet_tree;
use spur_engine::run::git_worktree::{self, WorktreeRecord};
use spur_engine::run::run_error::ErrorClass;
use spur_engine::run::runs_list::read_run;
use spur_engine::run::step_timeouts::StepTimeouts;
use spur_engine::run::{self, Durability, Outcome, RunError, RunId, RunOutcome, RunSettings};
use spur_engine::store::state_dir::StateDir;
use spur_engine::task::lifecycle_done_gate::LifecycleDoneGate;
use spur_guards::jq_shim::JqMode;

use super::failure::exit;
use super::run_progress::Progress;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pipeline file.
    #[arg(value_name = "PIPELINE")]
    pipeline: PathBuf,
    /// Set a var (repeatable; later wins; beats --vars and the pipeline's defaults).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Vars as a JSON object (beats the pipeline's defaults).
    #[arg(long = "vars", value_name = "JSON")]
    vars_json: Option<String>,
    /// Certify the task done even if the verdict is not PASS (needs --reason; audited).
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why --force-done is justified (written to the audit log).
    #[arg(long, value_name = "R", requires = "force_done")]
    reason: Option<String>,
    /// Run no action and no shell guard: print the path that can be decided and the first
    /// branch point that cannot.
    #[arg(long)]
    dry_run: bool,
    /// Run in a git worktree of its own (`.spur/worktrees/<run-id>`, branch
    /// `spur/<run-id>`); the default when `.spur/config.yaml` has `run: {worktree: true}`.
    #[arg(long)]
    worktree: bool,
    /// With a worktree: remove it (never its branch) after a completed run when it has no
    /// uncommitted changes; else it is kept, and the run says why.
    #[arg(long)]
    worktree_cleanup: bool,
    #[command(flatten)]
    engine: super::engine::EngineArgs,
    #[command(flatten)]
    common: CommonRunArgs,
}

/// Options shared by `run` and `continue`.
#[derive(Debug, clap::Args)]
pub struct CommonRunArgs {
    /// Print the outcome as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// The state directory (default: the nearest `.spur/` up from here, else ./.spur).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
    /// Which jq shell steps see: the system jq if any (auto), always spur's (embedded),
    /// or only the system's (system).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_jq_mode)]
    pub jq: JqMode,
}

fn parse_jq_mode(s: &str) -> Result<JqMode, String> {
    s.parse()
}

impl CommonRunArgs {
    pub fn state_dir(&self) -> Result<StateDir, Failure> {
        let cwd = std::env::current_dir().map_err(|e| {
            Failure::usage(miette::miette!("cannot read the current directory: {e}"))
        })?;
        Ok(StateDir::resolve(self.state_dir.as_deref(), &cwd))
    }

    /// Settings for the runner: durability (SPUR_JOURNAL_FSYNC=0 turns fsync off — unsafe,
    /// for benchmarks), the jq shim on PATH, the spur executable.
    /// `defaults:` of `.spur/config.yaml` is read here: an error stops the run before it
    /// starts (exit 2), an unknown key is a warning on stderr.
    pub fn settings(&self, state_dir: StateDir) -> Result<RunSettings, Failure> {
        let loaded = StepTimeouts::load(&state_dir).map_err(|e| {
            super::config_errors::config_failure(&state_dir, miette::Report::new(e))
        })?;
        for warning in loaded.warnings {
            eprintln!("{:?}", miette::Report::new(warning));
        }
        // `budgets:` and `prices:` are read by each agent step; a broken one stops the run
        // before it starts, not at its first agent step.
        spur_engine::cost::config::CostConfig::load(&state_dir).map_err(|e| {
            super::config_errors::config_failure(&state_dir, miette::Report::new(e))
        })?;
        let http_allow =
            spur_engine::run::http_allow::HttpAllowList::load(&state_dir).map_err(|e| {
                super::config_errors::config_failure(&state_dir, miette::Report::new(e))
            })?;
        let spur_bin = std::env::current_exe().ok();
        let durability = match std::env::var("SPUR_JOURNAL_FSYNC").as_deref() {
            Ok("0") => Durability::Unsafe,
            _ => Durability::Fsync,
        };
        let shim = state_dir.root().join("bin");
        let path_prefix = spur_guards::jq_shim::jq_mode_path(self.jq, &shim).and_then(|dir| {
            let exe = spur_bin.as_deref()?;
            spur_guards::jq_shim::ensure_shim_dir(&dir, exe).ok()
        });
        // A run started from a step of another run keeps that run's pin. A person's run
        // (or `continue`, `retry`) approves the config's policy when none is yet; the run
        // itself refuses one that is not the approved one (after its journal's checks).
        let policy = super::run_policy::policy_for(&state_dir, None)?;
        let _ = super::run_policy::approve_on_first_use(&state_dir, &policy);
        // Steps run sandboxed from here on; where they cannot be, the run says so once.
        let sandbox = spur_engine::sandbox::confine_steps(&state_dir);
        if let Some(notice) = sandbox.fallback_notice() {
            eprintln!("warning: {notice}");
        }
        // `spur task verdict|update|certify` from a step reach this process through it.
        let run_socket = match &spur_bin {
            Some(bin) => Some(std::sync::Arc::new(
                spur_engine::run::nested_call::RunSocket::serve(&state_dir, bin).map_err(|e| {
                    Failure::with_code(
                        miette::miette!(
                            "cannot open the run's socket for spur calls from steps: {e}"
                        ),
                        4,
                    )
                })?,
            )),
            None => None,
        };
        Ok(RunSettings {
            state_dir,
            durability,
            path_prefix,
            spur_bin,
            timeouts: loaded.timeouts,
            http_allow,
            policy,
            jq: super::jq::sandbox(),
            run_socket,
        })
    }
}

/// The reason of `--force-done --reason R` (clap has required them together), checked.
pub fn force_done_reason(
    force_done: bool,
    reason: Option<String>,
) -> Result<Option<String>, Failure> {
    match (force_done, reason) {
        (true, Some(r)) => Ok(Some(
            ForceReason::new(r)
                .map_err(Failure::usage)?
                .as_str()
                .to_owned(),
        )),
        _ => Ok(None),
    }
}

/// A run named on the command line (`continue`, `retry`): its id, resolved from an id,
/// a prefix or `latest`, and the pipeline it recorded, loaded and checked.
pub fn recorded_run(
    state_dir: &StateDir,
    run_ref: &str,
) -> Result<(RunId, CheckedPipeline), Failure> {
    let run_id = super::run_ref::resolve(state_dir, run_ref)?;
    let pipeline_path = run::recorded_pipeline(state_dir, &run_id)
        .map_err(|e| finish(Err(e), false, None).unwrap_err())?;
    let checked = load_checked(&pipeline_path)?;
    Ok((run_id, checked))
}

pub fn run(args: Args) -> CliResult {
    let force_done_reason = force_done_reason(args.force_done, args.reason)?;
    let checked = load_checked(&args.pipeline)?;
    if args.dry_run {
        return dry_run(&checked, args.common.json);
    }
    let vars = run::vars::resolve(checked.pipeline(), args.vars_json.as_deref(), &args.vars)
        .map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let state_dir = args.common.state_dir()?;
    let pipeline_path = std::fs::canonicalize(&args.pipeline).unwrap_or(args.pipeline.clone());
    if let super::engine::Target::Restate { ingress, remote } = args.engine.target(&state_dir)? {
        if args.worktree_cleanup {
            return Err(Failure::usage(miette::miette!(
                code = Code::RunWorktree,
                help = "remove a worker's `.spur/worktrees/<run-id>` there with `git worktree remove`",
                "`--worktree-cleanup` is not for runs on the engine: each worker keeps its worktree of the run"
            )));
        }
        let run_id = RunId::fresh();
        // A worktree on the fleet: the run's tree is its branch on the remote, from HEAD.
        let worktree = match args.worktree || worktree_by_default(&state_dir)? {
            true => Some(
                fleet_tree::publish(&state_dir, &run_id, &remote)
                    .map_err(|e| Failure::with_code(miette::Report::new(e), exit::CANNOT_START))?,
            ),
            false => None,
        };
        let run_id = run_id.to_string();
        let request = spur_restate::RunRequest {
            pipeline_path: pipeline_path.display().to_string(),
            pipeline_text: checked.pipeline().source.text().to_owned(),
            vars: args.vars,
            vars_json: args.vars_json,
            force_done_reason,
            worktree,
        };
        super::engine_run::send(&ingress, &run_id, &request)?;
        if args.engine.detach {
            return super::engine_run::detached(&run_id);
        }
        return super::engine_run::wait_and_print(
            &ingress,
            &run_id,
            args.common.json,
            Some((&state_dir, &checked)),
            None,
        );
    }
    let worktree = match args.worktree || worktree_by_default(&state_dir)? {
        true => {
            // git checks the worktree out in the sandbox, as the run's steps will run:
            // a hook or filter an earlier step put in `.git` gets no more than a step.
            let _ = spur_engine::sandbox::confine_steps(&state_dir);
            let run_id = RunId::fresh();
            let record = git_worktree::create(&state_dir, &run_id)
                .map_err(|e| Failure::with_code(miette::Report::new(e), exit::CANNOT_START))?;
            Some((run_id, record))
        }
        false => None,
    };
    let state_dir = match &worktree {
        Some((_, record)) => state_dir.with_tree(record.tree_path()),
        None => state_dir,
    };
    let settings = match args.common.settings(state_dir.clone()) {
        Ok(settings) => settings,
        Err(e) => {
            discard_unstarted(&state_dir, worktree.as_ref());
            return Err(e);
        }
    };
    super::interrupt_notice::install(args.common.state_dir.clone());
    let mut progress = Progress::new(false);
    let outcome = run::start(
        run::StartRequest {
            pipeline: &checked,
            pipeline_path,
            vars,
            force_done_reason,
            worktree: worktree.clone(),
        },
        &settings,
        &mut progress,
        &mut LifecycleDoneGate::new(settings.clone()),
    );
    drop(progress);
    if outcome.is_err() {
        discard_unstarted(&settings.state_dir, worktree.as_ref());
    }
    let completed = matches!(
        &outcome,
        Ok(o) if matches!(o.outcome, Outcome::Done | Outcome::Completed)
    );
    let result = finish_in_worktree(
        outcome,
        args.common.json,
        Some((&settings.state_dir, &checked)),
        worktree.as_ref().map(|(_, record)| record),
    );
    if let Some((_, record)) = &worktree {
        worktree_notice(
            &settings.state_dir,
            record,
            args.worktree_cleanup && completed,
        );
    }
    result
}

/// `run.worktree` of the config; an error stops the run before it starts (exit 2).
fn worktree_by_default(state_dir: &StateDir) -> Result<bool, Failure> {
    git_worktree::worktree_by_default(state_dir)
        .map_err(|e| super::config_errors::config_failure(state_dir, miette::Report::new(e)))
}

/// A worktree made for a run that did not start (no journal) goes, with its branch.
fn discard_unstarted(state_dir: &StateDir, worktree: Option<&(RunId, WorktreeRecord)>) {
    if let Some((run_id, record)) = worktree {
        let journal = state_dir.runs_dir().join(run_id.as_str());
        if !journal.exists() {
            git_worktree::discard(state_dir, record);
        }
    }
}

/// Where the run's work is (on stderr: stdout is the outcome): kept by default; with
/// `--worktree-cleanup` after a completed run, removed when clean.
pub fn worktree_notice(state_dir: &StateDir, record: &WorktreeRecord, cleanup: bool) {
    let kept = |why: &str| {
        eprintln!(
            "worktree kept{why}: {} (branch {})",
            record.path, record.branch
        );
    };
    if !cleanup {
        return kept("");
    }
    match git_worktree::remove_if_clean(state_dir, record) {
        git_worktree::Cleanup::Removed => eprintln!(
            "worktree removed: {} (branch {} kept)",
            record.path, record.branch
        ),
        git_worktree::Cleanup::Kept(why) => kept(&format!(" ({why})")),
    }
}

/// A recorded run's state directory: in the run's worktree when it ran in one, so that
/// `continue` and `retry` go on where it worked.
pub fn recorded_tree(
    state_dir: StateDir,
    run_id: &RunId,
) -> Result<(StateDir, Option<WorktreeRecord>), Failure> {
    let record = read_run(&state_dir, run_id).ok().and_then(|content| {
        content
            .records
            .into_iter()
            .next()
            .and_then(|first| match first.event {
                spur_engine::run::journal::Event::RunStarted { worktree, .. } => worktree,
                _ => None,
            })
    });
    match record {
        Some(record) => {
            let tree = git_worktree::reopen(&state_dir, &record)
                .map_err(|e| Failure::with_code(miette::Report::new(e), exit::CANNOT_START))?;
            Ok((state_dir.with_tree(tree), Some(record)))
        }
        None => Ok((state_dir, None)),
    }
}

/// Load and check a pipeline; diagnostics go to stderr. Any error → exit 2.
pub fn load_checked(path: &Path) -> Result<CheckedPipeline, Failure> {
    let source = pipeline::read_source(path).map_err(Failure::usage)?;
    let loaded = pipeline::load(&source).map_err(Failure::usage)?;
    match CheckedPipeline::new(loaded) {
        Ok((checked, _warnings)) => Ok(checked),
        Err(diagnostics) => {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            for d in diagnostics.into_iter().filter(|d| d.is_error()) {
                eprintln!("{:?}", miette::Report::new(d));
            }
            Err(Failure::usage(miette::miette!(
                code = Code::RunPipelineInvalid,
                help = "`spur check` shows every finding; fix the errors and run again",
                "{} has {errors} error(s): not running it",
                path.display()
            )))
        }
    }
}

/// Render the outcome and pick the exit code. With the state directory and the pipeline,
/// a failed run says why, from its journal (the failing way's description, the guards that
/// did not pass, the actions that failed with their logs' last lines) and what next.
pub fn finish(
    outcome: Result<RunOutcome, RunError>,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
) -> CliResult {
    finish_shown(outcome, json, ran, None, None)
}

/// [`finish`], with the run's records at hand (a run of the engine keeps no journal here)
/// and, for a run in a worktree, where its tree is (`--json` carries it; people read it
/// on stderr).
pub fn finish_recorded(
    outcome: Result<RunOutcome, RunError>,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
    records: Option<&[spur_engine::run::journal::Record]>,
    worktree: Option<&WorktreeRecord>,
) -> CliResult {
    if let Some(WorktreeRecord {
        branch,
        remote: Some(remote),
        commit: Some(commit),
        ..
    }) = worktree
    {
        eprintln!("the run's tree: branch {branch} of remote {remote}, at {commit}");
    }
    finish_shown(outcome, json, ran, records, worktree)
}

/// [`finish`] of a run in a worktree: `--json` carries it (`worktree: {path, branch, tree}`).
pub fn finish_in_worktree(
    outcome: Result<RunOutcome, RunError>,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
    worktree: Option<&WorktreeRecord>,
) -> CliResult {
    finish_shown(outcome, json, ran, None, worktree)
}

fn finish_shown(
    outcome: Result<RunOutcome, RunError>,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
    records: Option<&[spur_engine::run::journal::Record]>,
    worktree: Option<&WorktreeRecord>,
) -> CliResult {
    let outcome = outcome.map_err(|e| {
        let code = match e.class() {
            ErrorClass::Usage => exit::USAGE,
            ErrorClass::CannotStart => exit::CANNOT_START,
            ErrorClass::Failed => exit::FAILED,
        };
        Failure::with_code(miette::Report::new(e), code)
    })?;
    let certificate = outcome
        .done_gate
        .as_ref()
        .and_then(|g| g.certificate.as_ref());
    // A certificate that could not be written is an error on stderr in every output mode;
    // the run's outcome (the task is done) and exit code stand.
    if let Some(CertificateReport::Failed {
        code,
        message,
        retry,
    }) = certificate
    {
        eprintln!(
            "error[{code}]: the run's task is done (recorded in its ledger), but its done \
             certificate was not written: {message}\n  once fixed, certify it again: {retry}"
        );
    }
    let why = match (outcome.outcome, ran) {
        (Outcome::Failed, Some((state_dir, checked))) => {
            explain(state_dir, checked, &outcome, records)
        }
        _ => None,
    };
    if json {
        let shown = Shown {
            outcome: &outcome,
            failure: why.as_ref(),
            worktree,
        };
        let text = serde_json::to_string_pretty(&shown).unwrap_or_else(|_| "{}".into());
        outln!("{text}");
    } else {
        outln!("{}", summary(&outcome));
        if let Some(detail) = &outcome.detail {
            outln!("  {detail}");
        }
        if let Some(why) = &why {
            super::run_failure::render(why, &outcome.run_id);
        }
        if let Some(CertificateReport::Written { path }) = certificate {
            outln!("  done certificate written: {path}");
        }
        if outcome.outcome == Outcome::Paused {
            outln!("  resume with: {}", resume_hint(&outcome));
        }
    }
    let code = match outcome.outcome {
        Outcome::Done | Outcome::Completed => exit::SUCCESS,
        Outcome::Failed => exit::FAILED,
        Outcome::Paused => exit::PAUSED,
    };
    Ok(ExitCode::from(code))
}

/// The outcome as `--json` prints it: with why, when the run failed.
#[derive(serde::Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    outcome: &'a RunOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'a FailureExplanation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    worktree: Option<&'a WorktreeRecord>,
}

/// Why the run failed, read back from its journal (nothing when it cannot be read).
fn explain(
    state_dir: &StateDir,
    checked: &CheckedPipeline,
    outcome: &RunOutcome,
    records: Option<&[spur_engine::run::journal::Record]>,
) -> Option<FailureExplanation> {
    let run_id = RunId::parse(&outcome.run_id).ok()?;
    let records = match records {
        Some(records) => records.to_vec(),
        None => read_run(state_dir, &run_id).ok()?.records,
    };
    let run_dir = state_dir.runs_dir().join(run_id.to_string());
    run::explain::explain(&records, checked.pipeline(), &run_dir)
}

/// The command that resumes a paused run: `--answer` with the choices when it waits for
/// an answer (it is required then), none for a state pause.
fn resume_hint(o: &RunOutcome) -> String {
    match &o.question {
        Some(q) => format!(
            "spur continue {} --answer <{}>",
            o.run_id,
            q.choices.join("|")
        ),
        None => format!("spur continue {}", o.run_id),
    }
}

fn summary(o: &RunOutcome) -> String {
    let forced = if o.forced { " (forced)" } else { "" };
    format!(
        "run {}: {}{forced} at {} — {} ({}, {} transition{})",
        o.run_id,
        o.outcome.as_str(),
        o.state,
        o.terminal_reason.as_str(),
        o.reason.as_str(),
        o.iterations,
        if o.iterations == 1 { "" } else { "s" }
    )
}

fn dry_run(checked: &CheckedPipeline, json: bool) -> CliResult {
    use spur_engine::run::dry_run::DryStop;
    let plan = run::dry_run::dry_run(checked);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&plan).unwrap_or_else(|_| "{}".into())
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!("dry run of {} (no action or guard was run)", plan.pipeline);
    for step in &plan.path {
        let pause = if step.pauses { " [pauses]" } else { "" };
        let actions = if step.actions.is_empty() {
            String::new()
        } else {
            format!(": {}", step.actions.join(", "))
        };
        outln!("  {}{pause}{actions}", step.state);
    }
    match &plan.stop {
        DryStop::Terminal { state, failure } => {
            let kind = if *failure { "failure" } else { "success" };
            outln!("ends at {state} ({kind} terminal)");
        }
        DryStop::BranchPoint { state, candidates } => {
            outln!("branch point at {state}: decided only by a real run, in this order:");
            for c in candidates {
                let d = c
                    .description
                    .as_deref()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default();
                if c.guard == "none" {
                    outln!(
                        "  → {} (no guard: taken when no transition before it is){d}",
                        c.to
                    );
                } else {
                    outln!("  → {} if {} guard passes{d}", c.to, c.guard);
                }
            }
        }
        DryStop::NoPassingTransition { state } => outln!("no transition out of {state} can pass"),
        DryStop::Loop { state } => outln!("loops back to {state} (until the iteration bound)"),
    }
    Ok(ExitCode::SUCCESS)
}
