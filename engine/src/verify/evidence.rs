//! Evidence: one Markdown and one JSON file per gate that ran, in
//! `.spur/run/<scope>-evidence/`, holding the command, exit code, duration, output tail and
//! findings of every attempt. The JSON carries wall-clock and monotonic start/finish times,
//! so whether two gates overlapped can be read from evidence alone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::attempt::Attempt;
use super::evidence_dir::EvidenceDir;
use super::finding::Finding;
use super::gate::{Gate, GateSeverity};
use super::gate_result::{EvidenceFiles, GateResult};
use super::status::{Confidence, GateStatus};
use crate::store::timestamp::rfc3339_utc as rfc3339;

/// Where one gate's evidence goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EvidencePaths {
    pub(crate) markdown: PathBuf,
    pub(crate) json: PathBuf,
}

impl EvidencePaths {
    pub(crate) fn new(dir: &Path, gate: &str) -> Self {
        Self {
            markdown: dir.join(format!("{gate}.md")),
            json: dir.join(format!("{gate}.json")),
        }
    }

    /// The paths as text, for people and the verdict. Built on the evidence directory as
    /// shown (see [`display_path`]), they come out relative to the project root.
    pub(crate) fn shown(&self) -> EvidenceFiles {
        EvidenceFiles {
            markdown: self.markdown.display().to_string(),
            json: self.json.display().to_string(),
        }
    }
}

/// `path` relative to `root` when it is inside it, else as given.
pub(crate) fn display_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Who ran the gate, for the evidence header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EvidenceContext<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) wbs: Option<&'a str>,
}

/// Write both evidence files of `result` into `dir` (`<gate>.json` and `<gate>.md`). On a
/// failed write both are removed, so no older copy can stand in for this run's evidence.
pub(crate) fn write_evidence(
    dir: &EvidenceDir,
    gate: &Gate,
    result: &GateResult,
    context: EvidenceContext<'_>,
) -> std::io::Result<()> {
    let json_name = format!("{}.json", gate.name);
    let markdown_name = format!("{}.md", gate.name);
    let json = evidence_json(gate, result, context);
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    text.push('\n');
    let written = dir.write(&json_name, text.as_bytes()).and_then(|()| {
        dir.write(
            &markdown_name,
            evidence_markdown(gate, result, context).as_bytes(),
        )
    });
    if written.is_err() {
        dir.discard(&json_name);
        dir.discard(&markdown_name);
    }
    written
}

/// The JSON evidence of one gate. Serialised straight from these borrowed fields (not
/// through a `serde_json::Value` map, which cost a few allocations per key); the fields are
/// in alphabetical order, the order the map gave them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EvidenceJson<'a> {
    attempts: Vec<AttemptJson<'a>>,
    command: String,
    confidence: Option<Confidence>,
    duration_ms: Option<u64>,
    exit_code: Option<i32>,
    findings: &'a [Finding],
    flaky: bool,
    gate: &'a str,
    needs: &'a [String],
    read_only: bool,
    reason: Option<&'a str>,
    reprobed: bool,
    run: &'a str,
    severity: GateSeverity,
    status: GateStatus,
    task: Option<&'a str>,
    timeout_ms: u64,
    unactionable: bool,
}

/// One attempt in [`EvidenceJson`], fields in alphabetical order too.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttemptJson<'a> {
    duration_ms: u64,
    exit_code: Option<i32>,
    /// How many findings this attempt reported.
    findings: usize,
    finished_at: String,
    finished_ms: u64,
    output_truncated: bool,
    reason: Option<String>,
    started_at: String,
    started_ms: u64,
    status: GateStatus,
    stderr_tail: &'a str,
    stdout_tail: &'a str,
}

fn evidence_json<'a>(
    gate: &'a Gate,
    result: &'a GateResult,
    context: EvidenceContext<'a>,
) -> EvidenceJson<'a> {
    EvidenceJson {
        attempts: result.attempts.iter().map(attempt_json).collect(),
        command: gate.command.display(),
        confidence: result.confidence,
        duration_ms: result.duration_ms,
        exit_code: result.exit_code,
        findings: &result.findings,
        flaky: result.flaky,
        gate: &gate.name,
        needs: &gate.needs,
        read_only: gate.read_only,
        reason: result.reason.as_deref(),
        reprobed: result.reprobed,
        run: context.run_id,
        severity: gate.severity,
        status: result.status,
        task: context.wbs,
        timeout_ms: u64::try_from(gate.timeout.as_millis()).unwrap_or(u64::MAX),
        unactionable: result.unactionable,
    }
}

