//! `shell`: `sh -c command` with every var in the environment, `cwd`, `timeoutMs`, `env`.
//! The command's templates are references to variables set last (`crate::shell_text`).

use spur_process::ProcessSpec;

use super::{coded, process, process_result, project_path, with_reported_usage};
use super::{ActionContext, ActionResult};
use crate::diagnostic::Code;
use crate::pipeline::ShellOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &ShellOptions) -> ActionResult {
    let result = (|| {
        let text = ctx.shell_text(&options.command)?;
        if let Some(e) = crate::run::child_env::too_large_to_export(&text.env) {
            return Err(format!("shell: {e}"));
        }
        let timeout = ctx.timeout()?;
        let mut spec = process(ctx, ProcessSpec::shell(&text.command));
        if let Some(cwd) = ctx.optional(options.cwd.as_ref())? {
            let dir = project_path(ctx, &cwd);
            if !dir.is_dir() {
                return Err(format!("shell: {}", cwd_missing(&cwd, &dir)));
            }
            spec = spec.cwd(dir);
        }
        // An `env` that is not a mapping adds nothing.
        if let Some(env) = ctx.optional(options.env.as_ref())? {
            for (k, v) in env.0 {
                spec = spec.env(k, v);
            }
        }
        // Last: the variables the command's references read, which nothing may override.
        for (k, v) in &text.env {
            spec = spec.env(k, v);
        }
        if let Some(t) = timeout {
            spec = spec.timeout(t);
        }
        let outcome = spec.run();
        Ok::<_, String>(with_reported_usage(
            process_result("shell command", &outcome),
            "shell",
            &outcome.stderr,
        ))
    })();
    result.unwrap_or_else(ActionResult::failed)
}

/// A `cwd` that is not a directory, named as written and as resolved.
pub(crate) fn cwd_missing(cwd: &str, dir: &std::path::Path) -> String {
    let what = if dir.exists() {
        "is not a directory"
    } else {
        "does not exist"
    };
    coded(
        Code::RunCwdMissing,
        format!("cwd {cwd:?} ({}) {what}", dir.display()),
        "`cwd` is relative to the project root; create the directory first or fix the path",
    )
}
