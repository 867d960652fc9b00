//! `{"spurUsage": {…}}`: how a plugin or a plain command reports what it spent, one JSON
//! line on stderr per report (each an increment: a step that reports as it goes prints one
//! line per round). Bounded: a report line is at most [`MAX_LINE`] bytes, its numbers are
//! whole token counts up to [`MAX_TOKENS`] and a finite cost up to [`MAX_COST_USD`], at most
//! [`MAX_REPORTS`] of them per step, and nothing else may be in it. A line that says it is
//! a report and is not one is refused: the step fails, naming the line, rather than
//! record a spend nobody can trust.

use serde::Deserialize;

use super::lines::{Line, LineBuffer};
use super::usage::{CostSource, Usage};

/// The longest report line.
pub(crate) const MAX_LINE: usize = 4096;
/// The most tokens one report may name, per field.
pub(crate) const MAX_TOKENS: u64 = 1_000_000_000_000;
/// The most one report may say it cost, in US dollars.
pub(crate) const MAX_COST_USD: f64 = 1_000_000.0;
/// The most reports one step may print.
pub(crate) const MAX_REPORTS: usize = 10_000;
/// The longest model name.
const MAX_MODEL: usize = 200;

/// The key that makes a line a report.
const KEY: &[u8] = b"\"spurUsage\"";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    #[serde(rename = "spurUsage")]
    spur_usage: Report,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Report {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cached_tokens: u64,
    #[serde(default)]
    cost_usd: Option<f64>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    duration_ms: Option<u64>,
}

/// Whether a line (or a long line's head) says it is a report: a JSON object whose first
/// key is `spurUsage`.
fn is_report(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii_start();
    trimmed
        .strip_prefix(b"{")
        .is_some_and(|rest| rest.trim_ascii_start().starts_with(KEY))
}

/// One line read as a report: `None` when it is no report, else the usage or why it is
/// refused.
pub(crate) fn read_line(line: &[u8]) -> Option<Result<Usage, String>> {
    if !is_report(line) {
        return None;
    }
    if line.len() > MAX_LINE {
        return Some(Err(too_long(line.len())));
    }
    let envelope: Envelope = match serde_json::from_slice(line) {
        Ok(e) => e,
        Err(e) => {
            return Some(Err(format!(
                "a `spurUsage` line is not a usage report: {e}"
            )))
        }
    };
    Some(check(envelope.spur_usage))
}

fn too_long(len: usize) -> String {
    format!("a `spurUsage` line of {len} bytes is longer than the {MAX_LINE} a report may be")
}

fn check(report: Report) -> Result<Usage, String> {
    for (name, n) in [
        ("inputTokens", report.input_tokens),
        ("outputTokens", report.output_tokens),
        ("cachedTokens", report.cached_tokens),
    ] {
        if n > MAX_TOKENS {
            return Err(format!(
                "`spurUsage.{name}` is {n}, more than the {MAX_TOKENS} a report may name"
            ));
        }
    }
    if report.cached_tokens > report.input_tokens {
        return Err(format!(
            "`spurUsage.cachedTokens` ({}) is more than `inputTokens` ({}): cached tokens are part of the input",
            report.cached_tokens, report.input_tokens
        ));
    }
    if let Some(cost) = report.cost_usd {
        if !cost.is_finite() || !(0.0..=MAX_COST_USD).contains(&cost) {
            return Err(format!(
                "`spurUsage.costUsd` is {cost}: it must be from 0 to {MAX_COST_USD}"
            ));
        }
    }
    if let Some(model) = &report.model {
        if model.len() > MAX_MODEL || model.chars().any(char::is_control) {
            return Err(format!(
                "`spurUsage.model` must be at most {MAX_MODEL} bytes without control characters"
            ));
        }
    }
    Ok(Usage {
        input_tokens: report.input_tokens,
        output_tokens: report.output_tokens,
        cached_tokens: report.cached_tokens,
        cost_source: report.cost_usd.map(|_| CostSource::Reported),
        cost_usd: report.cost_usd,
        model: report.model.filter(|m| !m.is_empty()),
        duration_ms: report.duration_ms,
    })
}

/// The reports of one stream, read as it arrives: their sum, or the first refusal.
#[derive(Debug)]
pub(crate) struct UsageLines {
    buffer: LineBuffer,
    total: Option<Usage>,
    reports: usize,
    refused: Option<String>,
}

