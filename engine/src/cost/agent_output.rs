//! The machine-readable output of each agent CLI spur has a preset for: the answer text in
//! it (what `answerFile` gets, as the CLI's text output would have been) and the usage it
//! reports, read as the output arrives so that a budget can stop the agent mid-run. The
//! formats, from each CLI's documentation (the test fixtures under
//! `tests/fixtures/agent-output/` cite their sources):
//!
//! - **claude** `--output-format stream-json --verbose`: JSON lines; each `assistant`
//!   message carries `message.usage` (`input_tokens`, `cache_creation_input_tokens`,
//!   `cache_read_input_tokens`, `output_tokens`) and `message.model`; the last line, of
//!   type `result`, has the answer (`result`), the run's `usage`, `total_cost_usd` and
//!   `duration_ms`.
//! - **codex** `exec --json`: JSON lines; `item.completed` with an `agent_message` item
//!   holds the answer (`item.text`), each `turn.completed` the turn's `usage`
//!   (`input_tokens`, `cached_input_tokens`, `output_tokens`). No cost, no model.
//! - **gemini** `--output-format json`: one JSON object at the end: `response` and
//!   `stats.models.<model>.tokens` (`prompt`, `candidates`, `cached`, `thoughts`). No cost;
//!   nothing before the end.
//! - **opencode** `run --format json`: JSON lines; `text` events carry the answer in
//!   `part.text`, each `step_finish` its step's `part.tokens` (`input`, `output`,
//!   `reasoning`, `cache.read`, `cache.write`) and `part.cost`.
//! - **aider** has no machine-readable output: its text is the answer, and after each
//!   message it prints `Tokens: 2.5k sent, 1.2k cache hit, 345 received. Cost: $0.01
//!   message, $0.02 session.` (counts rounded to hundreds above a thousand).
//!
//! Output that is not in the expected format is taken as text, with no usage.

use std::collections::BTreeMap;

use serde_json::Value;

use super::lines::{Line, LineBuffer};
use super::usage::{CostSource, Usage};
use crate::agent::preset::Preset;

/// The longest output line read for usage as it arrives (a longer one is read at the end,
/// from the captured output).
const MAX_LIVE_LINE: usize = 1 << 20;

/// How an agent CLI writes its answer and usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    /// Claude Code's `stream-json`.
    ClaudeStreamJson,
    /// Codex's `exec --json` events.
    CodexJsonl,
    /// Gemini CLI's `json` object.
    GeminiJson,
    /// opencode's `run --format json` events.
    OpencodeJsonl,
    /// aider's text with its `Tokens: … Cost: …` lines.
    AiderText,
    /// Text: the answer as printed, usage only from `spurUsage` lines.
    Plain,
}

impl OutputFormat {
    /// The format a preset's own invocation asks its CLI for.
    pub(crate) fn of(preset: Preset) -> Self {
        match preset {
            Preset::Claude => Self::ClaudeStreamJson,
            Preset::Codex => Self::CodexJsonl,
            Preset::Gemini => Self::GeminiJson,
            Preset::Opencode => Self::OpencodeJsonl,
            Preset::Aider => Self::AiderText,
            Preset::Stub => Self::Plain,
        }
    }

    /// The format's name, for messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::ClaudeStreamJson => "claude's stream-json",
            Self::CodexJsonl => "codex's --json events",
            Self::GeminiJson => "gemini's json",
            Self::OpencodeJsonl => "opencode's --format json events",
            Self::AiderText => "aider's text",
            Self::Plain => "text",
        }
    }
}

/// What the output said, read to its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgentOutput {
    /// The answer text, as the CLI's text output would have been.
    pub(crate) answer: Vec<u8>,
    /// The usage reported (`None`: none).
    pub(crate) usage: Option<Usage>,
    /// The output was not in the format asked for, and was taken as text.
    pub(crate) not_in_format: bool,
}

/// Reads an agent's stdout as it arrives: the usage reported so far.
#[derive(Debug)]
pub(crate) struct Meter {
    format: OutputFormat,
    buffer: LineBuffer,
    reading: Reading,
}

