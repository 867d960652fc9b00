//! `command.gate`: run `executable` with `args` (no shell), retrying on output patterns,
//! and write `PASS`/`FAIL` to `resultFile` — which must resolve under the state
//! directory's `run/` with no `..` and no symlink on the way. `softFail: true` records FAIL
//! without failing the action.

use std::time::Duration;

use spur_process::ProcessSpec;

use super::result_file::result_path;
use super::{process, process_result, with_reported_usage, ActionContext, ActionResult};
use crate::pipeline::{CommandGateOptions, RetryOptions};

pub(crate) fn run(ctx: &ActionContext<'_>, options: &CommandGateOptions) -> ActionResult {
    let resolved = (|| {
        let executable = ctx.required(&options.executable)?;
        let args = match &options.args {
            Some(args) => ctx.resolve(args)?.unwrap_or_default(),
            None => Vec::new(),
        };
        let timeout = ctx.millis(options.timeout_ms.as_ref())?;
        let retry = Retry::of(ctx, options.retry.as_ref())?;
        let result_file = match &options.result_file {
            Some(file) => match ctx.resolve(file)? {
                Some(rel) => Some(result_path(ctx, &rel)?),
                None => None,
            },
            None => None,
        };
        let soft_fail = ctx.flag(options.soft_fail.as_ref())?;
        Ok::<_, String>((executable, args, timeout, retry, result_file, soft_fail))
    })();
    let (executable, args, timeout, retry, result_file, soft_fail) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let Retry {
        max_attempts,
        delay,
        patterns,
    } = retry;

    let mut attempt = 0;
    let result = loop {
        attempt += 1;
        let mut spec = process(ctx, ProcessSpec::new(&executable, &args));
        if let Some(t) = timeout {
            spec = spec.timeout(t);
        }
        let outcome = spec.run();
        let result = with_reported_usage(
            process_result(&format!("command {executable:?}"), &outcome),
            "command.gate",
            &outcome.stderr,
        );
        let output = [outcome.stdout.as_slice(), outcome.stderr.as_slice()].concat();
        let output = String::from_utf8_lossy(&output);
        let retryable = patterns.is_empty() || patterns.iter().any(|p| output.contains(p.as_str()));
        if result.ok || attempt >= max_attempts || !retryable {
            break result;
        }
        std::thread::sleep(delay);
    };
    let verdict = if result.ok { "PASS" } else { "FAIL" };
    if let Some(path) = result_file {
        if let Err(e) =
            crate::store::atomic_file::write_atomic(&path, format!("{verdict}\n").as_bytes())
        {
            return ActionResult::failed(format!("command.gate: cannot write resultFile: {e}"));
        }
    }
    if !result.ok && soft_fail {
        return ActionResult {
            message: Some(format!("FAIL (soft): {}", result.error.unwrap_or_default())),
            exit_code: result.exit_code,
            ..ActionResult::ok()
        };
    }
    ActionResult {
        message: Some(verdict.to_owned()),
        ..result
    }
}

/// When to run the command again: up to `max_attempts` in all, `delay` apart, and only
/// when the output holds one of `patterns` (any failure when there are none). A count or
/// pattern list that is not one counts as unset.
struct Retry {
    max_attempts: u64,
    delay: Duration,
    patterns: Vec<String>,
}

impl Retry {
    fn of(ctx: &ActionContext<'_>, options: Option<&RetryOptions>) -> Result<Self, String> {
        let Some(options) = options else {
            return Ok(Retry {
                max_attempts: 1,
                delay: Duration::ZERO,
                patterns: Vec::new(),
            });
        };
        let max_attempts = ctx.optional(options.max_attempts.as_ref())?;
        let delay = ctx.optional(options.delay_ms.as_ref())?;
        let patterns = match &options.on {
            Some(on) => ctx.optional(Some(on))?,
            None => ctx.optional(options.on_as_true.as_ref())?,
        };
        Ok(Retry {
            max_attempts: max_attempts.unwrap_or(1).clamp(1, 20),
            delay: delay.map_or(Duration::ZERO, Duration::from_millis),
            patterns: patterns.unwrap_or_default(),
        })
    }
}
