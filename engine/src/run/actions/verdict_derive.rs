//! `verdict.derive`: turn the verifier's answer file into the verdict artifact
//! (`crate::answer::derive_verdict`, the same flow as `spur task verdict --from-answer`).
//! Options: `answer` (path, required), `task` (task file; found from the wbs when absent),
//! `wbs` (default: the run's `wbs` var). The action succeeds when the artifact was written,
//! whatever verdict it holds: the done gate judges the verdict, not this step.

use crate::answer::{derive_verdict, DeriveRequest};
use crate::wbs::Wbs;

use super::{project_path, ActionContext, ActionResult};
use crate::pipeline::VerdictDeriveOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &VerdictDeriveOptions) -> ActionResult {
    let resolved = (|| {
        let answer = ctx.required_opt(options.answer.as_ref(), "answer")?;
        let wbs = ctx.optional(options.wbs.as_ref())?;
        let task = ctx.optional(options.task.as_ref())?;
        Ok::<_, String>((answer, wbs, task))
    })();
    let (answer, wbs, task) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let wbs_text = wbs
        .as_deref()
        .or_else(|| ctx.vars.get("wbs").map(String::as_str))
        .unwrap_or_default();
    let wbs = match Wbs::parse(wbs_text) {
        Ok(w) => w,
        Err(e) => return ActionResult::failed(format!("verdict.derive: {e}")),
    };
    let request = DeriveRequest {
        wbs,
        answer: project_path(ctx, &answer),
        task: task
            .filter(|t| !t.is_empty())
            .map(|t| project_path(ctx, &t)),
        state_dir: ctx.state_dir.clone(),
        project_root: ctx.project_root.to_path_buf(),
        write: true,
        writer: crate::store::task_ledger::VerdictWriter::VerdictDerive,
        run_id: Some(ctx.run_id.to_owned()),
    };
    match derive_verdict(&request) {
        Ok(outcome) => {
            let mut lines = vec![format!("verdict {}", outcome.verdict)];
            lines.extend(outcome.diagnostics.iter().map(|d| {
                let at = d.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                format!("{at}{} {}", d.code, d.message)
            }));
            let _ = std::fs::write(ctx.log_path, lines.join("\n") + "\n");
            let lint = if outcome.lint_failed {
                " (answer failed the lint)"
            } else {
                ""
            };
            ActionResult {
                message: Some(format!("verdict {}{lint}", outcome.verdict)),
                ..ActionResult::ok()
            }
        }
        Err(e) => ActionResult::failed(format!("verdict.derive: {e}")),
    }
}