/// What the lines read so far say.
#[derive(Debug, Default)]
struct Reading {
    /// Usage of the lines so far, summed (claude: per message id, the last seen).
    steps: Usage,
    /// claude: each assistant message's usage by id (a message is repeated per content
    /// block, with the same usage).
    messages: BTreeMap<String, Usage>,
    /// claude's `result` line: the run's own total.
    result: Option<Usage>,
    /// Whether any line reported usage.
    reported: bool,
    /// Pieces of the answer (codex: the last message; opencode: every text part).
    answer: Vec<String>,
    /// claude's `result` text.
    result_text: Option<String>,
    /// Lines in the format seen.
    recognised: usize,
    model: Option<String>,
}

impl Meter {
    pub(crate) fn new(format: OutputFormat) -> Self {
        Self {
            format,
            buffer: LineBuffer::new(MAX_LIVE_LINE),
            reading: Reading::default(),
        }
    }

    /// Take a chunk of stdout.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let format = self.format;
        let reading = &mut self.reading;
        self.buffer.push(bytes, &mut |line| {
            if let Line::Whole(line) = line {
                reading.line(format, line);
            }
        });
    }

    /// The usage reported so far (`None`: none yet).
    pub(crate) fn so_far(&self) -> Option<Usage> {
        self.reading.usage()
    }

    /// The output ended: what it said. `stdout` is the output as captured (gemini's one
    /// object is read from it; text formats answer with it).
    pub(crate) fn into_output(mut self, stdout: &[u8]) -> AgentOutput {
        let format = self.format;
        let reading = &mut self.reading;
        self.buffer.finish(&mut |line| {
            if let Line::Whole(line) = line {
                reading.line(format, line);
            }
        });
        let plain = |usage: Option<Usage>, not_in_format: bool| AgentOutput {
            answer: stdout.to_vec(),
            usage,
            not_in_format,
        };
        match format {
            OutputFormat::Plain => plain(None, false),
            OutputFormat::AiderText => plain(self.reading.usage(), false),
            OutputFormat::GeminiJson => match gemini(stdout) {
                Some((answer, usage)) => AgentOutput {
                    answer: answer.into_bytes(),
                    usage,
                    not_in_format: false,
                },
                None => plain(None, true),
            },
            OutputFormat::ClaudeStreamJson
            | OutputFormat::CodexJsonl
            | OutputFormat::OpencodeJsonl => {
                let reading = self.reading;
                if reading.recognised == 0 {
                    return plain(None, true);
                }
                let usage = reading.usage();
                let answer = match format {
                    OutputFormat::ClaudeStreamJson => reading.result_text.unwrap_or_default(),
                    OutputFormat::CodexJsonl => reading.answer.last().cloned().unwrap_or_default(),
                    _ => reading.answer.join(""),
                };
                AgentOutput {
                    answer: with_newline(answer).into_bytes(),
                    usage,
                    not_in_format: false,
                }
            }
        }
    }
}

/// Read an agent's whole stdout at once.
#[cfg(test)]
pub(crate) fn read_output(format: OutputFormat, stdout: &[u8]) -> AgentOutput {
    let mut meter = Meter::new(format);
    meter.push(stdout);
    meter.into_output(stdout)
}

