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
    let ok = JqProgram::compile(". + 0", &[]).unwrap();
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
    let ok = JqProgram::compile(".a + 0", &[]).unwrap();
    assert!(ok.needs_worker());
    assert_eq!(
        jq.first(&ok, &json!({"a": 1}), &[], &JqLimits::default()),
        Ok(Some(json!(1)))
    );
    assert_eq!(jq.worker_pid(), Some(pid));
}

#[test]
fn a_filter_in_the_bounded_fragment_is_evaluated_without_a_worker() {
    let jq = sandbox();
    let limits = JqLimits::default();
    let check =
        JqProgram::compile(r#".verdict == $want and (.rows | length) > 2"#, &["want"]).unwrap();
    assert!(!check.needs_worker());
    let input = json!({"verdict": "PASS", "rows": [1, 2, 3]});
    assert_eq!(
        jq.first(&check, &input, &[json!("PASS")], &limits),
        Ok(Some(json!(true)))
    );
    assert_eq!(
        jq.first(&check, &input, &[json!("FAIL")], &limits),
        Ok(Some(json!(false)))
    );
    // A runtime error is still an error, not a crash.
    let index = JqProgram::compile(".a.b == 1", &[]).unwrap();
    assert!(matches!(
        jq.first(&index, &json!({"a": 1}), &[], &limits),
        Err(JqEvalError::Runtime(_))
    ));
    assert_eq!(jq.worker_pid(), None, "no worker was started");
}

#[test]
fn a_bounded_filter_on_a_deeply_nested_input_goes_to_the_worker() {
    let jq = sandbox();
    let limits = JqLimits::default();
    // 200 levels: more than the fragment's 128. The worker reads what it is sent with
    // serde_json's own bound (128), so it refuses the value: what matters here is that the
    // worker, not spur, was asked.
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let same = JqProgram::compile(". == $v", &["v"]).unwrap();
    assert!(!same.needs_worker());
    let result = jq.first(&same, &deep, &[deep.clone()], &limits);
    assert!(
        matches!(&result, Err(JqEvalError::Crashed(why)) if why.contains("recursion limit")),
        "{result:?}"
    );
    assert!(
        jq.worker_pid().is_some(),
        "the deep comparison ran in the worker"
    );
}

#[test]
fn hostile_filters_are_never_in_the_fragment_and_stay_contained() {
    let jq = sandbox();
    let limits = JqLimits {
        timeout: Duration::from_millis(200),
        ..JqLimits::default()
    };
    // 2^40 bytes if it were allowed to finish.
    let doubling = format!("{} == 1", [". + ."; 40].join(" | "));
    for (expr, input) in [
        ("reduce range(100000) as $i ([]; [.])", json!(null)),
        (doubling.as_str(), json!("x")),
        ("[limit(1e9; repeat(.))] | length > 0", json!(1)),
        ("def f: f; f == 1", json!(1)),
    ] {
        let program = JqProgram::compile(expr, &[]).unwrap();
        assert!(program.needs_worker(), "{expr} must go to the worker");
        let result = jq.first(&program, &input, &[], &limits);
        assert!(result.is_err(), "{expr} gave {result:?}");
    }
    // The worker took each (and was stopped when one overran); spur is still here to say so.
    let ok = JqProgram::compile(".a == 1", &[]).unwrap();
    assert_eq!(
        jq.first(&ok, &json!({"a": 1}), &[], &limits),
        Ok(Some(json!(true)))
    );
}
