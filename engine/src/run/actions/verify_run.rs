//! `verify.run`: run the verify gates of the run's pinned policy (`crate::verify::run_gates`,
//! the same as `spur verify`). Options: `gate` (only this gate), `wbs` (default: the run's
//! `wbs` var; results merge into its verdict artifact). The action fails when a gate is
//! FAIL or ERROR or a result could not be recorded (`softFail: true` records and goes on).

use crate::verify::{run_gates, VerifyRequest};
use crate::wbs::Wbs;

use super::{ActionContext, ActionResult};
use crate::pipeline::VerifyRunOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &VerifyRunOptions) -> ActionResult {
    let resolved = (|| {
        let wbs = ctx.optional(options.wbs.as_ref())?;
        let gate = ctx.optional(options.gate.as_ref())?;
        let soft_fail = ctx.flag(options.soft_fail.as_ref())?;
        Ok::<_, String>((wbs, gate, soft_fail))
    })();
    let (wbs, gate, soft_fail) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let wbs = match wbs
        .as_deref()
        .or_else(|| ctx.vars.get("wbs").map(String::as_str))
    {
        None | Some("") => None,
        Some(w) => match Wbs::parse(w) {
            Ok(w) => Some(w),
            Err(e) => return ActionResult::failed(format!("verify.run: {e}")),
        },
    };
    let mut request = VerifyRequest::new(ctx.state_dir.clone());
    request.wbs = wbs;
    request.gate = gate.filter(|g| !g.is_empty());
    request.run_id = Some(ctx.run_id.to_owned());
    request.env = ctx.env.to_vec();
    request.redactor = ctx.redactor.clone();
    request.policy = ctx.policy.clone();
    match run_gates(&request) {
        Ok(outcome) => {
            let _ = std::fs::write(ctx.log_path, &outcome.markdown);
            let message = format!(
                "{} ({} gate{})",
                if outcome.passed {
                    "passed"
                } else {
                    "not passed"
                },
                outcome.gates.len(),
                if outcome.gates.len() == 1 { "" } else { "s" }
            );
            if outcome.passed || soft_fail {
                ActionResult {
                    message: Some(message),
                    ..ActionResult::ok()
                }
            } else {
                ActionResult::failed(format!("verify.run: {message}; report: {}", outcome.report))
            }
        }
        Err(e) => ActionResult::failed(format!("verify.run: {e}")),
    }
}
