//! A `spur task verdict|update|certify` from a run's step: sent to the run's process
//! through `SPUR_RUN_SOCKET` (see `spur_engine::run::nested_call`) instead of writing
//! spur's state from inside the sandbox; what the run answers is printed as the call's
//! own output, with its exit code.

use std::io::Write;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::run::nested_call::{self, NestedRequest, RUN_SOCKET_VAR};

use super::failure::{finish, Failure};

/// The call's exit code when this process is a step's call the run answers; `None` to go
/// on as a plain `spur`.
pub fn forward_to_run(args: &[std::ffi::OsString]) -> Option<ExitCode> {
    let socket = std::env::var_os(RUN_SOCKET_VAR).filter(|s| !s.is_empty())?;
    let argv: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if !nested_call::is_forwarded(&argv) {
        return None;
    }
    let request = NestedRequest {
        argv,
        cwd: std::env::current_dir().unwrap_or_else(|_| ".".into()),
        run_id: std::env::var("SPUR_RUN_ID").ok(),
    };
    let reply = match nested_call::call(std::path::Path::new(&socket), &request) {
        Ok(reply) => reply,
        Err(e) => {
            return Some(finish(Err(Failure::with_code(
                miette::miette!(
                    code = Code::UsageNestedUnreachable,
                    help = "a step's `spur task` calls go through its run; run this outside the run, or unset {RUN_SOCKET_VAR}",
                    "cannot reach the run at {} ({RUN_SOCKET_VAR}): {e}",
                    socket.to_string_lossy()
                ),
                4,
            ))))
        }
    };
    if let Some(why) = reply.refused {
        return Some(finish(Err(Failure::usage(miette::miette!(
            code = Code::UsageNestedRefused,
            help = "a step's `spur` calls are answered by its run; run this outside the run",
            "the run refuses `spur {}`: {why}",
            request.argv.join(" ")
        )))));
    }
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    Some(ExitCode::from(u8::try_from(reply.code).unwrap_or(1)))
}
