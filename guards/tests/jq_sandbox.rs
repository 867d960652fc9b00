//! The jq worker through `JqSandbox`, with the test worker binary: a timeout kills the
//! worker (its pid is gone), a crash is named and the next evaluation gets a fresh worker,
//! and the compiled filter cache does not mix up variables.

#![forbid(unsafe_code)]

use std::time::Duration;

use serde_json::json;
use spur_guards::jq::{JqEvalError, JqLimits, JqProgram, JqSandbox};

fn sandbox() -> JqSandbox {
    JqSandbox::worker(env!("CARGO_BIN_EXE_spur-guards-jq-worker"), [])
}

/// Whether `pid` is a live (not zombie) process running the test worker.
fn is_live_worker(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let zombie = stat
        .rsplit(')')
        .next()
        .is_some_and(|s| s.trim_start().starts_with('Z'));
    !zombie && String::from_utf8_lossy(&cmdline).contains("spur-guards-jq-worker")
}

#[test]
fn a_timeout_kills_the_worker_and_the_next_evaluation_starts_a_fresh_one() {
    let jq = sandbox();
    let ok = JqProgram::compile(". + 1", &[]).unwrap();
    assert_eq!(
        jq.first(&ok, &json!(1), &[], &JqLimits::default()),
        Ok(Some(json!(2)))
    );
    let first = jq.worker_pid().unwrap();
    assert!(is_live_worker(first));

    let endless = JqProgram::compile("last(range(1e18))", &[]).unwrap();
    let short = JqLimits {
        timeout: Duration::from_millis(100),
        ..JqLimits::default()
    };
    assert_eq!(
        jq.first(&endless, &json!(null), &[], &short),
        Err(JqEvalError::DeadlineExceeded(Duration::from_millis(100)))
    );
    assert_eq!(jq.worker_pid(), None);
    assert!(!is_live_worker(first));

    assert_eq!(
        jq.first(&ok, &json!(2), &[], &JqLimits::default()),
        Ok(Some(json!(3)))
    );
    assert_ne!(jq.worker_pid(), Some(first));
}

#[test]
fn crashes_are_named_and_do_not_poison_the_sandbox() {
    let jq = sandbox();
    let limits = JqLimits::default();
    let recurse = JqProgram::compile("def f: [f]; f", &[]).unwrap();
    let err = jq.first(&recurse, &json!(null), &[], &limits).unwrap_err();
    assert!(err.to_string().contains("stack overflow"), "{err}");
    let hog = JqProgram::compile(r#""x" * 4000000000"#, &[]).unwrap();
    let err = jq.first(&hog, &json!(null), &[], &limits).unwrap_err();
    assert!(matches!(err, JqEvalError::OutOfMemory { .. }), "{err}");
    let ok = JqProgram::compile("$a - $b", &["a", "b"]).unwrap();
    assert_eq!(
        jq.first(&ok, &json!(null), &[json!(1), json!(2)], &limits),
        Ok(Some(json!(-1)))
    );
    // The same text with the variables bound in another order is another program.
    let swapped = JqProgram::compile("$a - $b", &["b", "a"]).unwrap();
    assert_eq!(
        jq.first(&swapped, &json!(null), &[json!(10), json!(20)], &limits),
        Ok(Some(json!(10)))
    );
}

#[test]
fn dropping_the_last_clone_stops_the_worker() {
    let jq = sandbox();
    let ok = JqProgram::compile(".", &[]).unwrap();
    jq.first(&ok, &json!(1), &[], &JqLimits::default()).unwrap();
    let pid = jq.worker_pid().unwrap();
    let clone = jq.clone();
    drop(jq);
    assert!(is_live_worker(pid));
    drop(clone);
    assert!(!is_live_worker(pid));
}

#[test]
fn a_worker_started_early_serves_the_first_evaluation() {
    let jq = sandbox();
    jq.start_early();
    let pid = jq.worker_pid().unwrap();
    jq.start_early();
    assert_eq!(
        jq.worker_pid(),
        Some(pid),
        "a second call starts no second worker"
    );
    let ok = JqProgram::compile(".a", &[]).unwrap();
    assert_eq!(
        jq.first(&ok, &json!({"a": 1}), &[], &JqLimits::default()),
        Ok(Some(json!(1)))
    );
    assert_eq!(jq.worker_pid(), Some(pid));
}