fn attempt_json(attempt: &Attempt) -> AttemptJson<'_> {
    AttemptJson {
        duration_ms: attempt.finished_ms.saturating_sub(attempt.started_ms),
        exit_code: attempt.exit_code(),
        findings: attempt.findings.len(),
        finished_at: rfc3339(attempt.finished_at),
        finished_ms: attempt.finished_ms,
        output_truncated: attempt.output_truncated,
        reason: attempt.reason(),
        started_at: rfc3339(attempt.started_at),
        started_ms: attempt.started_ms,
        status: attempt.status(),
        stderr_tail: &attempt.stderr_tail,
        stdout_tail: &attempt.stdout_tail,
    }
}

fn evidence_markdown(gate: &Gate, result: &GateResult, context: EvidenceContext<'_>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Gate `{}` — {}\n", gate.name, result.status);
    let mut status = result.status.to_string();
    if let Some(c) = result.confidence {
        let _ = write!(status, " (confidence {}", c.as_str());
        if result.reprobed {
            status.push_str(", re-probed");
        }
        if result.flaky {
            status.push_str(", flaky");
        }
        status.push(')');
    }
    let rows = [
        (
            "Command",
            format!("`{}`", gate.command.display().replace('`', "'")),
        ),
        ("Status", status),
        (
            "Exit code",
            result
                .exit_code
                .map_or_else(|| "none".to_owned(), |c| c.to_string()),
        ),
        (
            "Duration",
            format!("{} ms", result.duration_ms.unwrap_or_default()),
        ),
        ("Severity", gate.severity.as_str().to_owned()),
        ("Run", context.run_id.to_owned()),
        ("Task", context.wbs.unwrap_or("(project)").to_owned()),
    ];
    md.push_str("| | |\n|---|---|\n");
    for (key, value) in rows {
        let _ = writeln!(md, "| {key} | {} |", cell(&value));
    }
    if let Some(reason) = &result.reason {
        let _ = writeln!(md, "\n**{}**", reason);
    }
    if result.unactionable {
        md.push_str("\n**Unactionable:** no finding has a `file:line` locator.\n");
    }
    md.push_str("\n## Findings\n\n");
    if result.findings.is_empty() {
        md.push_str("None reported.\n");
    }
    for finding in &result.findings {
        let _ = writeln!(md, "- {}", finding_line(finding));
    }
    for (i, attempt) in result.attempts.iter().enumerate() {
        let label = if i == 0 { "Attempt 1" } else { "Re-probe" };
        let _ = writeln!(
            md,
            "\n## {label} — {} ({}, {} ms, started {})\n",
            attempt.status(),
            attempt.exit_code().map_or_else(
                || attempt.reason().unwrap_or_default(),
                |c| format!("exit {c}")
            ),
            attempt.finished_ms.saturating_sub(attempt.started_ms),
            rfc3339(attempt.started_at)
        );
        for (stream, text) in [
            ("stdout", &attempt.stdout_tail),
            ("stderr", &attempt.stderr_tail),
        ] {
            if text.is_empty() {
                let _ = writeln!(md, "{stream}: (empty)\n");
            } else {
                let _ = writeln!(md, "{stream} (last lines):\n\n{}", fenced(text));
            }
        }
        if attempt.output_truncated {
            md.push_str("Output beyond the capture limit was dropped.\n");
        }
    }
    md
}

/// A finding as one Markdown line: severity, locator, message, fix.
pub(crate) fn finding_line(finding: &Finding) -> String {
    let mut line = format!("**{}**", finding.severity.as_str());
    match (finding.locator(), &finding.file) {
        (Some(locator), _) => {
            let _ = write!(line, " `{locator}`");
        }
        (None, Some(file)) => {
            let _ = write!(line, " `{file}`");
        }
        (None, None) => {}
    }
    let _ = write!(line, " — {}", finding.message.replace('\n', " "));
    if let Some(fix) = &finding.fix {
        let _ = write!(line, " (fix: {})", fix.replace('\n', " "));
    }
    line
}

/// A table cell: no newlines, pipes escaped.
pub(crate) fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{text}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backticks_in_output() {
        assert_eq!(fenced("a"), "```text\na\n```\n");
        assert_eq!(fenced("x ```` y"), "`````text\nx ```` y\n`````\n");
    }
}
