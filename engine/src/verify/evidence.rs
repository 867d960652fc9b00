//! Evidence: one Markdown and one JSON file per gate that ran, in
//! `.spur/run/<scope>-evidence/`, holding the command, exit code, duration, output tail and
//! findings of every attempt. The JSON carries wall-clock and monotonic start/finish times,
//! so whether two gates overlapped can be read from evidence alone.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::attempt::Attempt;
use super::finding::Finding;
use super::gate::Gate;
use super::gate_result::{EvidenceFiles, GateResult};
use crate::timestamp::rfc3339_utc as rfc3339;

/// Where one gate's evidence goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidencePaths {
    pub markdown: PathBuf,
    pub json: PathBuf,
}

impl EvidencePaths {
    pub fn new(dir: &Path, gate: &str) -> Self {
        Self {
            markdown: dir.join(format!("{gate}.md")),
            json: dir.join(format!("{gate}.json")),
        }
    }

    /// The paths as shown to people and stored in the verdict: relative to the project
    /// root when they are inside it.
    pub fn display(&self, project_root: &Path) -> EvidenceFiles {
        EvidenceFiles {
            markdown: display_path(&self.markdown, project_root),
            json: display_path(&self.json, project_root),
        }
    }
}

/// `path` relative to `root` when it is inside it, else as given.
pub fn display_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Who ran the gate, for the evidence header.
#[derive(Debug, Clone, Copy)]
pub struct EvidenceContext<'a> {
    pub run_id: &'a str,
    pub wbs: Option<&'a str>,
}

/// Replace `path` with `bytes` through a temporary file and a rename: readers never see a
/// partial file (they may briefly see none). No fsync: evidence and reports are regenerated
/// by the next verify run, and on this project's disks an fsync costs ~10 ms, four per
/// gate — more than running a trivial gate. The ledger and the verdict artifact, which are
/// records, are still written durably.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_recycling(path, bytes, path)
}

/// [`write_replacing`], reusing the file at `old` (the previous copy, e.g. in the retired
/// evidence directory) as the temporary file when there is one: it is renamed to the
/// temporary name, overwritten and renamed into place. Creating and deleting a file per
/// write is what costs most when a run writes hundreds of small files (ext4 allocating and
/// freeing inodes, and skipping recently freed ones when it has no journal); moving an
/// existing file costs neither. `path` never exists in a partial state: the old copy has
/// left it before the new one arrives.
pub fn write_recycling(path: &Path, bytes: &[u8], old: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut recycled = std::fs::rename(old, &tmp).is_ok();
    let result = overwrite(&tmp, bytes, recycled)
        .or_else(|e| {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(e);
            }
            // The directory was missing (so nothing could be recycled into it either).
            std::fs::create_dir_all(dir)?;
            recycled = std::fs::rename(old, &tmp).is_ok();
            overwrite(&tmp, bytes, recycled)
        })
        .and_then(|()| {
            // Renaming over an existing file makes ext4 flush the new data first (its
            // replace-by-rename safeguard), which costs as much as an fsync; removing the
            // old file first avoids that. A recycled old copy has already left `path` (or
            // lived in the retired directory, and `path` is in a fresh one).
            match recycled {
                true => Ok(()),
                false => match std::fs::remove_file(path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            }
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write `bytes` at the start of `path` (created if missing) and cut it to their length.
/// Not `O_TRUNC`: truncating a file to zero makes ext4 flush it on close.
fn overwrite(path: &Path, bytes: &[u8], existed: bool) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.write_all(bytes)?;
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    // Cutting is only needed when the old content was longer (a metadata read is cheaper
    // than a truncate).
    if existed && file.metadata()?.len() > len {
        file.set_len(len)?;
    }
    Ok(())
}

/// Write both evidence files of `result` (atomically: never a partial file). `recycle`: a
/// directory holding the previous run's evidence, whose files are reused (see
/// [`write_recycling`]).
pub fn write_evidence(
    paths: &EvidencePaths,
    gate: &Gate,
    result: &GateResult,
    context: EvidenceContext<'_>,
    recycle: Option<&Path>,
) -> std::io::Result<()> {
    let old = |path: &Path| match (recycle, path.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    };
    let json = evidence_json(gate, result, context);
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    text.push('\n');
    write_recycling(&paths.json, text.as_bytes(), &old(&paths.json))?;
    write_recycling(
        &paths.markdown,
        evidence_markdown(gate, result, context).as_bytes(),
        &old(&paths.markdown),
    )
}

fn evidence_json(
    gate: &Gate,
    result: &GateResult,
    context: EvidenceContext<'_>,
) -> serde_json::Value {
    json!({
        "gate": gate.name,
        "run": context.run_id,
        "task": context.wbs,
        "command": gate.command.display(),
        "status": result.status,
        "confidence": result.confidence,
        "reprobed": result.reprobed,
        "flaky": result.flaky,
        "unactionable": result.unactionable,
        "severity": gate.severity,
        "readOnly": gate.read_only,
        "needs": gate.needs,
        "timeoutMs": u64::try_from(gate.timeout.as_millis()).unwrap_or(u64::MAX),
        "exitCode": result.exit_code,
        "durationMs": result.duration_ms,
        "reason": result.reason,
        "findings": result.findings,
        "attempts": result.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
    })
}

fn attempt_json(attempt: &Attempt) -> serde_json::Value {
    json!({
        "status": attempt.status(),
        "exitCode": attempt.exit_code(),
        "reason": attempt.reason(),
        "startedAt": rfc3339(attempt.started_at),
        "finishedAt": rfc3339(attempt.finished_at),
        "startedMs": attempt.started_ms,
        "finishedMs": attempt.finished_ms,
        "durationMs": attempt.finished_ms.saturating_sub(attempt.started_ms),
        "findings": attempt.findings.len(),
        "stdoutTail": attempt.stdout_tail,
        "stderrTail": attempt.stderr_tail,
        "outputTruncated": attempt.output_truncated,
    })
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
pub fn finding_line(finding: &Finding) -> String {
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
pub fn cell(text: &str) -> String {
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
    fn recycling_replaces_the_content_whatever_the_old_length() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        let new = dir.path().join("sub/new.json");
        std::fs::write(&old, "a much longer previous content\n").unwrap();
        write_recycling(&new, b"short\n", &old).unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "short\n");
        assert!(!old.exists(), "the old copy was reused, not left behind");
        // No old copy: a fresh file; replacing itself: the new content, nothing left over.
        write_recycling(&new, b"longer than before\n", &old).unwrap();
        assert_eq!(
            std::fs::read_to_string(&new).unwrap(),
            "longer than before\n"
        );
        write_replacing(&new, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "x");
        let names: Vec<_> = std::fs::read_dir(new.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["new.json"], "no temporary file is left");
    }

    #[test]
    fn fences_outgrow_backticks_in_output() {
        assert_eq!(fenced("a"), "```text\na\n```\n");
        assert_eq!(fenced("x ```` y"), "`````text\nx ```` y\n`````\n");
    }
}
