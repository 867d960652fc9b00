//! `agent.run`: run the agent (the step's `agent`, else `defaults.agent`) as
//! `.spur/config.yaml` says (a preset's headless invocation, or a command line:
//! `crate::agent::invocation`). The templated `input` is passed as the last argument (a
//! slash command written for the preset's CLI) and, as written, in `$SPUR_AGENT_INPUT`;
//! `mode` as `$SPUR_AGENT_MODE`; `capture` keeps the answer in the step's record.
//! `answerFile` captures stdout (atomically); `expectFile` must exist afterwards;
//! `requireDiff` fails when the working tree's content fingerprint did not change.
//!
//! A preset's CLI is asked for its machine-readable output; the answer is taken from it and
//! the usage it reports is recorded with the step (`crate::cost`), as are `spurUsage` lines
//! on stderr. The budgets of `budgets:` are held before the agent starts, as its output
//! arrives (it is stopped, its group killed, once it crosses one) and when it ends.

use std::sync::{Arc, Mutex};

use spur_process::{OutputStream, OutputWatch, ProcessSpec, ProcessStatus};

use super::{coded, process, process_result, project_path};
use super::{worktree, ActionContext, ActionResult};
use crate::agent::invocation::invocation;
use crate::cost::agent_output::{Meter, OutputFormat};
use crate::cost::budget::{self, Exceeded};
use crate::cost::config::CostConfig;
use crate::cost::usage_line::UsageLines;
use crate::cost::{Usage, UsageTotal};
use crate::diagnostic::Code;
use crate::pipeline::AgentRunOptions;
use crate::run::agent_config::{read_agents_config, AgentLookupError};
use crate::wbs::Wbs;

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
    let spend = match Spent::before(ctx) {
        Ok(spend) => spend,
        Err(e) => return ActionResult::failed(e),
    };
    if let Some(spent) =
        budget::already_spent(&spend.config.budgets, &spend.run, spend.task.as_ref())
    {
        return spend.refuse(ctx, &format!("agent {agent:?} did not start"), &spent, None);
    }

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
    // A preset's own invocation asks for the CLI's machine-readable output; a command of
    // the user's is text.
    let format = match (&entry.command, entry.preset) {
        (None, Some(preset)) => OutputFormat::of(preset),
        _ => OutputFormat::Plain,
    };
    if options.answer_file.is_some() || options.capture || format != OutputFormat::Plain {
        spec = spec.capture_limit(ANSWER_LIMIT);
    }
    let live = Arc::new(Mutex::new(Live {
        meter: Some(Meter::new(format)),
        lines: UsageLines::new(),
        exceeded: None,
    }));
    spec = spec.watch(spend.watch(&live, &agent));
    let outcome = spec.run();
    let mut live = live
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let output = live
        .meter
        .take()
        .unwrap_or_else(|| Meter::new(format))
        .into_output(&outcome.stdout);
    live.lines.finish();
    let usage = match combined(output.usage.clone(), live.lines.total()) {
        Some(usage) => {
            let mut usage = spend.config.priced(usage, &agent);
            if usage.duration_ms.is_none() {
                usage.duration_ms = u64::try_from(outcome.duration.as_millis()).ok();
            }
            Some(usage)
        }
        None => None,
    };
    if let Some(refused) = live.lines.refused() {
        let mut result = ActionResult::failed(coded(
            Code::CostReportRefused,
            format!("agent.run: agent {agent:?}: {refused}"),
            "a usage report is one line `{\"spurUsage\": {\"inputTokens\": N, \"outputTokens\": N, \"costUsd\": X}}` on stderr (book: Cost and budgets)",
        ));
        result.usage = usage;
        return result;
    }
    let crossed = live.exceeded.take().or_else(|| {
        usage.as_ref().and_then(|u| {
            budget::crossed(&spend.config.budgets, &spend.run, spend.task.as_ref(), u)
        })
    });
    drop(live);
    if let (Some(spent), ProcessStatus::Stopped(_)) = (&crossed, &outcome.status) {
        return spend.refuse(ctx, &format!("agent {agent:?} was stopped"), spent, usage);
    }
    let mut result = process_result(&format!("agent {agent:?}"), &outcome);
    result.usage.clone_from(&usage);
    if !result.ok {
        return result;
    }
    let not_in_format = output.not_in_format.then(|| format.name());
    let outcome = spur_process::ProcessOutcome {
        stdout: output.answer,
        ..outcome
    };
    if let Some(answer) = &options.answer_file {
        if outcome.stdout_truncated {
            return spent_anyway(
                &usage,
                ActionResult::failed(format!(
                    "agent.run: the answer of agent {agent:?} is larger than {ANSWER_LIMIT} bytes"
                )),
            );
        }
        if let Err(e) =
            crate::store::atomic_file::write_atomic(&project_path(ctx, answer), &outcome.stdout)
        {
            return spent_anyway(
                &usage,
                ActionResult::failed(format!("agent.run: cannot write answerFile {answer}: {e}")),
            );
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
            return spent_anyway(
                &usage,
                ActionResult::failed(format!(
                    "agent.run: agent {agent:?} did not produce expectFile {expect}"
                )),
            );
        }
    }
    if let Some(before) = before {
        match worktree::fingerprint(ctx.project_root, ctx.state_dir.root()) {
            Ok(after) if after == before => {
                return spent_anyway(
                    &usage,
                    ActionResult::failed(format!(
                        "agent.run: requireDiff: agent {agent:?} left the working tree unchanged"
                    )),
                )
            }
            Ok(_) => {}
            Err(e) => {
                return spent_anyway(
                    &usage,
                    ActionResult::failed(format!("agent.run: cannot fingerprint the tree: {e}")),
                )
            }
        }
    }
    if let Some(format) = not_in_format {
        let note = format!("no usage: the output was not in {format}");
        result.message = Some(match result.message.take() {
            Some(message) => format!("{message} ({note})"),
            None => note,
        });
    }
    // A step whose spend is known only at its end (no usage as it goes) crossed its
    // budget all the same: the run stops here.
    if let Some(spent) = crossed {
        return spend.refuse(ctx, &format!("agent {agent:?} finished"), &spent, usage);
    }
    result
}

