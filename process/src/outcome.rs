//! How a child ended: [`ProcessOutcome`].

use std::time::{Duration, Instant};

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessStatus {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by this signal (not by our timeout).
    Signalled(i32),
    /// Ran past its timeout; its whole process group was killed.
    TimedOut,
    /// Could not be started (program missing, cwd missing, log file unwritable…).
    FailedToStart(String),
    /// Stopped by its output watch (`crate::OutputWatch`), for this reason; its whole
    /// process group was killed.
    Stopped(String),
}

impl ProcessStatus {
    /// Whether the process exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, ProcessStatus::Exited(0))
    }
}

impl std::fmt::Display for ProcessStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessStatus::Exited(code) => write!(f, "exited with code {code}"),
            ProcessStatus::Signalled(sig) => write!(f, "killed by signal {sig}"),
            ProcessStatus::TimedOut => write!(f, "timed out"),
            ProcessStatus::FailedToStart(why) => write!(f, "failed to start: {why}"),
            ProcessStatus::Stopped(why) => write!(f, "was stopped: {why}"),
        }
    }
}

/// The result of [`crate::ProcessSpec::run`].
#[derive(Debug, Clone)]
pub struct ProcessOutcome {
    /// How the process ended.
    pub status: ProcessStatus,
    /// Wall-clock time from the call to the end.
    pub duration: Duration,
    /// Captured stdout, at most `capture_limit` bytes.
    pub stdout: Vec<u8>,
    /// Captured stderr, at most `capture_limit` bytes.
    pub stderr: Vec<u8>,
    /// Stdout was longer than the capture limit; the rest was dropped from memory.
    pub stdout_truncated: bool,
    /// Stderr was longer than the capture limit; the rest was dropped from memory.
    pub stderr_truncated: bool,
    /// Pid of the child (also its process-group id); `None` if it never started.
    pub pid: Option<u32>,
}

impl ProcessOutcome {
    /// Whether the process exited with code 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    pub(crate) fn failed_to_start(why: String, started: Instant) -> Self {
        Self {
            status: ProcessStatus::FailedToStart(why),
            duration: started.elapsed(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            pid: None,
        }
    }
}
