//! The runner's thread and the workflow's handler, joined: the runner (synchronous, on a
//! blocking thread) asks for each step through [`ChannelJournal`]; the handler journals it
//! with `ctx.run` and tells the runner to run the step's body (a first run) or only hands
//! back the journaled value (a replay).

use spur_engine::run::StepJournal;
use tokio::sync::{mpsc, oneshot};

/// A request from the runner's thread to the handler.
pub(crate) enum Call {
    /// Journal the step `name`.
    Step {
        name: String,
        to_runner: std::sync::mpsc::Sender<ToRunner>,
        /// The body's value, or why it could not be made in this attempt.
        value: oneshot::Receiver<Result<String, String>>,
    },
    /// Take the run lock of task `wbs`.
    Lock {
        wbs: String,
        reply: oneshot::Sender<Result<Option<String>, String>>,
    },
    /// Read the server's records of task `wbs` (`FleetRecords` as JSON).
    TaskRecords {
        wbs: String,
        reply: oneshot::Sender<Result<String, String>>,
    },
    /// Append a writer's `FleetWrite` (JSON) to task `wbs`'s records; `certify`: the
    /// done gate's.
    TaskWrite {
        wbs: String,
        write: String,
        certify: bool,
        reply: oneshot::Sender<Result<(), String>>,
    },
    /// Wait on the durable promise `name`; `note` tells clients what for.
    Promise {
        name: String,
        note: String,
        reply: oneshot::Sender<Result<String, String>>,
    },
}

/// What the handler tells the runner about a step.
pub(crate) enum ToRunner {
    /// Run the body now: its value goes back on the step's channel.
    Execute,
    /// The step's journaled value.
    Done(String),
    /// The step could not be journaled.
    Failed(String),
}

/// The runner's side: a [`StepJournal`] whose steps the handler journals.
pub(crate) struct ChannelJournal {
    pub(crate) calls: mpsc::UnboundedSender<Call>,
}

const GONE: &str = "the workflow's handler stopped (the invocation was cancelled or retried)";

impl StepJournal for ChannelJournal {
    fn step(
        &mut self,
        name: &str,
        body: &mut dyn FnMut() -> Result<String, String>,
    ) -> Result<String, String> {
        let (to_runner, from_handler) = std::sync::mpsc::channel();
        let (value_tx, value) = oneshot::channel();
        self.calls
            .send(Call::Step {
                name: name.to_owned(),
                to_runner,
                value,
            })
            .map_err(|_| GONE.to_owned())?;
        let mut value_tx = Some(value_tx);
        loop {
            match from_handler.recv().map_err(|_| GONE.to_owned())? {
                ToRunner::Execute => {
                    let made = body();
                    if let Some(tx) = value_tx.take() {
                        tx.send(made).map_err(|_| GONE.to_owned())?;
                    }
                }
                ToRunner::Done(value) => return Ok(value),
                ToRunner::Failed(why) => return Err(why),
            }
        }
    }

    fn promise(&mut self, name: &str, note: &str) -> Result<String, String> {
        let (reply, answer) = oneshot::channel();
        self.calls
            .send(Call::Promise {
                name: name.to_owned(),
                note: note.to_owned(),
                reply,
            })
            .map_err(|_| GONE.to_owned())?;
        answer.blocking_recv().map_err(|_| GONE.to_owned())?
    }

    fn lock_task(&mut self, wbs: &str) -> Result<Option<String>, String> {
        let (reply, holder) = oneshot::channel();
        self.calls
            .send(Call::Lock {
                wbs: wbs.to_owned(),
                reply,
            })
            .map_err(|_| GONE.to_owned())?;
        holder.blocking_recv().map_err(|_| GONE.to_owned())?
    }

    fn task_records(&mut self, wbs: &str) -> Option<Result<String, String>> {
        let (reply, records) = oneshot::channel();
        let sent = self.calls.send(Call::TaskRecords {
            wbs: wbs.to_owned(),
            reply,
        });
        if sent.is_err() {
            return Some(Err(GONE.to_owned()));
        }
        Some(
            records
                .blocking_recv()
                .map_err(|_| GONE.to_owned())
                .and_then(|r| r),
        )
    }

    fn task_write(&mut self, wbs: &str, write: &str, certify: bool) -> Result<(), String> {
        let (reply, done) = oneshot::channel();
        self.calls
            .send(Call::TaskWrite {
                wbs: wbs.to_owned(),
                write: write.to_owned(),
                certify,
                reply,
            })
            .map_err(|_| GONE.to_owned())?;
        done.blocking_recv().map_err(|_| GONE.to_owned())?
    }
}
