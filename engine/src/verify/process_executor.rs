//! Runs a gate's command through `spur_process`: in its own process group, in the
//! project root, with a timeout that kills the whole group. Before each attempt the gate's
//! findings file and expected file are removed, so a file left by an earlier run can never
//! count as this run's evidence.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use spur_process::{ProcessSpec, ProcessStatus};

use super::attempt::{Attempt, Ended, GateExecutor};
use super::finding::{findings_in, Finding, FindingSeverity};
use super::gate::{Gate, GateCommand};
use crate::store::bounded_read::read_string;

/// Lines of each stream kept in the evidence.
pub(crate) const TAIL_LINES: usize = 40;
/// Longest line kept in the tail, in characters.
const TAIL_LINE_CHARS: usize = 400;
/// The most of a findings file that is read: sixteen times a stream's capture cap.
pub(crate) const MAX_FINDINGS_BYTES: u64 = 16 * 1024 * 1024;

/// The real executor: one per verify run.
#[derive(Debug)]
pub(crate) struct ProcessExecutor {
    pub(crate) project_root: PathBuf,
    pub(crate) evidence_dir: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) run_id: String,
    pub(crate) wbs: Option<String>,
    /// Extra environment for every gate (the runner passes a run's vars).
    pub(crate) env: Vec<(String, String)>,
    /// A run's secrets, replaced in the output and findings before anything records them.
    pub(crate) redactor: crate::redact::Redactor,
    /// The start of the verify run: attempts record monotonic offsets from it.
    pub(crate) origin: Instant,
}

impl ProcessExecutor {
    /// Where `gate` writes findings: its `findingsFile`, else one in the evidence directory.
    pub(crate) fn findings_path(&self, gate: &Gate) -> PathBuf {
        match &gate.findings_file {
            Some(rel) => self.project_root.join(rel),
            None => self
                .evidence_dir
                .join(format!("{}.findings.jsonl", gate.name)),
        }
    }

    fn spec(&self, gate: &Gate, findings: &Path) -> ProcessSpec {
        let spec = match &gate.command {
            GateCommand::Shell(text) => ProcessSpec::shell(text),
            GateCommand::Exec { executable, args } => ProcessSpec::new(executable, args),
        };
        let mut spec = spec
            .cwd(&self.project_root)
            .timeout(gate.timeout)
            .env("SPUR_GATE", &gate.name)
            .env("SPUR_RUN", &self.run_id)
            .env("SPUR_EVIDENCE_DIR", &self.evidence_dir)
            .env("SPUR_FINDINGS_FILE", findings)
            .env("SPUR_STATE_DIR", &self.state_dir);
        spec = match &self.wbs {
            Some(wbs) => spec.env("SPUR_WBS", wbs),
            None => spec.env_remove("SPUR_WBS"),
        };
        for (name, value) in &self.env {
            spec = spec.env(name, value);
        }
        spec
    }

