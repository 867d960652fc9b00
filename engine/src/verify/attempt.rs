//! One execution of a gate and what it proves: how it ended, its output tail, its findings,
//! and the status those imply.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::finding::{Finding, FindingSeverity};
use super::gate::Gate;
use super::status::GateStatus;

/// How a gate's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    Exited(i32),
    /// Killed by a signal it was not sent by spur (no exit code).
    Signalled(i32),
    TimedOut(Duration),
    CannotStart(String),
}

/// One run of a gate's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attempt {
    pub(crate) started_at: SystemTime,
    pub(crate) finished_at: SystemTime,
    /// Milliseconds since the verify run began, from a monotonic clock: intervals of
    /// different gates can be compared even if the wall clock jumps.
    pub(crate) started_ms: u64,
    pub(crate) finished_ms: u64,
    pub(crate) ended: Ended,
    /// The last lines of stdout and of stderr.
    pub(crate) stdout_tail: String,
    pub(crate) stderr_tail: String,
    /// Output beyond the capture limit was dropped (findings in it are lost).
    pub(crate) output_truncated: bool,
    pub(crate) findings: Vec<Finding>,
    /// The gate's `expectFile` when it was absent after a successful exit.
    pub(crate) missing_evidence: Option<PathBuf>,
}

impl Attempt {
    /// PASS/WARN/FAIL/ERROR as the verify chapter of the book defines them. A non-zero exit is FAIL even when an
    /// expected file is missing (the exit code is evidence of failure); exit 0 without its
    /// expected file is ERROR: a success claim without evidence is not trusted.
    pub(crate) fn status(&self) -> GateStatus {
        match &self.ended {
            Ended::CannotStart(_) | Ended::TimedOut(_) | Ended::Signalled(_) => GateStatus::Error,
            Ended::Exited(code) if *code != 0 => GateStatus::Fail,
            Ended::Exited(_) if self.missing_evidence.is_some() => GateStatus::Error,
            Ended::Exited(_) => {
                if self.has(FindingSeverity::Block) {
                    GateStatus::Fail
                } else if self.has(FindingSeverity::Warn) {
                    GateStatus::Warn
                } else {
                    GateStatus::Pass
                }
            }
        }
    }

    /// Why the status is what it is, when the exit code alone does not say.
    pub(crate) fn reason(&self) -> Option<String> {
        match &self.ended {
            Ended::CannotStart(why) => Some(format!("could not start: {why}")),
            Ended::TimedOut(after) => Some(format!(
                "timed out after {} ms; its process group was killed",
                after.as_millis()
            )),
            Ended::Signalled(signal) => Some(format!("killed by signal {signal}")),
            Ended::Exited(0) => match &self.missing_evidence {
                Some(path) => Some(format!(
                    "no evidence produced: expected file {} is missing",
                    path.display()
                )),
                None if self.has(FindingSeverity::Block) => {
                    Some("exited 0 but reported blocking findings".to_owned())
                }
                None => None,
            },
            Ended::Exited(_) => None,
        }
    }

    pub(crate) fn exit_code(&self) -> Option<i32> {
        match self.ended {
            Ended::Exited(code) => Some(code),
            _ => None,
        }
    }

    fn has(&self, severity: FindingSeverity) -> bool {
        self.findings.iter().any(|f| f.severity == severity)
    }
}

/// Runs one attempt of a gate. The production executor runs its process; tests substitute
/// scripted attempts.
pub(crate) trait GateExecutor: Sync {
    fn attempt(&self, gate: &Gate) -> Attempt;
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// An attempt that ended as `ended` with `findings`, at a fixed time.
    pub(crate) fn attempt(ended: Ended, findings: Vec<Finding>) -> Attempt {
        Attempt {
            started_at: SystemTime::UNIX_EPOCH,
            finished_at: SystemTime::UNIX_EPOCH,
            started_ms: 0,
            finished_ms: 5,
            ended,
            stdout_tail: String::new(),
            stderr_tail: String::new(),
            output_truncated: false,
            findings,
            missing_evidence: None,
        }
    }

    pub(crate) fn finding(severity: FindingSeverity) -> Finding {
        Finding {
            severity,
            file: Some("src/lib.rs".into()),
            line: Some(1),
            message: "m".into(),
            fix: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn status_follows_exit_code_findings_and_evidence() {
        use FindingSeverity::*;
        assert_eq!(attempt(Ended::Exited(0), vec![]).status(), GateStatus::Pass);
        assert_eq!(
            attempt(Ended::Exited(0), vec![finding(Info)]).status(),
            GateStatus::Pass
        );
        assert_eq!(
            attempt(Ended::Exited(0), vec![finding(Warn)]).status(),
            GateStatus::Warn
        );
        assert_eq!(
            attempt(Ended::Exited(0), vec![finding(Warn), finding(Block)]).status(),
            GateStatus::Fail
        );
        assert_eq!(
            attempt(Ended::Exited(3), vec![finding(Warn)]).status(),
            GateStatus::Fail
        );
        for ended in [
            Ended::TimedOut(Duration::from_millis(5)),
            Ended::CannotStart("no such file".into()),
            Ended::Signalled(9),
        ] {
            assert_eq!(attempt(ended, vec![]).status(), GateStatus::Error);
        }
        let mut missing = attempt(Ended::Exited(0), vec![]);
        missing.missing_evidence = Some("out/report.xml".into());
        assert_eq!(missing.status(), GateStatus::Error);
        assert!(missing.reason().unwrap().contains("out/report.xml"));
        missing.ended = Ended::Exited(1);
        assert_eq!(missing.status(), GateStatus::Fail);
    }
}
