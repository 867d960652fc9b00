//! `hitl.confirm` / `hitl.select` / `hitl.input`: ask the operator. On a terminal the CLI prompts; with
//! none the run pauses and `spur continue RUN --answer A` supplies the answer. The answer
//! lands in `__hitlAnswer` (and in `options.var`). With `decision: {mode: evidence}` the
//! action defers instead of asking (spur has no DecisionMaker).

use super::{ActionContext, ActionResult, ActionRun};
use crate::pipeline::ActionKind;
use crate::run::render::{OptionError, RenderContext};

/// A question for the operator.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HitlQuestion {
    /// The question, as shown to the operator.
    pub prompt: String,
    /// The accepted answers.
    pub choices: Vec<String>,
}

impl HitlQuestion {
    /// The yes / no / cancel question, with `prompt` or "Continue?".
    pub(crate) fn confirm(prompt: Option<String>) -> Self {
        Self {
            prompt: prompt.unwrap_or_else(|| "Continue?".to_owned()),
            choices: vec!["yes".into(), "no".into(), "cancel".into()],
        }
    }

    /// The question an action asks (a confirm for a kind that asks none), or an error
    /// naming what is wrong with its options.
    pub(crate) fn of(kind: &ActionKind, render: &RenderContext<'_>) -> Result<Self, String> {
        let failed = |e: OptionError| format!("{kind}: {e}");
        let (prompt, select) = match kind {
            ActionKind::HitlConfirm(o) => (o.prompt.as_ref(), None),
            ActionKind::HitlSelect(o) => (o.prompt.as_ref(), Some(o)),
            ActionKind::HitlInput(o) => (o.prompt.as_ref(), None),
            _ => (None, None),
        };
        let prompt = render
            .resolve_lenient(prompt)
            .map_err(|e| failed(e.into()))?;
        if let ActionKind::HitlInput(_) = kind {
            // Free text: no choices, any answer.
            return Ok(Self {
                prompt: prompt.unwrap_or_else(|| "Input?".to_owned()),
                choices: Vec::new(),
            });
        }
        let Some(select) = select else {
            return Ok(Self::confirm(prompt));
        };
        let not_a_list = || "hitl.select: option `options` must be a list of choices".to_owned();
        let mut choices = match select.choices.as_ref().map(|c| render.resolve(c)) {
            Some(Ok(Some(choices))) => choices,
            None | Some(Ok(None) | Err(OptionError::Invalid { .. })) => return Err(not_a_list()),
            Some(Err(e)) => return Err(failed(e)),
        };
        if choices.is_empty() {
            return Err("hitl.select: option `options` is empty".into());
        }
        if !choices.iter().any(|c| c == "cancel") {
            choices.push("cancel".into());
        }
        Ok(Self {
            prompt: prompt.unwrap_or_else(|| "Continue?".to_owned()),
            choices,
        })
    }

    /// Whether `answer` is exactly one of the choices (any text for a question without
    /// choices: `hitl.input`).
    pub fn accepts(&self, answer: &str) -> bool {
        self.answer_for(answer).is_some()
    }

    /// The choice `given` stands for: itself, or for a question with yes and no among its
    /// choices, `y`/`n` (either case) for them. `None` when it is no answer.
    pub fn answer_for(&self, given: &str) -> Option<String> {
        if self.choices.is_empty() || self.choices.iter().any(|c| c == given) {
            return Some(given.to_owned());
        }
        let short = match given {
            "y" | "Y" => "yes",
            "n" | "N" => "no",
            _ => return None,
        };
        self.choices.iter().find(|c| c.as_str() == short).cloned()
    }

    /// The accepted answers for people, joined by `sep` (`any text` for free text).
    pub fn shown_choices(&self, sep: &str) -> String {
        if self.choices.is_empty() {
            "any text".to_owned()
        } else {
            self.choices.join(sep)
        }
    }
}

pub(crate) fn run(ctx: &mut ActionContext<'_>) -> ActionRun {
    let kind = &ctx.action.kind.value;
    let question = match HitlQuestion::of(kind, &ctx.render) {
        Ok(q) => q,
        Err(e) => return ActionRun::Finished(ActionResult::failed(e)),
    };
    let (var, decision) = match kind {
        ActionKind::HitlSelect(o) => (o.var.as_ref(), o.decision.as_ref()),
        ActionKind::HitlConfirm(o) => (o.var.as_ref(), o.decision.as_ref()),
        ActionKind::HitlInput(o) => (o.var.as_ref(), None),
        _ => (None, None),
    };
    let var = match ctx.optional(var) {
        Ok(var) => var.filter(|v| crate::run::vars::is_var_name(v)),
        Err(e) => return ActionRun::Finished(ActionResult::failed(e)),
    };
    if let Some(decision) = decision.filter(|d| d.is_evidence()) {
        return ActionRun::Finished(deferred(ctx, &question, var, decision));
    }
    let answer = match ctx.answer {
        Some(a) => Some(a.to_owned()),
        None => (ctx.ask)(&question),
    };
    let Some(answer) = answer else {
        return ActionRun::NeedsAnswer(question);
    };
    let Some(answer) = question.answer_for(&answer) else {
        return ActionRun::Finished(ActionResult::failed(format!(
            "{}: answer {answer:?} is not one of {}",
            ctx.kind(),
            question.choices.join(", ")
        )));
    };
    if let ActionKind::HitlInput(_) = kind {
        // The reference's `hitl.input`: the text into `var`, `__hitlInput` by default.
        let _ = std::fs::write(ctx.log_path, format!("{}\n> {answer}\n", question.prompt));
        let mut result = ActionResult::ok();
        result.message = Some(format!(
            "{} → {} characters",
            question.prompt,
            answer.chars().count()
        ));
        result
            .set_vars
            .insert(var.unwrap_or_else(|| "__hitlInput".to_owned()), answer);
        return ActionRun::Finished(result);
    }
    let _ = std::fs::write(ctx.log_path, format!("{}\n> {answer}\n", question.prompt));
    let mut result = ActionResult::ok();
    result.message = Some(format!("{} → {answer}", question.prompt));
    result
        .set_vars
        .insert("__hitlAnswer".into(), answer.clone());
    if let Some(var) = var {
        result.set_vars.insert(var, answer);
    }
    ActionRun::Finished(result)
}

/// `decision: {mode: evidence}`: the reference lets its DecisionMaker answer from the
/// recorded evidence, and with none configured it defers. spur has none: it defers, as the
/// reference does without one — the answer vars are cleared (an answer of an earlier visit
/// cannot steer this one) and `statusVar` records `deferred`. The operator is not asked.
fn deferred(
    ctx: &ActionContext<'_>,
    question: &HitlQuestion,
    var: Option<String>,
    decision: &crate::pipeline::DecisionOptions,
) -> ActionResult {
    let status = match ctx.optional(decision.status_var.as_ref()) {
        Ok(Some(s)) if crate::run::vars::is_var_name(&s) => s,
        Ok(_) => {
            return ActionResult::failed(format!(
                "{}: decision mode evidence needs a `statusVar` that is a var name",
                ctx.kind()
            ))
        }
        Err(e) => return ActionResult::failed(e),
    };
    let mut result = ActionResult::ok();
    result.message = Some(format!(
        "{} → deferred (decision mode evidence: spur has no DecisionMaker)",
        question.prompt
    ));
    result.set_vars.insert("__hitlAnswer".into(), String::new());
    if let Some(var) = var {
        result.set_vars.insert(var, String::new());
    }
    result.set_vars.insert(status, "deferred".into());
    result
}
