//! `agent.run`: run the agent as `.spur/config.yaml` says (a preset's headless invocation,
//! or a command line: `crate::agent::invocation`). The templated `input` is passed as the
//! last argument (a slash command written for the preset's CLI) and, as written, in
//! `$SPUR_AGENT_INPUT`.
//! `answerFile` captures stdout (atomically); `expectFile` must exist afterwards;
//! `requireDiff` fails when the working tree's content fingerprint did not change.

use spur_guards::process::ProcessSpec;

use super::{process, process_result, project_path};
use super::{worktree, ActionContext, ActionResult};
use crate::agent::invocation::invocation;
use crate::pipeline::AgentRunOptions;
use crate::run::agent_config::{read_agents_config, AgentLookupError};

/// stdout kept in memory for `answerFile` (the log file has it all regardless).
const ANSWER_LIMIT: usize = 16 << 20;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &AgentRunOptions) -> ActionResult {
    let agent = match ctx.required_opt(options.agent.as_ref(), "agent") {
        Ok(a) => a,
        Err(e) => return ActionResult::failed(e),
    };
    let config = ctx.state_dir.config_path();
    let entry = match read_agents_config(&config) {
        Ok(found) => found.and_then(|c| c.agent(&agent).cloned()),
        Err(AgentLookupError::Unreadable(e) | AgentLookupError::Invalid(e)) => {
            return ActionResult::failed(format!(
                "agent.run: cannot read the `agents` key of {}: {e}",
                config.display()
            ))
        }
    };
    let Some(entry) = entry else {
        return ActionResult::failed(format!(
            "agent.run: no agent {agent:?} in {}: add `agents: {{ {agent}: {{ preset: NAME }} }}` (or `{{ command: \"…\" }}`)",
            config.display()
        ));
    };
    let resolved = (|| {
        let non_empty = |t: Option<String>| t.filter(|t| !t.is_empty());
        Ok::<_, String>(Resolved {
            timeout: ctx.timeout()?,
            input: ctx.optional(options.input.as_ref())?.unwrap_or_default(),
            answer_file: non_empty(ctx.optional(options.answer_file.as_ref())?),
            expect_file: non_empty(ctx.optional(options.expect_file.as_ref())?),
            require_diff: ctx.flag(options.require_diff.as_ref())?,
            role: ctx.optional(options.role.as_ref())?.unwrap_or_default(),
        })
    })();
    let options = match resolved {
        Ok(o) => o,
        Err(e) => return ActionResult::failed(e),
    };

    let before = if options.require_diff {
        match worktree::fingerprint(ctx.project_root, ctx.state_dir.root()) {
            Ok(f) => Some(f),
            Err(e) => {
                return ActionResult::failed(format!("agent.run: cannot fingerprint the tree: {e}"))
            }
        }
    } else {
        None
    };

    let input = options.input.as_str();
    let spur_bin = ctx
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "SPUR_BIN")
        .map(|(_, v)| v.as_str());
    let invocation = match invocation(&entry, input, spur_bin) {
        Ok(i) => i,
        Err(e) => return ActionResult::failed(format!("agent.run: agent {agent:?}: {e}")),
    };
    let mut spec = process(ctx, ProcessSpec::new(&invocation.program, &invocation.args))
        .env("SPUR_AGENT", &agent)
        .env("SPUR_AGENT_INPUT", input)
        .env("SPUR_AGENT_ROLE", &options.role);
    if let Some(t) = options.timeout {
        spec = spec.timeout(t);
    }
    if options.answer_file.is_some() {
        spec = spec.capture_limit(ANSWER_LIMIT);
    }
    let outcome = spec.run();
    let mut result = process_result(&format!("agent {agent:?}"), &outcome);
    if !result.ok {
        return result;
    }
    if let Some(answer) = &options.answer_file {
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
    if let Some(expect) = &options.expect_file {
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

/// The options of one run of the agent.
struct Resolved {
    timeout: Option<std::time::Duration>,
    input: String,
    answer_file: Option<String>,
    expect_file: Option<String>,
    require_diff: bool,
    role: String,
}
