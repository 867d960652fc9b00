//! `agent.run`: run the agent (the step's `agent`, else `defaults.agent`) as
//! `.spur/config.yaml` says (a preset's headless invocation, or a command line:
//! `crate::agent::invocation`). The templated `input` is passed as the last argument (a
//! slash command written for the preset's CLI) and, as written, in `$SPUR_AGENT_INPUT`;
//! `mode` as `$SPUR_AGENT_MODE`; `capture` keeps the answer in the step's record.
//! `answerFile` captures stdout (atomically); `expectFile` must exist afterwards;
//! `requireDiff` fails when the working tree's content fingerprint did not change.

use spur_process::ProcessSpec;

use super::{process, process_result, project_path};
use super::{worktree, ActionContext, ActionResult};
use crate::agent::invocation::invocation;
use crate::pipeline::AgentRunOptions;
use crate::run::agent_config::{read_agents_config, AgentLookupError};

/// stdout kept in memory for `answerFile` (the log file has it all regardless).
const ANSWER_LIMIT: usize = 16 << 20;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &AgentRunOptions) -> ActionResult {
    let config_path = ctx.state_dir.config_path();
    let config = match read_agents_config(&config_path) {
        Ok(config) => config.unwrap_or_default(),
        Err(AgentLookupError::Unreadable(e) | AgentLookupError::Invalid(e)) => {
            return ActionResult::failed(format!(
                "agent.run: cannot read the agents of {}: {e}",
                config_path.display()
            ))
        }
    };
    // The agent the step names, else the project's default agent (the reference engine
    // has a default agent too).
    let named = match ctx.optional(options.agent.as_ref()) {
        Ok(a) => a.filter(|a| !a.is_empty()),
        Err(e) => return ActionResult::failed(e),
    };
    let Some(agent) = named.or_else(|| config.default_agent.clone()) else {
        return ActionResult::failed(format!(
            "agent.run: the step names no `agent` and {} sets no default: add `defaults: {{ agent: NAME }}`",
            config_path.display()
        ));
    };
    let Some(entry) = config.agent(&agent).cloned() else {
        return ActionResult::failed(format!(
            "agent.run: no agent {agent:?} in {}: add `agents: {{ {agent}: {{ preset: NAME }} }}` (or `{{ command: \"…\" }}`)",
            config_path.display()
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
            capture: ctx.flag(options.capture.as_ref())?,
            mode: output_mode(ctx.optional(options.mode.as_ref())?)?,
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
        .env("SPUR_AGENT_ROLE", &options.role)
        .env("SPUR_AGENT_MODE", options.mode);
    if let Some(t) = options.timeout {
        spec = spec.timeout(t);
    }
    if options.answer_file.is_some() || options.capture {
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
    if options.capture {
        // The reference keeps the answer in the action's result for later steps; spur keeps
        // it in the record of the step (redacted like every record), bounded.
        result.message = Some(captured_answer(&outcome.stdout, outcome.stdout_truncated));
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

/// The most of a captured answer the run's record keeps.
const CAPTURE_RECORD_LIMIT: usize = 4096;

/// `answer: …` for the record: the agent's stdout as text, its last
/// [`CAPTURE_RECORD_LIMIT`] bytes when longer (the action's log has it all).
fn captured_answer(stdout: &[u8], truncated: bool) -> String {
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim_end();
    if text.len() <= CAPTURE_RECORD_LIMIT && !truncated {
        return format!("answer: {text}");
    }
    let mut start = text.len().saturating_sub(CAPTURE_RECORD_LIMIT);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!(
        "answer (last {} bytes): {}",
        text.len() - start,
        text.get(start..).unwrap_or("")
    )
}

/// `mode`: `text` (the default) or `json`, the output asked of the agent.
fn output_mode(mode: Option<String>) -> Result<&'static str, String> {
    match mode.as_deref() {
        None | Some("" | "text") => Ok("text"),
        Some("json") => Ok("json"),
        Some(other) => Err(format!(
            "agent.run: option `mode` is {other:?}: it must be `text` or `json`"
        )),
    }
}

/// The options of one run of the agent.
struct Resolved {
    timeout: Option<std::time::Duration>,
    input: String,
    answer_file: Option<String>,
    expect_file: Option<String>,
    require_diff: bool,
    role: String,
    capture: bool,
    mode: &'static str,
}
