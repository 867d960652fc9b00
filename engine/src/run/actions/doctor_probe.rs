//! `doctor.probe`: `spur agent doctor`'s check of the agents a run will use (`agent`,
//! `implementAgent` when it differs, and `agents`), made in this process with the run's
//! PATH and environment, and `PASS` or `FAIL` written to `resultFile` (under the state
//! directory's `run/`, like `command.gate`'s). The action itself succeeds either way — the
//! reference's soft probe: the transitions route on the file, so a missing agent ends the
//! run in a failure state with the reason in the log, not in a raw action failure.
//! `spurBin` is accepted and unused: there is no second spur process to start.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::result_file::result_path;
use super::{ActionContext, ActionResult};
use crate::agent::doctor::{doctor, DoctorRequest};
use crate::pipeline::DoctorProbeOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &DoctorProbeOptions) -> ActionResult {
    let resolved = (|| {
        let result_file = ctx.required_opt(options.result_file.as_ref(), "resultFile")?;
        let result_file = result_path(ctx, &result_file)?;
        let non_empty = |t: Option<String>| t.filter(|t| !t.trim().is_empty());
        let agent = non_empty(ctx.optional(options.agent.as_ref())?);
        let implement = non_empty(ctx.optional(options.implement_agent.as_ref())?);
        let more = ctx.optional(options.agents.as_ref())?.unwrap_or_default();
        Ok::<_, String>((result_file, agent, implement, more))
    })();
    let (result_file, agent, implement, more) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let mut lines = Vec::new();
    if let (Some(a), Some(i)) = (&agent, &implement) {
        if a != i {
            lines.push(format!(
                "precheck: agent={a} implementAgent={i} (agents diverge)"
            ));
        }
    }
    let names: Vec<String> = agent
        .into_iter()
        .chain(implement)
        .chain(more.into_iter().filter(|n| !n.trim().is_empty()))
        .collect();
    if names.is_empty() {
        return ActionResult::failed(
            "doctor.probe: no agent to check: set `agent` (or `agents`)".to_owned(),
        );
    }

    let var = |name: &str| {
        ctx.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let request = DoctorRequest {
        state_dir: ctx.state_dir.clone(),
        only: names,
        path: var("PATH").map(Into::into),
        env: ctx.env.to_vec(),
        spur_bin: var("SPUR_BIN").map(PathBuf::from),
    };
    let mut failures = Vec::new();
    match doctor(&request) {
        Ok(report) => {
            for check in &report.agents {
                let mut line = format!(
                    "precheck: {} auth={} status={}",
                    check.agent,
                    serde_json::to_value(check.authenticated)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    check.status.as_str()
                );
                if let Some(version) = &check.version {
                    let _ = write!(line, " version={version:?}");
                }
                lines.push(line);
                if !check.usable {
                    let why = check.error.as_deref().unwrap_or("not usable");
                    let mut fail = format!("precheck: FAIL - agent {}: {why}", check.agent);
                    if let Some(hint) = check.hint.as_deref().filter(|h| !h.is_empty()) {
                        let _ = write!(fail, "; {hint}");
                    }
                    lines.push(fail);
                    failures.push(format!("agent {}: {why}", check.agent));
                }
            }
        }
        Err(e) => {
            lines.push(format!("precheck: FAIL - {e}"));
            failures.push(e.to_string());
        }
    }
    let verdict = if failures.is_empty() { "PASS" } else { "FAIL" };
    lines.push(format!("precheck: {verdict}"));
    // The log is the action's record for `spur trace`; a failure to write it loses only
    // that copy (the message below carries the reasons).
    let _ = std::fs::write(ctx.log_path, lines.join("\n") + "\n");
    if let Err(e) =
        crate::store::atomic_file::write_atomic(&result_file, format!("{verdict}\n").as_bytes())
    {
        return ActionResult::failed(format!("doctor.probe: cannot write resultFile: {e}"));
    }
    ActionResult {
        message: Some(if failures.is_empty() {
            "PASS".to_owned()
        } else {
            format!("FAIL: {}", failures.join("; "))
        }),
        ..ActionResult::ok()
    }
}
