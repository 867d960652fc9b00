//! The jq worker process (`spur __jq-worker`): evaluates the filters of one run, one request
//! at a time, inside limits it sets on itself when it starts. Whatever a filter does — recurse
//! until the stack overflows, allocate until memory runs out, loop forever — ends here, in
//! this process: spur sees the worker die or stops it at the deadline, and the guard fails
//! closed with the reason (`super::sandbox`).
//!
//! - Evaluation runs on a thread with a [`WORKER_STACK_MIB`] MiB stack (deep but finite
//!   recursion has room; past it, the guard page ends the process).
//! - `RLIMIT_AS` caps the address space at [`WORKER_MEMORY_MIB`] MiB: an allocation past it
//!   fails and the process aborts, which spur reports as out of memory.
//! - Before each evaluation the soft `RLIMIT_CPU` is set to the CPU time used so far plus the
//!   evaluation's deadline (rounded up) plus one second, so a worker whose spur died
//!   mid-evaluation still ends; one whose spur died while it waited reads the end of its
//!   input and exits.
//! - `RLIMIT_CORE` is 0: a crash writes no core file.

use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use super::program::{JqEvalError, JqLimits, JqProgram};
use super::wire::{read_frame, write_frame, Reply, Request};

/// The evaluation thread's stack, in MiB.
pub const WORKER_STACK_MIB: usize = 64;

/// The worker's address-space limit (`RLIMIT_AS`), in MiB.
pub const WORKER_MEMORY_MIB: u64 = 1024;

/// Compiled filters kept by the worker, by text and variable names (a run has few).
const CACHE_ENTRIES: usize = 256;

/// Serve requests on stdin until it ends. The entry point of `spur __jq-worker`.
pub fn serve() -> ExitCode {
    set_own_limits();
    // A panic is reported in the reply, not printed.
    panic::set_hook(Box::new(|_| {}));
    let evaluator = std::thread::Builder::new()
        .name("spur-jq-worker".into())
        .stack_size(WORKER_STACK_MIB << 20)
        .spawn(serve_loop);
    match evaluator.map(std::thread::JoinHandle::join) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

fn set_own_limits() {
    use rustix::process::{setrlimit, Resource, Rlimit};
    let cap = |bytes: u64| Rlimit {
        current: Some(bytes),
        maximum: Some(bytes),
    };
    // Best effort: a limit that cannot be set (already lower) leaves the stricter one.
    let _ = setrlimit(Resource::As, cap(WORKER_MEMORY_MIB << 20));
    disable_core_dumps();
}

/// A crash of this process writes no core file (`RLIMIT_CORE` = 0).
pub fn disable_core_dumps() {
    use rustix::process::{setrlimit, Resource, Rlimit};
    let _ = setrlimit(
        Resource::Core,
        Rlimit {
            current: Some(0),
            maximum: Some(0),
        },
    );
}

/// Let this process use `seconds` more CPU time from now (the soft limit; SIGXCPU past it).
fn allow_cpu_seconds(seconds: u64) {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    use rustix::time::{clock_gettime, ClockId};
    let used = clock_gettime(ClockId::ProcessCPUTime);
    let used = u64::try_from(used.tv_sec).unwrap_or(0);
    let hard = getrlimit(Resource::Cpu).maximum;
    let wanted = used.saturating_add(seconds);
    let current = Some(hard.map_or(wanted, |h| wanted.min(h)));
    let _ = setrlimit(
        Resource::Cpu,
        Rlimit {
            current,
            maximum: hard,
        },
    );
}

fn serve_loop() -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    send(&mut output, &Reply::Ready)?;
    let mut cache: HashMap<(String, Vec<String>), JqProgram> = HashMap::new();
    while let Some(header) = read_frame(&mut input)? {
        let Some(value) = read_frame(&mut input)? else {
            return Ok(());
        };
        // Everything the evaluation built is dropped before the reply goes out, so a crash
        // while dropping (a value nested too deeply) is this request's, not the next one's.
        let reply = serialize(&handle(&header, &value, &mut cache));
        write_frame(&mut output, &reply)?;
    }
    Ok(())
}

fn send(output: &mut impl Write, reply: &Reply) -> io::Result<()> {
    write_frame(output, &serialize(reply))
}

fn serialize(reply: &Reply) -> Vec<u8> {
    match serde_json::to_vec(reply) {
        Ok(bytes) if bytes.len() <= super::wire::MAX_FRAME => bytes,
        Ok(_) => failed("the outputs are larger than a reply may be"),
        Err(e) => failed(&format!("the outputs cannot be sent: {e}")),
    }
}

fn failed(why: &str) -> Vec<u8> {
    let reply = Reply::Failed(JqEvalError::Crashed(why.to_owned()));
    serde_json::to_vec(&reply).unwrap_or_default()
}

fn handle(
    header: &[u8],
    value: &[u8],
    cache: &mut HashMap<(String, Vec<String>), JqProgram>,
) -> Reply {
    let request: Request = match serde_json::from_slice(header) {
        Ok(r) => r,
        Err(e) => return Reply::Failed(JqEvalError::Crashed(format!("bad request: {e}"))),
    };
    let input: Value = match serde_json::from_slice(value) {
        Ok(v) => v,
        Err(e) => return Reply::Failed(JqEvalError::Runtime(format!("the input: {e}"))),
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| evaluate(&request, &input, cache)));
    match outcome {
        Ok(Ok(outputs)) => Reply::Outputs(outputs),
        Ok(Err(e)) => Reply::Failed(e),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a jq builtin panicked".to_owned());
            // The cache may hold a half-built entry: start afresh.
            cache.clear();
            Reply::Failed(JqEvalError::Crashed(format!("panicked: {message}")))
        }
    }
}

fn evaluate(
    request: &Request,
    input: &Value,
    cache: &mut HashMap<(String, Vec<String>), JqProgram>,
) -> Result<Vec<Value>, JqEvalError> {
    let key = (request.expr.clone(), request.vars.clone());
    let program = match cache.get(&key) {
        Some(p) => p.clone(),
        None => {
            let names: Vec<&str> = request.vars.iter().map(String::as_str).collect();
            let program = JqProgram::compile(&request.expr, &names)
                .map_err(|e| JqEvalError::Runtime(format!("the filter does not compile: {e}")))?;
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(key, program.clone());
            program
        }
    };
    let timeout = Duration::from_millis(request.timeout_ms);
    allow_cpu_seconds(timeout.as_secs() + 2);
    let limits = JqLimits {
        timeout,
        max_input_bytes: request.max_input_bytes,
        max_outputs: request.max_outputs,
        max_output_depth: request.max_output_depth,
    };
    program.evaluate(input, &request.values, &limits, request.take)
}