/// A step that failed after its agent ran still spent what it spent.
fn spent_anyway(usage: &Option<Usage>, mut result: ActionResult) -> ActionResult {
    result.usage.clone_from(usage);
    result
}

/// What the agent's output says as it arrives.
struct Live {
    /// Taken once the agent ended.
    meter: Option<Meter>,
    lines: UsageLines,
    /// The budget it crossed, when it did.
    exceeded: Option<Exceeded>,
}

/// The usage of the agent's own output and of its `spurUsage` lines, together.
fn combined(own: Option<Usage>, lines: Option<&Usage>) -> Option<Usage> {
    match (own, lines) {
        (None, None) => None,
        (Some(own), None) => Some(own),
        (None, Some(lines)) => Some(lines.clone()),
        (Some(mut own), Some(lines)) => {
            own.add(lines);
            Some(own)
        }
    }
}

/// The budgets and what was spent before the step: the run's (from its journal) and the
/// task's (from its usage ledger), each read only when its budget is set.
struct Spent {
    config: CostConfig,
    run: UsageTotal,
    task: Option<UsageTotal>,
}

impl Spent {
    fn before(ctx: &ActionContext<'_>) -> Result<Spent, String> {
        let config = CostConfig::load(ctx.state_dir).map_err(|e| {
            let findings: Vec<String> = match &e {
                crate::cost::config::CostConfigErrors::Invalid { errors, .. } => errors
                    .iter()
                    .map(crate::diagnostic::Diagnostic::one_line)
                    .collect(),
                other => vec![other.to_string()],
            };
            coded(
                Code::CostConfig,
                format!("agent.run: {e}: {}", findings.join("; ")),
                "fix `budgets:` / `prices:` (`spur check` shows where)",
            )
        })?;
        let run = if config.budgets.run.is_set() {
            run_spent(ctx)?
        } else {
            UsageTotal::default()
        };
        let task = match ctx.vars.get("wbs").map(|w| Wbs::parse(w)) {
            Some(Ok(wbs)) if config.budgets.task.is_set() => Some(
                crate::store::usage_ledger::read(ctx.state_dir, &wbs)
                    .map_err(|e| {
                        coded(
                            Code::CostLedger,
                            format!("agent.run: the task's budget cannot be held: {e}"),
                            "`spur task show` names the record; see the book's Cost and budgets",
                        )
                    })?
                    .total(),
            ),
            _ => None,
        };
        Ok(Spent { config, run, task })
    }

    /// Watch the agent's output: stop it once its spend crosses a budget, or once it
    /// prints a usage report that is refused.
    fn watch(&self, live: &Arc<Mutex<Live>>, agent: &str) -> OutputWatch {
        let live = Arc::clone(live);
        let (config, run, task) = (self.config.clone(), self.run.clone(), self.task.clone());
        let agent = agent.to_owned();
        OutputWatch::new(move |stream, bytes| {
            let mut live = live
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let live = &mut *live;
            match stream {
                OutputStream::Stdout => {
                    if let Some(meter) = &mut live.meter {
                        meter.push(bytes);
                    }
                }
                OutputStream::Stderr => live.lines.push(bytes),
            }
            if let Some(refused) = live.lines.refused() {
                return Some(refused.to_owned());
            }
            let own = live.meter.as_ref().and_then(Meter::so_far);
            let usage = config.priced(combined(own, live.lines.total())?, &agent);
            let spent = budget::crossed(&config.budgets, &run, task.as_ref(), &usage)?;
            let why = spent.describe();
            live.exceeded = Some(spent);
            Some(why)
        })
    }

    /// The step fails over `spent`, with what it spent.
    fn refuse(
        &self,
        ctx: &ActionContext<'_>,
        what: &str,
        spent: &Exceeded,
        usage: Option<Usage>,
    ) -> ActionResult {
        let config = ctx.state_dir.config_path();
        let mut result = ActionResult::failed(coded(
            Code::CostBudgetExceeded,
            format!("agent.run: {what}: {}", spent.describe()),
            &spent.help(&config.display().to_string(), ctx.run_id),
        ));
        result.usage = usage;
        result
    }
}

/// What the run's steps spent so far, from its journal.
fn run_spent(ctx: &ActionContext<'_>) -> Result<UsageTotal, String> {
    let path = ctx.run_dir.join("journal.jsonl");
    let key = crate::store::chain_key::key_for_reading(ctx.state_dir);
    let content = crate::run::journal::read(&path, &key)
        .map_err(|e| format!("agent.run: cannot read what the run spent: {e}"))?;
    Ok(content
        .records
        .into_iter()
        .filter_map(|r| match r.event {
            crate::run::event::Event::ActionFinished { usage, .. } => usage,
            _ => None,
        })
        .collect())
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
