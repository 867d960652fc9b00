//! spur's side of the jq worker (`super::worker`): one worker process per sandbox, started on
//! the first evaluation and kept for the next ones. Each evaluation waits for its reply at
//! most its deadline; past it the worker is killed (and reaped) and the evaluation fails with
//! a timeout. A worker that dies mid-evaluation fails it with the reason read from how it
//! died (out of memory, stack overflow, a signal). The next evaluation starts a fresh worker.

use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bounded::shallow;
use super::program::{JqEvalError, JqLimits, JqProgram};
use super::wire::{read_frame, write_frame, Reply, Request};
use super::worker::WORKER_MEMORY_MIB;

/// How long a fresh worker may take to say it is ready (a loaded machine is slow to exec).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The most of a dead worker's stderr that is read to tell why it died.
const STDERR_CAP: u64 = 64 << 10;

/// Where jq evaluations run. Cheap to clone; clones share the worker.
#[derive(Clone)]
pub struct JqSandbox {
    backend: Arc<Backend>,
}

enum Backend {
    Worker {
        command: WorkerCommand,
        running: Mutex<Option<Worker>>,
    },
    InProcess,
    Unavailable(String),
}

struct WorkerCommand {
    program: PathBuf,
    args: Vec<OsString>,
}

impl fmt::Debug for JqSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.backend {
            Backend::Worker { command, .. } => f
                .debug_struct("JqSandbox::Worker")
                .field("program", &command.program)
                .field("args", &command.args)
                .finish_non_exhaustive(),
            Backend::InProcess => f.write_str("JqSandbox::InProcess"),
            Backend::Unavailable(why) => {
                f.debug_tuple("JqSandbox::Unavailable").field(why).finish()
            }
        }
    }
}

impl JqSandbox {
    /// Evaluate in a worker process started as `program args…` (for spur: its own
    /// executable and `__jq-worker`), started on first use (or by [`JqSandbox::start_early`]).
    pub fn worker(program: impl Into<PathBuf>, args: impl IntoIterator<Item = OsString>) -> Self {
        Self::with(Backend::Worker {
            command: WorkerCommand {
                program: program.into(),
                args: args.into_iter().collect(),
            },
            running: Mutex::new(None),
        })
    }

    /// Evaluate on the calling thread, with no containment: a hostile filter can abort the
    /// process or run on. For tests and for embedders that trust their filters; the spur
    /// binary never uses it.
    pub fn in_process() -> Self {
        Self::with(Backend::InProcess)
    }

    /// Every evaluation fails closed with `why` (no worker executable could be found).
    pub fn unavailable(why: impl Into<String>) -> Self {
        Self::with(Backend::Unavailable(why.into()))
    }

    fn with(backend: Backend) -> Self {
        Self {
            backend: Arc::new(backend),
        }
    }

