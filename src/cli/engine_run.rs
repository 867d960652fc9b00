//! `spur run` and `spur continue` against a Restate server: send the run (or the answer),
//! then wait for its reply and print it as a local run prints (its records as progress
//! on stderr, then the outcome), or print the run id at once with `--detach`. While the
//! run waits at a pause the wait ends with exit 3, as a local paused run does.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use spur_engine::diagnostic::Code;
use spur_engine::pipeline::CheckedPipeline;
use spur_engine::run::{LockError, RunError, RunObserver};
use spur_engine::store::state_dir::StateDir;
use spur_restate::client;
use spur_restate::protocol::RunReply;

use super::failure::exit;
use super::run_progress::Progress;
use super::{CliResult, Failure};

/// How often a waiting client asks whether the run paused.
const POLL: Duration = Duration::from_millis(200);

pub(crate) fn engine_failure(what: &str, e: impl std::fmt::Display) -> Failure {
    Failure::with_code(
        miette::miette!(
            code = Code::RunEngine,
            help = "is the Restate server up (`--ingress`, `engine.ingress`) and a worker registered (`spur engine register`)?",
            "{what}: {e}"
        ),
        exit::CANNOT_START,
    )
}

/// Start run `run_id` on the server.
pub fn send(
    ingress: &str,
    run_id: &str,
    request: &spur_restate::RunRequest,
) -> Result<(), Failure> {
    client::submit(ingress, run_id, request)
        .map_err(|e| engine_failure("cannot start the run on the engine", e))
}

/// Answer the pause run `run_id` waits at; the pause answered (to tell it from a later
/// one while waiting). An answer its question does not accept is refused as a local
/// `spur continue` refuses it (the server refuses it too).
pub fn answer(
    ingress: &str,
    run_id: &str,
    answer: &str,
    answered_by: Option<&str>,
) -> Result<Option<String>, Failure> {
    let status = client::status(ingress, run_id)
        .map_err(|e| engine_failure(&format!("cannot read run {run_id}"), e))?;
    let question = status.note.and_then(|n| n.outcome.question);
    if let Some(q) = question.filter(|q| !q.accepts(answer)) {
        let e = RunError::AnswerInvalid {
            answer: answer.to_owned(),
            prompt: q.prompt.clone(),
            choices: q.shown_choices(", "),
        };
        return Err(Failure::with_code(miette::Report::new(e), exit::USAGE));
    }
    client::answer(ingress, run_id, answer, answered_by)
        .map_err(|e| engine_failure(&format!("cannot answer run {run_id}"), e))?;
    Ok(status.paused)
}

/// `--detach`: the run id, nothing else.
pub fn detached(run_id: &str) -> CliResult {
    outln!("{run_id}");
    Ok(ExitCode::SUCCESS)
}

/// Wait for run `run_id` to end or pause, and print it.
/// `answered`: the pause just answered (the run may still show it a moment).
pub fn wait_and_print(
    ingress: &str,
    run_id: &str,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
    answered: Option<&str>,
) -> CliResult {
    let (tx, rx) = mpsc::channel();
    let (attach_ingress, attach_id) = (ingress.to_owned(), run_id.to_owned());
    std::thread::spawn(move || {
        let _ = tx.send(client::wait(&attach_ingress, &attach_id));
    });
    let reply = loop {
        match rx.recv_timeout(POLL) {
            Ok(reply) => break reply.map_err(|e| engine_failure("the run's reply", e))?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(engine_failure(
                    "the run's reply",
                    "the waiting thread stopped",
                ))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(status) = client::status(ingress, run_id) {
                    if status.paused.is_some() && status.paused.as_deref() != answered {
                        return paused(ingress, run_id, json, ran, status.note);
                    }
                }
            }
        }
    };
    print_reply(reply, run_id, json, ran)
}

/// The run waits at a pause: print it as a local run that paused there (its records so
/// far, then the paused outcome), or, without the run's note, its id and how to go on.
fn paused(
    ingress: &str,
    run_id: &str,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
    note: Option<spur_engine::run::PauseNote>,
) -> CliResult {
    if let Some(note) = note {
        let records = client::records(ingress, run_id).unwrap_or_default();
        let mut progress = Progress::new(json);
        progress.run_id(run_id);
        for record in &records {
            progress.record(record);
        }
        drop(progress);
        let mut outcome = note.outcome;
        outcome.detail = note.detail;
        return super::run::finish_recorded(Ok(outcome), json, ran, Some(&records), None);
    }
    if json {
        outln!(
            "{}",
            serde_json::json!({"runId": run_id, "outcome": "paused", "engine": "restate"})
        );
    } else {
        outln!("paused: run {run_id} waits on the engine");
        outln!("  resume with: spur continue {run_id} [--answer <A>]");
    }
    Ok(ExitCode::from(exit::PAUSED))
}

fn print_reply(
    reply: RunReply,
    run_id: &str,
    json: bool,
    ran: Option<(&StateDir, &CheckedPipeline)>,
) -> CliResult {
    let mut progress = Progress::new(json);
    progress.run_id(run_id);
    for record in &reply.records {
        progress.record(record);
    }
    drop(progress);
    let outcome = match (reply.outcome, reply.error) {
        (Some(mut outcome), _) => {
            outcome.detail = reply.detail;
            Ok(outcome)
        }
        (None, Some(error)) => Err(match (error.ambiguous, error.locked) {
            (_, Some(l)) => RunError::Locked(LockError::Held {
                wbs: l.wbs,
                holder: l.holder,
                path: l.path,
            }),
            (Some(a), None) => RunError::Ambiguous {
                run_id: run_id.to_owned(),
                state: a.state,
                index: a.index,
                kind: a.kind,
                log: a.log,
            },
            (None, None) => RunError::Engine(format!("{} [{}]", error.message, error.code)),
        }),
        (None, None) => Err(RunError::Engine("the run answered nothing".to_owned())),
    };
    super::run::finish_recorded(
        outcome,
        json,
        ran,
        Some(&reply.records),
        reply.worktree.as_ref(),
    )
}
