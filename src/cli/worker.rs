//! `spur worker --listen ADDR`: serve runs of a Restate server from this checkout. The
//! worker runs each run's steps here (its actions, in this project's directory) and
//! journals them on the server, so any worker of the fleet can go on with a run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use spur_engine::diagnostic::Code;
use spur_engine::pipeline::{self, CheckedPipeline};
use spur_engine::run::fleet_tree::FleetTree;
use spur_engine::run::git_worktree::WorktreeRecord;
use spur_engine::run::journal::Record;
use spur_engine::run::{self, LockError, RunError, RunId, RunObserver, StepJournal};
use spur_engine::source::SourceFile;
use spur_engine::task::lifecycle_done_gate::LifecycleDoneGate;
use spur_guards::jq_shim::JqMode;
use spur_restate::protocol::{AmbiguousAction, LockedTask, ReplyError, RunReply, RunRequest};

use super::run::CommonRunArgs;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to listen for the server (host:port).
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// The state directory (default: the nearest `.spur/` up from here, else ./.spur).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    let common = CommonRunArgs {
        json: false,
        state_dir: args.state_dir,
        jq: JqMode::Auto,
    };
    // Checked once now, so a worker with a broken config does not start.
    let settings_check = common.settings(common.state_dir()?)?;
    drop(settings_check);
    eprintln!("spur: worker listening on {}", args.listen);
    spur_restate::serve(args.listen, Arc::new(CliWorker { common })).map_err(|e| {
        Failure::with_code(
            miette::miette!(
                code = Code::RunEngine,
                help = "pick a free address with --listen",
                "cannot serve on {}: {e}",
                args.listen
            ),
            super::failure::exit::CANNOT_START,
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

struct CliWorker {
    common: CommonRunArgs,
}

/// Keeps each record the run tells, for the reply.
#[derive(Default)]
struct Recorded(Vec<Record>);

impl RunObserver for Recorded {
    fn record(&mut self, record: &Record) {
        self.0.push(record.clone());
    }
}

impl spur_restate::Worker for CliWorker {
    fn run(&self, run_id: &str, request: RunRequest, journal: &mut dyn StepJournal) -> RunReply {
        let mut recorded = Recorded::default();
        let mut worktree = None;
        let result = self.start(run_id, &request, journal, &mut recorded, &mut worktree);
        let mut reply = RunReply {
            records: recorded.0,
            worktree,
            ..RunReply::default()
        };
        match result {
            Ok(outcome) => {
                reply.detail = outcome.detail.clone();
                reply.outcome = Some(outcome);
            }
            Err(message) => reply.error = Some(*message),
        }
        reply
    }
}

impl CliWorker {
    fn start(
        &self,
        run_id: &str,
        request: &RunRequest,
        journal: &mut dyn StepJournal,
        observer: &mut dyn RunObserver,
        worktree: &mut Option<WorktreeRecord>,
    ) -> Result<run::RunOutcome, Box<ReplyError>> {
        let plain = |code: Code, message: String| {
            Box::new(ReplyError {
                code: code.to_string(),
                message,
                ambiguous: None,
                locked: None,
            })
        };
        let checked = checked(&request.pipeline_path, &request.pipeline_text)
            .map_err(|m| plain(Code::RunPipelineInvalid, m))?;
        let vars = run::vars::resolve(
            checked.pipeline(),
            request.vars_json.as_deref(),
            &request.vars,
        )
        .map_err(|e| plain(Code::UsageVarSyntax, e.to_string()))?;
        let state_dir = self
            .common
            .state_dir()
            .map_err(|f| plain(Code::UsageCwd, f.report.to_string()))?;
        let run_id = RunId::parse(run_id).map_err(|e| plain(Code::RunEngine, e.to_string()))?;
        // A run in a worktree works in this checkout's `.spur/worktrees/<run-id>`.
        let mut tree = match &request.worktree {
            Some(spec) => Some(
                FleetTree::new(&state_dir, &run_id, spec.clone())
                    .map_err(|e| plain(Code::RunWorktree, e.to_string()))?,
            ),
            None => None,
        };
        let state_dir = match &tree {
            Some(tree) => state_dir.with_tree(tree.tree()),
            None => state_dir,
        };
        let settings = self
            .common
            .settings(state_dir)
            .map_err(|f| plain(Code::RunEngine, f.report.to_string()))?;
        let outcome = run::start_journaled(
            run::StartRequest {
                pipeline: &checked,
                pipeline_path: PathBuf::from(&request.pipeline_path),
                vars,
                force_done_reason: request.force_done_reason.clone(),
                worktree: tree.as_ref().map(|t| {
                    let mut record = t.record();
                    record.commit = None;
                    (run_id.clone(), record)
                }),
            },
            &settings,
            run_id,
            journal,
            &mut LifecycleDoneGate::new(settings.clone()),
            observer,
            tree.as_mut(),
        );
        *worktree = tree.map(|t| t.record());
        outcome.map_err(|e| Box::new(reply_error(&e)))
    }
}

fn reply_error(e: &RunError) -> ReplyError {
    let code = miette::Diagnostic::code(e)
        .map(|c| c.to_string())
        .unwrap_or_default();
    ReplyError {
        code,
        // The client names the engine itself.
        message: match e {
            RunError::Engine(why) => why.clone(),
            _ => e.to_string(),
        },
        ambiguous: match e {
            RunError::Ambiguous {
                state,
                index,
                kind,
                log,
                ..
            } => Some(AmbiguousAction {
                state: state.clone(),
                index: *index,
                kind: kind.clone(),
                log: log.clone(),
            }),
            _ => None,
        },
        locked: match e {
            RunError::Locked(LockError::Held { wbs, holder, path }) => Some(LockedTask {
                wbs: wbs.clone(),
                holder: holder.clone(),
                path: path.clone(),
            }),
            _ => None,
        },
    }
}

/// The pipeline the client sent, checked here as the client checked it.
fn checked(path: &str, text: &str) -> Result<CheckedPipeline, String> {
    let loaded = pipeline::load(&SourceFile::new(path, text)).map_err(|e| format!("{e:?}"))?;
    CheckedPipeline::new(loaded)
        .map(|(checked, _)| checked)
        .map_err(|d| format!("{path}: {} finding(s)", d.len()))
}