    /// All outputs of `program` for `input` (at most `limits.max_outputs`).
    pub fn eval(
        &self,
        program: &JqProgram,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Vec<Value>, JqEvalError> {
        self.evaluate(program, input, var_values, limits, usize::MAX)
    }

    /// The first output only (`None` if there is none).
    pub fn first(
        &self,
        program: &JqProgram,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Option<Value>, JqEvalError> {
        Ok(self.evaluate(program, input, var_values, limits, 1)?.pop())
    }

    /// Start the worker now, if none is running, without waiting for it to be ready (the
    /// first evaluation waits): for a run that knows it will evaluate jq, so the worker's
    /// start-up overlaps with the run's own.
    pub fn start_early(&self) {
        if let Backend::Worker { command, running } = &*self.backend {
            let mut slot = lock(running);
            if slot.is_none() {
                *slot = Worker::spawn(command).ok();
            }
        }
    }

    /// The id of the worker process now running, if any.
    pub fn worker_pid(&self) -> Option<u32> {
        match &*self.backend {
            Backend::Worker { running, .. } => lock(running).as_ref().map(|w| w.child.id()),
            _ => None,
        }
    }

    fn evaluate(
        &self,
        program: &JqProgram,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
        take: usize,
    ) -> Result<Vec<Value>, JqEvalError> {
        let (command, running) = match &*self.backend {
            Backend::InProcess => return program.evaluate(input, var_values, limits, take),
            Backend::Unavailable(why) => return Err(JqEvalError::WorkerUnavailable(why.clone())),
            Backend::Worker { command, running } => (command, running),
        };
        program.precheck(input, var_values, limits)?;
        if in_fragment(program, input, var_values) {
            return in_process(program, input, var_values, limits, take);
        }
        let request = Request {
            expr: program.source().to_owned(),
            vars: program.var_names().to_vec(),
            values: var_values.to_vec(),
            take,
            max_outputs: limits.max_outputs,
            max_output_depth: limits.max_output_depth,
            timeout_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
            max_input_bytes: limits.max_input_bytes,
        };
        let unsendable = |e: serde_json::Error| JqEvalError::Crashed(format!("cannot send: {e}"));
        let header = serde_json::to_vec(&request).map_err(unsendable)?;
        let value = serde_json::to_vec(input).map_err(unsendable)?;

        let mut slot = lock(running);
        // A worker that died between evaluations (nothing was asked of it) is replaced
        // quietly; one that dies during this evaluation fails it.
        if let Some(worker) = slot.as_mut() {
            if let Err(e) = worker.wait_until_ready() {
                *slot = None;
                return Err(e);
            }
            if !matches!(worker.child.try_wait(), Ok(None)) || worker.send(&header, &value).is_err()
            {
                if let Some(dead) = slot.take() {
                    dead.stop();
                }
            } else {
                return finish(&mut slot, limits.timeout);
            }
        }
        let mut worker = Worker::start(command)?;
        if let Err(e) = worker.send(&header, &value) {
            let why = worker.stop();
            return Err(why.unwrap_or_else(|| {
                JqEvalError::WorkerUnavailable(format!("cannot send the request: {e}"))
            }));
        }
        *slot = Some(worker);
        finish(&mut slot, limits.timeout)
    }
}

/// Whether this evaluation is bounded (`super::bounded`): a filter in the fragment on values
/// nested no deeper than it allows.
fn in_fragment(program: &JqProgram, input: &Value, var_values: &[Value]) -> bool {
    !program.needs_worker() && shallow(input) && var_values.iter().all(shallow)
}

/// A bounded evaluation on the calling thread. It cannot overflow the stack or run long;
/// a panic in a builtin still fails only this evaluation.
fn in_process(
    program: &JqProgram,
    input: &Value,
    var_values: &[Value],
    limits: &JqLimits,
    take: usize,
) -> Result<Vec<Value>, JqEvalError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        program.evaluate(input, var_values, limits, take)
    }))
    .unwrap_or_else(|_| Err(JqEvalError::Crashed("a jq builtin panicked".to_owned())))
}