impl UsageLines {
    pub(crate) fn new() -> Self {
        Self {
            buffer: LineBuffer::new(MAX_LINE),
            total: None,
            reports: 0,
            refused: None,
        }
    }

    /// Take a chunk of the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let mut buffer = std::mem::replace(&mut self.buffer, LineBuffer::new(MAX_LINE));
        buffer.push(bytes, &mut |line| self.line(line));
        self.buffer = buffer;
    }

    /// The stream ended.
    pub(crate) fn finish(&mut self) {
        let mut buffer = std::mem::replace(&mut self.buffer, LineBuffer::new(MAX_LINE));
        buffer.finish(&mut |line| self.line(line));
        self.buffer = buffer;
    }

    fn line(&mut self, line: Line<'_>) {
        if self.refused.is_some() {
            return;
        }
        let read = match line {
            Line::Whole(line) => read_line(line),
            Line::TooLong { head, len } => is_report(head).then(|| Err(too_long(len))),
        };
        match read {
            None => {}
            Some(Err(why)) => self.refused = Some(why),
            Some(Ok(usage)) => {
                self.reports += 1;
                if self.reports > MAX_REPORTS {
                    self.refused = Some(format!(
                        "more than {MAX_REPORTS} `spurUsage` lines in one step"
                    ));
                    return;
                }
                self.total.get_or_insert_with(Usage::default).add(&usage);
            }
        }
    }

    /// The sum of the reports so far (`None`: no report).
    pub(crate) fn total(&self) -> Option<&Usage> {
        self.total.as_ref()
    }

    /// Why a report was refused, if one was.
    pub(crate) fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }
}

/// The reports of a whole stream at once.
pub(crate) fn read_all(bytes: &[u8]) -> Result<Option<Usage>, String> {
    let mut lines = UsageLines::new();
    lines.push(bytes);
    lines.finish();
    match lines.refused {
        Some(why) => Err(why),
        None => Ok(lines.total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_reports_and_ignores_other_lines() {
        let stderr = b"warming up\n{\"spurUsage\":{\"inputTokens\":100,\"outputTokens\":20,\"costUsd\":0.01}}\nnoise {\"spurUsage\"\n{ \"spurUsage\": {\"inputTokens\":5,\"cachedTokens\":5}}";
        let usage = read_all(stderr).unwrap().unwrap();
        assert_eq!(usage.input_tokens, 105);
        assert_eq!(usage.output_tokens, 20);
        assert_eq!(usage.cached_tokens, 5);
        assert_eq!(usage.cost_usd, Some(0.01));
        assert_eq!(read_all(b"nothing here\n").unwrap(), None);
    }

    #[test]
    fn refuses_hostile_reports() {
        let refused = |line: &[u8]| read_all(line).unwrap_err();
        assert!(refused(b"{\"spurUsage\":{\"inputTokens\":-1}}").contains("not a usage report"));
        assert!(refused(b"{\"spurUsage\":{\"inputTokens\":1e30}}").contains("not a usage report"));
        assert!(refused(b"{\"spurUsage\":{\"inputTokens\":2000000000000}}").contains("more than"));
        assert!(refused(b"{\"spurUsage\":{\"costUsd\":-0.5}}").contains("costUsd"));
        assert!(refused(b"{\"spurUsage\":{\"costUsd\":1e300}}").contains("costUsd"));
        assert!(
            refused(b"{\"spurUsage\":{\"inputTokens\":1,\"cachedTokens\":2}}").contains("cached")
        );
        assert!(
            refused(b"{\"spurUsage\":{\"inputTokens\":1,\"sneaky\":1}}").contains("unknown field")
        );
        assert!(refused(b"{\"spurUsage\":{},\"extra\":1}").contains("unknown field"));
        let mut huge = b"{\"spurUsage\":{\"model\":\"".to_vec();
        huge.extend(std::iter::repeat_n(b'm', 10 << 20));
        huge.extend(b"\"}}\n");
        assert!(refused(&huge).contains("longer than"));
    }

    #[test]
    fn too_many_reports_are_refused() {
        let line = b"{\"spurUsage\":{\"inputTokens\":1}}\n";
        let many: Vec<u8> = line.repeat(MAX_REPORTS + 1);
        assert!(read_all(&many).unwrap_err().contains("more than"));
        let enough: Vec<u8> = line.repeat(MAX_REPORTS);
        assert_eq!(
            read_all(&enough).unwrap().unwrap().input_tokens,
            MAX_REPORTS as u64
        );
    }
}
