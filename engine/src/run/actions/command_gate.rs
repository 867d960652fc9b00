//! `command.gate`: run `executable` with `args` (no shell), retrying on output patterns,
//! and write `PASS`/`FAIL` to `resultFile` — which must resolve under the state
//! directory's `run/` with no `..` and no symlink on the way. `softFail: true` records FAIL
//! without failing the action.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use spur_guards::process::ProcessSpec;

use super::{
    opt_bool, opt_millis, process, process_result, required_str, ActionContext, ActionResult,
};

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let executable = match required_str(ctx.options, "command.gate", "executable") {
        Ok(e) => e,
        Err(e) => return ActionResult::failed(e),
    };
    let args: Vec<String> = match ctx.options.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(super::scalar_text).collect(),
        Some(_) => return ActionResult::failed("command.gate: option `args` must be a list"),
    };
    let timeout = match opt_millis(ctx.options, "command.gate", "timeoutMs") {
        Ok(t) => t,
        Err(e) => return ActionResult::failed(e),
    };
    let retry = ctx.options.get("retry");
    let max_attempts = retry
        .and_then(|r| r.get("maxAttempts"))
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(1)
        .clamp(1, 20);
    let delay = retry
        .and_then(|r| r.get("delayMs"))
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .map_or(Duration::ZERO, Duration::from_millis);
    // YAML 1.1 reads a bare `on:` key as the boolean true: accept that spelling too.
    let patterns: Vec<String> = match retry.and_then(|r| r.get("on").or_else(|| r.get("true"))) {
        Some(Value::Array(items)) => items.iter().map(super::scalar_text).collect(),
        _ => Vec::new(),
    };
    let result_file = match ctx.options.get("resultFile") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match result_path(ctx, s) {
            Ok(p) => Some(p),
            Err(e) => return ActionResult::failed(e),
        },
        Some(_) => {
            return ActionResult::failed("command.gate: option `resultFile` must be a string")
        }
    };

    let mut attempt = 0;
    let result = loop {
        attempt += 1;
        let mut spec = process(ctx, ProcessSpec::new(executable, &args));
        if let Some(t) = timeout {
            spec = spec.timeout(t);
        }
        let outcome = spec.run();
        let result = process_result(&format!("command {executable:?}"), &outcome);
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
    if !result.ok && opt_bool(ctx.options, "softFail") {
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

/// `resultFile` resolved against the project root; it must lie under `<state>/run/`, with
/// no `..` and no symlinked directory on the way (checked before anything is created).
fn result_path(ctx: &ActionContext<'_>, rel: &str) -> Result<PathBuf, String> {
    let refuse = |why: &str| format!("command.gate: resultFile {rel:?} {why}");
    let path = Path::new(rel);
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(refuse("must not contain `..`"));
    }
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        ctx.project_root.join(path)
    };
    let run_dir = ctx.state_dir.run_dir();
    let Ok(inside) = full.strip_prefix(&run_dir) else {
        return Err(refuse(&format!("must be under {}", run_dir.display())));
    };
    if inside.as_os_str().is_empty() {
        return Err(refuse("names the run directory itself"));
    }
    // Walk from the state dir down: no component may be a symlink (no escape).
    let mut at = ctx.state_dir.root().to_path_buf();
    for component in Path::new("run").join(inside).components() {
        at.push(component);
        if let Ok(meta) = std::fs::symlink_metadata(&at) {
            if meta.file_type().is_symlink() {
                return Err(refuse("goes through a symlink"));
            }
        }
    }
    Ok(full)
}
