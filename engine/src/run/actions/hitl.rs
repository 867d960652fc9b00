//! `hitl.confirm` / `hitl.select`: ask the operator. On a terminal the CLI prompts; with
//! none the run pauses and `spur continue RUN --answer A` supplies the answer. The answer
//! lands in `__hitlAnswer` (and in `options.var` for a select).

use serde_json::Value;

use super::{opt_str, ActionContext, ActionResult, ActionRun};

/// A question for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitlQuestion {
    pub prompt: String,
    /// The accepted answers.
    pub choices: Vec<String>,
}

impl HitlQuestion {
    /// The question an action asks, or an error naming what is wrong with its options.
    pub fn of(kind: &str, options: &Value) -> Result<Self, String> {
        let prompt = opt_str(options, "prompt").unwrap_or("Continue?").to_owned();
        let choices = if kind == "hitl.select" {
            let Some(Value::Array(items)) = options.get("options") else {
                return Err("hitl.select: option `options` must be a list of choices".into());
            };
            let mut choices: Vec<String> = items.iter().map(super::scalar_text).collect();
            if choices.is_empty() {
                return Err("hitl.select: option `options` is empty".into());
            }
            if !choices.iter().any(|c| c == "cancel") {
                choices.push("cancel".into());
            }
            choices
        } else {
            vec!["yes".into(), "no".into(), "cancel".into()]
        };
        Ok(Self { prompt, choices })
    }

    pub fn accepts(&self, answer: &str) -> bool {
        self.choices.iter().any(|c| c == answer)
    }
}

pub fn run(ctx: &mut ActionContext<'_>) -> ActionRun {
    let question = match HitlQuestion::of(ctx.kind, ctx.options) {
        Ok(q) => q,
        Err(e) => return ActionRun::Finished(ActionResult::failed(e)),
    };
    let answer = match ctx.answer {
        Some(a) => Some(a.to_owned()),
        None => (ctx.ask)(&question),
    };
    let Some(answer) = answer else {
        return ActionRun::NeedsAnswer(question);
    };
    if !question.accepts(&answer) {
        return ActionRun::Finished(ActionResult::failed(format!(
            "{}: answer {answer:?} is not one of {}",
            ctx.kind,
            question.choices.join(", ")
        )));
    }
    let _ = std::fs::write(ctx.log_path, format!("{}\n> {answer}\n", question.prompt));
    let mut result = ActionResult::ok();
    result.message = Some(format!("{} → {answer}", question.prompt));
    result
        .set_vars
        .insert("__hitlAnswer".into(), answer.clone());
    if ctx.kind == "hitl.select" {
        if let Some(var) = opt_str(ctx.options, "var") {
            if crate::run::vars::is_var_name(var) {
                result.set_vars.insert(var.to_owned(), answer);
            }
        }
    }
    ActionRun::Finished(result)
}
