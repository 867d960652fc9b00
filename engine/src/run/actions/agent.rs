//! `agent.run`: run the command `.spur/config.yaml` maps the agent to. The templated
//! `input` is passed both as the command's last argument and as `$SPUR_AGENT_INPUT`.
//! `answerFile` captures stdout (atomically); `expectFile` must exist afterwards;
//! `requireDiff` fails when the working tree's content fingerprint did not change.

use spur_guards::process::ProcessSpec;

use super::{opt_bool, opt_millis, opt_str, process, process_result, project_path, required_str};
use super::{worktree, ActionContext, ActionResult};
use crate::run::agent_config::{agent_command, AgentLookupError};

/// stdout kept in memory for `answerFile` (the log file has it all regardless).
const ANSWER_LIMIT: usize = 16 << 20;

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let agent = match required_str(ctx.options, "agent.run", "agent") {
        Ok(a) => a,
        Err(e) => return ActionResult::failed(e),
    };
    let config = ctx.state_dir.config_path();
    let command = match agent_command(&config, agent) {
        Ok(c) => c.command,
        Err(AgentLookupError::Unmapped) => {
            return ActionResult::failed(format!(
                "agent.run: no command for agent {agent:?}: add `agents: {{ {agent}: {{ command: \"…\" }} }}` to {}",
                config.display()
            ))
        }
        Err(AgentLookupError::Unreadable(e) | AgentLookupError::Invalid(e)) => {
            return ActionResult::failed(format!(
                "agent.run: cannot read the `agents` key of {}: {e}",
                config.display()
            ))
        }
    };
    let timeout = match opt_millis(ctx.options, "agent.run", "timeoutMs") {
        Ok(t) => t,
        Err(e) => return ActionResult::failed(e),
    };
    let input = opt_str(ctx.options, "input").unwrap_or_default();
    let answer_file = opt_str(ctx.options, "answerFile").filter(|s| !s.is_empty());
    let expect_file = opt_str(ctx.options, "expectFile").filter(|s| !s.is_empty());
    let require_diff = opt_bool(ctx.options, "requireDiff");

    let before = if require_diff {
        match worktree::fingerprint(ctx.project_root, ctx.state_dir.root()) {
            Ok(f) => Some(f),
            Err(e) => {
                return ActionResult::failed(format!("agent.run: cannot fingerprint the tree: {e}"))
            }
        }
    } else {
        None
    };

    let script = format!("{command} \"$@\"");
    let mut spec = process(
        ctx,
        ProcessSpec::new("sh", ["-c", script.as_str(), "spur-agent", input]),
    )
    .env("SPUR_AGENT", agent)
    .env("SPUR_AGENT_INPUT", input)
    .env(
        "SPUR_AGENT_ROLE",
        opt_str(ctx.options, "role").unwrap_or_default(),
    );
    if let Some(t) = timeout {
        spec = spec.timeout(t);
    }
    if answer_file.is_some() {
        spec = spec.capture_limit(ANSWER_LIMIT);
    }
    let outcome = spec.run();
    let mut result = process_result(&format!("agent {agent:?}"), &outcome);
    if !result.ok {
        return result;
    }
    if let Some(answer) = answer_file {
        if outcome.stdout_truncated {
            return ActionResult::failed(format!(
                "agent.run: the answer of agent {agent:?} is larger than {ANSWER_LIMIT} bytes"
            ));
        }
        if let Err(e) =
            crate::store::atomic_file::write_atomic(&project_path(ctx, answer), &outcome.stdout)
        {
            return ActionResult::failed(format!(
                "agent.run: cannot write answerFile {answer}: {e}"
            ));
        }
        result.message = Some(format!("answer → {answer}"));
    }
    if let Some(expect) = expect_file {
        if !project_path(ctx, expect).exists() {
            return ActionResult::failed(format!(
                "agent.run: agent {agent:?} did not produce expectFile {expect}"
            ));
        }
    }
    if let Some(before) = before {
        match worktree::fingerprint(ctx.project_root, ctx.state_dir.root()) {
            Ok(after) if after == before => {
                return ActionResult::failed(format!(
                    "agent.run: requireDiff: agent {agent:?} left the working tree unchanged"
                ))
            }
            Ok(_) => {}
            Err(e) => {
                return ActionResult::failed(format!("agent.run: cannot fingerprint the tree: {e}"))
            }
        }
    }
    result
}
