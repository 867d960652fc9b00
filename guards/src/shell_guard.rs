//! The `shell` guard: `sh -c COMMAND` passes when it exits 0. A timeout, a signal or a
//! failure to start fails closed, with the reason (and the end of stderr) recorded.

use std::path::Path;
use std::time::Duration;

use crate::guard_result::GuardResult;
use spur_process::{ProcessOutcome, ProcessSpec, ProcessStatus};

/// Bytes of stderr kept for the guard's detail.
const STDERR_FOR_DETAIL: usize = 4096;

/// Run `command` (already rendered by [`crate::shell_template::render`]) with `env`
/// added to the environment (vars as variables of the same name).
pub fn shell_guard(
    command: &str,
    env: &[(String, String)],
    cwd: Option<&Path>,
    timeout: Option<Duration>,
) -> GuardResult {
    let mut spec = ProcessSpec::shell(command).capture_limit(STDERR_FOR_DETAIL);
    for (name, value) in env {
        spec = spec.env(name, value);
    }
    if let Some(dir) = cwd {
        spec = spec.cwd(dir);
    }
    if let Some(timeout) = timeout {
        spec = spec.timeout(timeout);
    }
    shell_guard_with(&spec)
}

/// Run a prepared spec (e.g. with a log file) as a guard.
pub fn shell_guard_with(spec: &ProcessSpec) -> GuardResult {
    let outcome = spec.run();
    GuardResult {
        passed: outcome.success(),
        detail: detail(&outcome),
        duration: outcome.duration,
    }
}

fn detail(outcome: &ProcessOutcome) -> String {
    let status = match &outcome.status {
        ProcessStatus::Exited(0) => return "exited with code 0".to_owned(),
        ProcessStatus::TimedOut => format!(
            "timed out after {} ms (process group killed)",
            outcome.duration.as_millis()
        ),
        other => other.to_string(),
    };
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    match stderr.trim_end().lines().last() {
        Some(line) if !line.is_empty() => format!("{status}: {line}"),
        _ => status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_on_exit_zero_and_sees_vars_in_env() {
        let env = [("wbs".to_owned(), "1.2".to_owned())];
        let r = shell_guard(r#"test "$wbs" = 1.2"#, &env, None, None);
        assert!(r.passed, "{}", r.detail);
        assert_eq!(r.detail, "exited with code 0");
    }

    #[test]
    fn fails_with_the_exit_code_and_last_stderr_line() {
        let r = shell_guard("echo first >&2; echo nope >&2; exit 3", &[], None, None);
        assert!(!r.passed);
        assert_eq!(r.detail, "exited with code 3: nope");
    }

    #[test]
    fn a_timeout_fails_closed() {
        let r = shell_guard("sleep 100", &[], None, Some(Duration::from_millis(50)));
        assert!(!r.passed);
        assert!(r.detail.starts_with("timed out after"), "{}", r.detail);
    }

    #[test]
    fn a_missing_cwd_fails_closed() {
        let r = shell_guard("true", &[], Some(Path::new("/nonexistent/spur-dir")), None);
        assert!(!r.passed);
        assert!(r.detail.starts_with("failed to start"), "{}", r.detail);
    }
}