    fn millis_since_origin(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl GateExecutor for ProcessExecutor {
    fn attempt(&self, gate: &Gate) -> Attempt {
        let findings_path = self.findings_path(gate);
        let expect_path = gate.expect_file.as_ref().map(|p| self.project_root.join(p));
        let started_at = SystemTime::now();
        let started_ms = self.millis_since_origin();
        let cleared = [Some(&findings_path), expect_path.as_ref()]
            .into_iter()
            .flatten()
            .try_for_each(|p| remove_stale(p));
        if let Err(why) = cleared {
            return finished(self, started_at, started_ms, Ended::CannotStart(why));
        }
        let outcome = self.spec(gate, &findings_path).run();
        let ended = match outcome.status {
            ProcessStatus::Exited(code) => Ended::Exited(code),
            ProcessStatus::Signalled(signal) => Ended::Signalled(signal),
            ProcessStatus::TimedOut => Ended::TimedOut(gate.timeout),
            // A gate has no output watch, so nothing stops it but its timeout.
            ProcessStatus::FailedToStart(why) | ProcessStatus::Stopped(why) => {
                Ended::CannotStart(why)
            }
        };
        let redact = |bytes: &[u8]| {
            self.redactor
                .text(&String::from_utf8_lossy(bytes))
                .into_owned()
        };
        let stdout = redact(&outcome.stdout);
        let stderr = redact(&outcome.stderr);
        let mut findings = findings_in(&stdout);
        match read_string(&findings_path, MAX_FINDINGS_BYTES) {
            Ok(text) => findings.extend(findings_in(&self.redactor.text(&text))),
            Err(e) if e.is_missing() => {}
            // Said, not dropped: a gate's findings are never lost without a word.
            Err(e) => findings.push(Finding {
                severity: FindingSeverity::Warn,
                file: None,
                line: None,
                message: format!(
                    "the findings file {} could not be read: {e}",
                    findings_path.display()
                ),
                fix: None,
            }),
        }
        let missing_evidence = gate
            .expect_file
            .as_ref()
            .filter(|_| expect_path.as_ref().is_some_and(|p| !p.exists()))
            .cloned();
        Attempt {
            started_at,
            finished_at: SystemTime::now(),
            started_ms,
            finished_ms: self.millis_since_origin(),
            ended,
            stdout_tail: tail(&stdout),
            stderr_tail: tail(&stderr),
            output_truncated: outcome.stdout_truncated || outcome.stderr_truncated,
            findings,
            missing_evidence,
        }
    }
}

fn finished(
    executor: &ProcessExecutor,
    started_at: SystemTime,
    started_ms: u64,
    ended: Ended,
) -> Attempt {
    Attempt {
        started_at,
        finished_at: SystemTime::now(),
        started_ms,
        finished_ms: executor.millis_since_origin(),
        ended,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        output_truncated: false,
        findings: Vec::new(),
        missing_evidence: None,
    }
}

fn remove_stale(path: &Path) -> Result<(), String> {
    // Look before unlinking: a lookup does not lock the directory, an unlink does (and
    // would wait behind a gate running beside this one that writes there).
    if matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    {
        return Ok(());
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!(
            "cannot remove the stale file {} before the run: {e}",
            path.display()
        )),
    }
}

/// The last [`TAIL_LINES`] lines of `text`, long lines shortened.
pub(crate) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(TAIL_LINES);
    lines
        .iter()
        .skip(skip)
        .map(|line| match line.char_indices().nth(TAIL_LINE_CHARS) {
            Some((i, _)) => format!("{}…", line.get(..i).unwrap_or(line)),
            None => (*line).to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let t = tail(&text);
        assert!(t.starts_with("line 11\n"), "{t}");
        assert!(t.ends_with("line 50"), "{t}");
    }

    #[test]
    fn a_findings_file_that_cannot_be_read_is_a_warning_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let executor = ProcessExecutor {
            project_root: dir.path().to_path_buf(),
            evidence_dir: dir.path().join("evidence"),
            state_dir: dir.path().join(".spur"),
            run_id: "r".into(),
            wbs: None,
            env: Vec::new(),
            redactor: crate::redact::Redactor::default(),
            origin: Instant::now(),
        };
        std::fs::create_dir_all(&executor.evidence_dir).unwrap();
        let gate = Gate {
            name: "plant".into(),
            command: GateCommand::Shell("mkfifo \"$SPUR_FINDINGS_FILE\"".into()),
            needs: Vec::new(),
            timeout: std::time::Duration::from_secs(30),
            read_only: true,
            severity: super::super::gate::GateSeverity::Blocker,
            enabled: true,
            expect_file: None,
            findings_file: None,
            span: crate::source::Span::default(),
            needs_span: crate::source::Span::default(),
        };
        let attempt = executor.attempt(&gate);
        assert!(
            matches!(attempt.ended, Ended::Exited(0)),
            "{:?}",
            attempt.ended
        );
        assert_eq!(attempt.findings.len(), 1, "{:?}", attempt.findings);
        assert_eq!(attempt.findings[0].severity, FindingSeverity::Warn);
        assert!(
            attempt.findings[0].message.contains("it is a FIFO"),
            "{}",
            attempt.findings[0].message
        );
    }
}