/// The answer ends with a newline, as the CLI's text output does.
fn with_newline(mut text: String) -> String {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

impl Reading {
    fn usage(&self) -> Option<Usage> {
        if let Some(result) = &self.result {
            return Some(result.clone());
        }
        if !self.reported {
            return None;
        }
        let mut usage = self.steps.clone();
        for message in self.messages.values() {
            usage.add(message);
        }
        if usage.model.is_none() {
            usage.model.clone_from(&self.model);
        }
        Some(usage)
    }

    fn line(&mut self, format: OutputFormat, line: &[u8]) {
        if format == OutputFormat::AiderText {
            if let Some(usage) = aider_line(line) {
                self.reported = true;
                self.steps.add(&usage);
            }
            return;
        }
        let Ok(Value::Object(event)) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        match format {
            OutputFormat::ClaudeStreamJson => self.claude(kind, &event),
            OutputFormat::CodexJsonl => self.codex(kind, &event),
            OutputFormat::OpencodeJsonl => self.opencode(kind, &event),
            _ => {}
        }
    }

    fn claude(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "system" => {
                self.recognised += 1;
                if let Some(model) = event.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_owned());
                }
            }
            "assistant" => {
                self.recognised += 1;
                let Some(message) = event.get("message") else {
                    return;
                };
                let Some(mut usage) = message.get("usage").and_then(claude_usage) else {
                    return;
                };
                usage.model = message
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let id = message
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("#{}", self.messages.len()), str::to_owned);
                self.reported = true;
                self.messages.insert(id, usage);
            }
            "result" => {
                self.recognised += 1;
                self.result_text = event
                    .get("result")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let Some(mut usage) = event.get("usage").and_then(claude_usage) else {
                    return;
                };
                usage.cost_usd = event.get("total_cost_usd").and_then(Value::as_f64);
                usage.cost_source = usage.cost_usd.map(|_| CostSource::Reported);
                usage.duration_ms = event.get("duration_ms").and_then(Value::as_u64);
                usage.model = self
                    .model
                    .clone()
                    .or_else(|| self.messages.values().rev().find_map(|u| u.model.clone()));
                self.reported = true;
                self.result = Some(usage);
            }
            _ => {}
        }
    }

    fn codex(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        match kind {
            "thread.started" | "turn.started" | "item.started" | "item.updated" => {
                self.recognised += 1;
            }
            "item.completed" => {
                self.recognised += 1;
                let item = event.get("item");
                let is_message = item.and_then(|i| i.get("type")).and_then(Value::as_str)
                    == Some("agent_message");
                if let (true, Some(text)) = (
                    is_message,
                    item.and_then(|i| i.get("text")).and_then(Value::as_str),
                ) {
                    self.answer.push(text.to_owned());
                }
            }
            "turn.completed" => {
                self.recognised += 1;
                let Some(usage) = event.get("usage") else {
                    return;
                };
                let input = count(usage, "input_tokens");
                let turn = Usage {
                    input_tokens: input,
                    cached_tokens: count(usage, "cached_input_tokens").min(input),
                    output_tokens: count(usage, "output_tokens"),
                    ..Usage::default()
                };
                self.reported = true;
                self.steps.add(&turn);
            }
            _ => {}
        }
    }

    fn opencode(&mut self, kind: &str, event: &serde_json::Map<String, Value>) {
        let part = event.get("part");
        match kind {
            "step_start" | "tool_use" => self.recognised += 1,
            "text" => {
                self.recognised += 1;
                if let Some(text) = part.and_then(|p| p.get("text")).and_then(Value::as_str) {
                    self.answer.push(text.to_owned());
                }
            }
            "step_finish" => {
                self.recognised += 1;
                let Some(tokens) = part.and_then(|p| p.get("tokens")) else {
                    return;
                };
                let cache = tokens.get("cache");
                let read = cache.map_or(0, |c| count(c, "read"));
                let write = cache.map_or(0, |c| count(c, "write"));
                let cost = part.and_then(|p| p.get("cost")).and_then(Value::as_f64);
                let step = Usage {
                    input_tokens: count(tokens, "input")
                        .saturating_add(read)
                        .saturating_add(write),
                    cached_tokens: read,
                    output_tokens: count(tokens, "output")
                        .saturating_add(count(tokens, "reasoning")),
                    cost_usd: cost,
                    cost_source: cost.map(|_| CostSource::Reported),
                    model: part
                        .and_then(|p| p.get("modelID"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    duration_ms: None,
                };
                self.reported = true;
                self.steps.add(&step);
            }
            _ => {}
        }
    }
}

/// A whole number field of a JSON object (0 when absent or not one).
fn count(object: &Value, key: &str) -> u64 {
    object.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// An Anthropic `usage` object: cache reads and writes are input too.
fn claude_usage(usage: &Value) -> Option<Usage> {
    usage.as_object()?;
    let read = count(usage, "cache_read_input_tokens");
    Some(Usage {
        input_tokens: count(usage, "input_tokens")
            .saturating_add(read)
            .saturating_add(count(usage, "cache_creation_input_tokens")),
        cached_tokens: read,
        output_tokens: count(usage, "output_tokens"),
        ..Usage::default()
    })
}

/// gemini's one object: the answer and every model's tokens.
fn gemini(stdout: &[u8]) -> Option<(String, Option<Usage>)> {
    let value: Value = serde_json::from_slice(stdout).ok()?;
    let answer = value.get("response")?.as_str()?.to_owned();
    let models = value
        .get("stats")
        .and_then(|s| s.get("models"))
        .and_then(Value::as_object);
    let usage = models.filter(|m| !m.is_empty()).map(|models| {
        let mut usage = Usage::default();
        for (name, stats) in models {
            let tokens = stats.get("tokens").cloned().unwrap_or(Value::Null);
            let prompt = count(&tokens, "prompt");
            usage.add(&Usage {
                input_tokens: prompt,
                cached_tokens: count(&tokens, "cached").min(prompt),
                output_tokens: count(&tokens, "candidates")
                    .saturating_add(count(&tokens, "thoughts")),
                duration_ms: stats
                    .get("api")
                    .and_then(|a| a.get("totalLatencyMs"))
                    .and_then(Value::as_u64),
                ..Usage::default()
            });
            usage.model = Some(match usage.model.take() {
                None => name.clone(),
                Some(before) => format!("{before}+{name}"),
            });
        }
        usage
    });
    Some((with_newline(answer), usage))
}

/// One aider report line: `Tokens: 2.5k sent, 1.2k cache hit, 345 received. Cost: $0.01
/// message, $0.02 session.` (the cost part only when aider knows the model's price).
fn aider_line(line: &[u8]) -> Option<Usage> {
    let text = std::str::from_utf8(line).ok()?.trim();
    let rest = text.strip_prefix("Tokens: ")?;
    let (tokens, cost) = match rest.split_once(". Cost: ") {
        Some((tokens, cost)) => (tokens, Some(cost)),
        None => (rest.trim_end_matches('.'), None),
    };
    let mut usage = Usage::default();
    let mut received = false;
    for part in tokens.split(", ") {
        let (number, what) = part.split_once(' ')?;
        let n = aider_count(number)?;
        match what {
            "sent" => usage.input_tokens = n,
            "cache hit" => usage.cached_tokens = n,
            "cache write" => {}
            "received" => {
                usage.output_tokens = n;
                received = true;
            }
            _ => return None,
        }
    }
    if !received {
        return None;
    }
    usage.cached_tokens = usage.cached_tokens.min(usage.input_tokens);
    if let Some(cost) = cost {
        let message = cost.strip_prefix('$')?.split_once(" message")?.0;
        let value: f64 = message.parse().ok()?;
        if value.is_finite() && value >= 0.0 {
            usage.cost_usd = Some(value);
            usage.cost_source = Some(CostSource::Reported);
        }
    }
    Some(usage)
}

/// aider's `format_tokens`: `345`, `2.5k`, `12k`.
fn aider_count(text: &str) -> Option<u64> {
    match text.strip_suffix('k') {
        Some(thousands) => {
            let value: f64 = thousands.parse().ok()?;
            (value.is_finite() && (0.0..1e9).contains(&value))
                .then(|| (value * 1000.0).round() as u64)
        }
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aider_lines_read_with_and_without_cost() {
        let usage = aider_line(
            b"Tokens: 2.5k sent, 1.2k cache hit, 345 received. Cost: $0.0123 message, $0.0456 session.",
        )
        .unwrap();
        assert_eq!(
            (usage.input_tokens, usage.cached_tokens, usage.output_tokens),
            (2500, 1200, 345)
        );
        assert_eq!(usage.cost_usd, Some(0.0123));
        let no_cost = aider_line(b"Tokens: 12k sent, 3 received.").unwrap();
        assert_eq!((no_cost.input_tokens, no_cost.output_tokens), (12000, 3));
        assert_eq!(no_cost.cost_usd, None);
        assert_eq!(aider_line(b"Tokens: lots sent, 3 received."), None);
        assert_eq!(aider_line(b"Applied edit to README.md"), None);
    }

    #[test]
    fn claude_messages_count_once_and_the_result_is_the_total() {
        let stream = concat!(
            r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5"}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":5}}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":5}}}"#,
            "\n",
        );
        let mut meter = Meter::new(OutputFormat::ClaudeStreamJson);
        meter.push(stream.as_bytes());
        assert_eq!(meter.so_far().unwrap().tokens(), 15);
        meter.push(br#"{"type":"result","result":"ok","total_cost_usd":0.5,"usage":{"input_tokens":11,"output_tokens":6}}"#);
        meter.push(b"\n");
        let total = meter.so_far().unwrap();
        assert_eq!((total.tokens(), total.cost_usd), (17, Some(0.5)));
    }

    #[test]
    fn text_where_json_was_asked_for_is_the_answer_without_usage() {
        let out = read_output(OutputFormat::CodexJsonl, b"codex did it\n");
        assert_eq!(out.answer, b"codex did it\n");
        assert_eq!(out.usage, None);
        assert!(out.not_in_format);
    }
}