/// Wait for the reply of the request just sent to the worker in `slot`.
fn finish(slot: &mut Option<Worker>, timeout: Duration) -> Result<Vec<Value>, JqEvalError> {
    let Some(worker) = slot.as_mut() else {
        return Err(JqEvalError::WorkerUnavailable("no worker".into()));
    };
    match worker.reply_within(timeout) {
        Some(Some(Reply::Outputs(outputs))) => Ok(outputs),
        Some(Some(Reply::Failed(e @ JqEvalError::OutputTooDeep(_)))) => {
            // The worker left that value undropped (it would recurse as deep): retire it.
            if let Some(worker) = slot.take() {
                worker.kill();
            }
            Err(e)
        }
        Some(Some(Reply::Failed(e))) => Err(e),
        Some(Some(Reply::Ready) | None) => {
            let dead = slot.take().map(Worker::stop);
            Err(dead.flatten().unwrap_or_else(|| {
                JqEvalError::Crashed("the jq worker stopped answering".to_owned())
            }))
        }
        None => {
            if let Some(worker) = slot.take() {
                worker.kill();
            }
            Err(JqEvalError::DeadlineExceeded(timeout))
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: Option<ChildStderr>,
    /// It said `Ready`.
    ready: bool,
}

impl Worker {
    /// Start a worker and wait until it is ready.
    fn start(command: &WorkerCommand) -> Result<Worker, JqEvalError> {
        let mut worker = Worker::spawn(command)?;
        worker.wait_until_ready()?;
        Ok(worker)
    }

    /// Start a worker; it says it is ready in its first reply.
    fn spawn(command: &WorkerCommand) -> Result<Worker, JqEvalError> {
        let unavailable = |why: String| JqEvalError::WorkerUnavailable(why);
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a Ctrl-C meant for spur does not kill an evaluation
            // half-way (spur stops at the next step and the worker ends with it).
            .process_group(0)
            .spawn()
            .map_err(|e| unavailable(format!("cannot start {}: {e}", command.program.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(unavailable("no pipes to the worker".into()));
        };
        let stderr = child.stderr.take();
        Ok(Worker {
            child,
            stdin,
            stdout,
            stderr,
            ready: false,
        })
    }

    /// Wait for a started worker's first reply, `Ready`; on failure the worker is reaped.
    fn wait_until_ready(&mut self) -> Result<(), JqEvalError> {
        if self.ready {
            return Ok(());
        }
        let unavailable = |why: &str| JqEvalError::WorkerUnavailable(why.to_owned());
        match self.reply_within(STARTUP_TIMEOUT) {
            Some(Some(Reply::Ready)) => {
                self.ready = true;
                Ok(())
            }
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(unavailable("the worker did not start in time"))
            }
            Some(_) => Err(self.reap().unwrap_or_else(|| {
                unavailable("the worker did not start (is this spur's executable?)")
            })),
        }
    }

    /// The next reply, if one comes within `timeout` (`None`); `Some(None)` when the
    /// worker's output ended or made no sense (it died).
    fn reply_within(&mut self, timeout: Duration) -> Option<Option<Reply>> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let left = Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
            match poll(&mut fds, Some(&left)) {
                Ok(0) => {}
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return Some(None),
            }
        }
        // Readable: a reply (the worker writes each in one go) or the end of its output.
        Some(match read_frame(&mut self.stdout) {
            Ok(Some(bytes)) => serde_json::from_slice::<Reply>(&bytes).ok(),
            _ => None,
        })
    }

    fn send(&mut self, header: &[u8], value: &[u8]) -> std::io::Result<()> {
        write_frame(&mut self.stdin, header)?;
        write_frame(&mut self.stdin, value)
    }

    /// Kill and reap the worker.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Reap a worker that died (killing it first if it did not) and say why it died.
    fn stop(mut self) -> Option<JqEvalError> {
        self.reap()
    }

    fn reap(&mut self) -> Option<JqEvalError> {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => status,
            _ => {
                let _ = self.child.kill();
                self.child.wait().ok()?
            }
        };
        let mut stderr = String::new();
        if let Some(s) = self.stderr.take() {
            let _ = s.take(STDERR_CAP).read_to_string(&mut stderr);
        }
        Some(death_reason(status, &stderr))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // An idle worker would exit at the end of its input; do not wait for that.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a worker died, from its exit status and what the Rust runtime wrote to its stderr.
fn death_reason(status: ExitStatus, stderr: &str) -> JqEvalError {
    const SIGXCPU: i32 = 24;
    if stderr.contains("memory allocation of") {
        return JqEvalError::OutOfMemory {
            limit_mib: WORKER_MEMORY_MIB,
        };
    }
    if stderr.contains("has overflowed its stack") {
        return JqEvalError::Crashed(
            "stack overflow: the filter recursed, or a value it built nests, too deeply".into(),
        );
    }
    match status.signal() {
        Some(SIGXCPU) => JqEvalError::Crashed("the jq worker used up its CPU time".into()),
        Some(signal) => {
            JqEvalError::Crashed(format!("the jq worker was killed by signal {signal}"))
        }
        None => JqEvalError::Crashed(format!("the jq worker exited ({status})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_for_a_dead_worker() {
        let abort = ExitStatus::from_raw(6);
        assert!(matches!(
            death_reason(abort, "memory allocation of 4000000000 bytes failed\n"),
            JqEvalError::OutOfMemory { .. }
        ));
        let overflow = death_reason(
            abort,
            "\nthread 'spur-jq-worker' has overflowed its stack\nfatal runtime error: stack overflow\n",
        );
        assert!(
            overflow.to_string().contains("stack overflow"),
            "{overflow}"
        );
        let killed = death_reason(ExitStatus::from_raw(9), "");
        assert_eq!(
            killed.to_string(),
            "crashed: the jq worker was killed by signal 9"
        );
    }

    #[test]
    fn in_process_and_unavailable_sandboxes() {
        let program = JqProgram::compile(".a", &[]).unwrap();
        let input = serde_json::json!({"a": 1});
        let limits = JqLimits::default();
        assert_eq!(
            JqSandbox::in_process().first(&program, &input, &[], &limits),
            Ok(Some(serde_json::json!(1)))
        );
        let err = JqSandbox::unavailable("no executable")
            .first(&program, &input, &[], &limits)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the jq worker is unavailable: no executable"
        );
    }
}
