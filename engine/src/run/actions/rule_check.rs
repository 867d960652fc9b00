//! `rule.check`: the rules of a preset (`run/rule_set.rs`), each command run as a shell step
//! would be; ok unless a finding is at or above `failOn`, as the reference's
//! `RuleCheckActionRunner` over its rule service: `preset` defaults to
//! `recommended-pre-check`, `rule` runs one rule of it, `failOn` defaults to `error`, and a
//! preset with no enabled rule (or no rule of that id) fails.

use spur_process::{ProcessSpec, ProcessStatus};

use super::shell::cwd_missing;
use super::{coded, process, project_path, ActionContext, ActionResult};
use crate::diagnostic::Code;
use crate::pipeline::RuleCheckOptions;
use crate::run::rule_set::{read_preset, Rule, Severity};

const DEFAULT_PRESET: &str = "recommended-pre-check";

/// A rule whose command did not exit 0.
struct Finding {
    rule: String,
    severity: Severity,
    why: String,
}

pub(crate) fn run(ctx: &ActionContext<'_>, options: &RuleCheckOptions) -> ActionResult {
    check(ctx, options).unwrap_or_else(ActionResult::failed)
}

fn check(ctx: &ActionContext<'_>, options: &RuleCheckOptions) -> Result<ActionResult, String> {
    let preset = ctx
        .optional(options.preset.as_ref())?
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PRESET.to_owned());
    let only = ctx
        .optional(options.rule.as_ref())?
        .filter(|r| !r.is_empty());
    let fail_on = match ctx.optional(options.fail_on.as_ref())? {
        None => Severity::Error,
        Some(s) => Severity::parse(&s).ok_or_else(|| {
            format!("rule.check: failOn {s:?} is not one of error, warning, info")
        })?,
    };
    let cwd = match ctx.optional(options.cwd.as_ref())? {
        Some(cwd) => {
            let dir = project_path(ctx, &cwd);
            if !dir.is_dir() {
                return Err(format!("rule.check: {}", cwd_missing(&cwd, &dir)));
            }
            dir
        }
        None => ctx.project_root.to_path_buf(),
    };
    let rules = read_preset(ctx.state_dir, &preset).map_err(|e| {
        coded(
            Code::RunRuleConfig,
            format!("rule.check: {e}"),
            "a preset is `.spur/rules/<preset>.yaml` with `rules:`, each an `id` and a `command`",
        )
    })?;
    let selected: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.enabled && only.as_ref().is_none_or(|id| &r.id == id))
        .collect();
    if selected.is_empty() {
        let what = match &only {
            Some(id) => format!("no enabled rule {id:?} in preset {preset:?}"),
            None => format!("preset {preset:?} has no enabled rule"),
        };
        return Err(format!("rule.check failed: {what}"));
    }
    let findings: Vec<Finding> = selected
        .iter()
        .filter_map(|rule| run_rule(ctx, rule, &cwd))
        .collect();
    let failing: Vec<&Finding> = findings.iter().filter(|f| f.severity >= fail_on).collect();
    let summary = format!(
        "preset {preset}: {} rule(s), {} finding(s){}",
        selected.len(),
        findings.len(),
        listed(&findings.iter().collect::<Vec<_>>()),
    );
    if failing.is_empty() {
        return Ok(ActionResult {
            message: Some(summary),
            ..ActionResult::ok()
        });
    }
    Ok(ActionResult {
        message: Some(summary),
        ..ActionResult::failed(format!(
            "rule.check failed: {} finding(s) at/above {}{}",
            failing.len(),
            fail_on.as_str(),
            listed(&failing),
        ))
    })
}

fn listed(findings: &[&Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let each: Vec<String> = findings
        .iter()
        .map(|f| format!("{} ({}): {}", f.rule, f.severity.as_str(), f.why))
        .collect();
    format!(": {}", each.join("; "))
}

/// Run one rule's command; a finding unless it exits 0.
fn run_rule(ctx: &ActionContext<'_>, rule: &Rule, cwd: &std::path::Path) -> Option<Finding> {
    let timeout = rule.timeout.unwrap_or(ctx.timeouts.shell);
    let outcome = process(ctx, ProcessSpec::shell(&rule.command))
        .cwd(cwd)
        .timeout(timeout)
        .run();
    if outcome.status.success() {
        return None;
    }
    let last_line = [outcome.stderr.as_slice(), outcome.stdout.as_slice()]
        .iter()
        .find_map(|bytes| {
            String::from_utf8_lossy(bytes)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().chars().take(200).collect::<String>())
        });
    let why = match (&outcome.status, last_line) {
        (ProcessStatus::Exited(_), Some(line)) => line,
        (status, _) => status.to_string(),
    };
    Some(Finding {
        rule: rule.id.clone(),
        severity: rule.severity,
        why,
    })
}
