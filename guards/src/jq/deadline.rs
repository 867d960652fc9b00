//! Running a jq evaluation under a deadline. jaq has no fuel or interrupt API, so an
//! evaluation runs on a pooled worker thread while the caller waits with `recv_timeout`;
//! if the deadline passes, the caller gets an error (the guard fails closed) and the worker
//! is abandoned: it finishes — or spins — in the background and is never reused. An
//! abandoned runaway keeps one CPU busy until spur exits; the run itself never hangs.

use std::sync::mpsc;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

struct Worker {
    jobs: mpsc::Sender<Job>,
}

/// Idle workers, ready for a job.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Worker stacks are large so deep (but finite) recursion in a filter has room.
const WORKER_STACK: usize = 64 << 20;

fn spawn_worker() -> Option<Worker> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    thread::Builder::new()
        .name("spur-jq".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            while let Ok(job) = inbox.recv() {
                job();
            }
        })
        .ok()?;
    Some(Worker { jobs })
}

/// Why [`run`] produced no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    DeadlineExceeded,
    /// The job panicked or no worker thread could be started.
    Crashed,
}

/// Run `job` on a worker; wait at most `timeout` for its result.
pub(crate) fn run<T: Send + 'static>(
    timeout: Duration,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Overrun> {
    let popped = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
    let Some(worker) = popped.or_else(spawn_worker) else {
        return Err(Overrun::Crashed);
    };
    let (reply, result) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = reply.send(job());
    });
    if worker.jobs.send(job).is_err() {
        return Err(Overrun::Crashed);
    }
    match result.recv_timeout(timeout) {
        Ok(value) => {
            IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
            Ok(value)
        }
        // Dropping `worker` disconnects its inbox: once the runaway job ends, it exits.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(Overrun::DeadlineExceeded),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Overrun::Crashed),
    }
}
