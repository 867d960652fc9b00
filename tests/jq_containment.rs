//! jq that cannot hurt the run: a guard's filter is evaluated in the run's jq worker
//! process, so one that overflows the stack, eats memory or never finishes fails closed with
//! its reason, the run goes on (and can be continued), and no evaluation outlives its
//! deadline. `spur jq` on hostile input or filters ends with an error, not an abort.

use crate::common::{events, Spur};

/// The details of the run's jq guard evaluations, in order.
fn jq_details(p: &Spur) -> Vec<String> {
    events(&p.newest_trace(), "guard-evaluated")
        .into_iter()
        .filter(|e| e["kind"] == "jq")
        .map(|e| e["detail"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// `a` can leave only through `guard` (to `done`); otherwise it goes to `held`, which
/// pauses and leads back to `a`.
fn hostile_guard_pipeline(guard: &str) -> String {
    format!(
        r#"
name: hostile
initialState: a
terminalStates: [done]
states:
  - id: a
  - {{id: held, pause: true}}
  - {{id: done}}
transitions:
  - {{from: a, to: done, guard: {guard}}}
  - {{from: a, to: held}}
  - {{from: held, to: a}}
"#
    )
}

#[test]
fn a_guard_that_builds_a_value_100000_deep_fails_closed_and_the_run_can_be_continued() {
    let p = Spur::new();
    let yaml = hostile_guard_pipeline(
        r#"{kind: jq, options: {expr: 'reduce range(100000) as $i ([]; [.])'}}"#,
    );
    let paused = p.pipeline(&yaml).json().run().code(3).stdout_json();
    assert_eq!(paused["state"], "held");
    let details = jq_details(&p);
    assert_eq!(details, ["an output nests deeper than 100 levels"]);
    let run_id = paused["runId"].as_str().unwrap();
    p.args(["continue", run_id]).json().run().code(3);
    assert_eq!(jq_details(&p).len(), 2);
}

#[test]
fn a_guard_that_overflows_the_stack_fails_closed_and_the_run_can_be_continued() {
    let p = Spur::new();
    let yaml = hostile_guard_pipeline(r#"{kind: jq, options: {expr: 'def f: [f]; f'}}"#);
    let paused = p.pipeline(&yaml).json().run().code(3).stdout_json();
    assert_eq!(paused["state"], "held");
    let details = jq_details(&p);
    assert_eq!(details.len(), 1);
    assert!(details[0].contains("stack overflow"), "{details:?}");
    // Resuming evaluates the same guard again: it fails closed again, the run pauses again.
    let run_id = paused["runId"].as_str().unwrap();
    let resumed = p
        .args(["continue", run_id])
        .json()
        .run()
        .code(3)
        .stdout_json();
    assert_eq!(resumed["state"], "held");
    let details = jq_details(&p);
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(details[1].contains("stack overflow"), "{details:?}");
}

#[test]
fn a_guard_that_eats_memory_fails_closed_as_out_of_memory() {
    let p = Spur::new();
    let yaml = hostile_guard_pipeline(
        r#"{kind: jq, options: {expr: '("x" * 4000000000 | length) > 0', timeoutMs: 600000}}"#,
    );
    p.pipeline(&yaml).json().run().code(3);
    let details = jq_details(&p);
    assert_eq!(details.len(), 1);
    assert!(details[0].starts_with("out of memory:"), "{details:?}");
}

/// `sh` lists spur's children (`/proc/<spur>/task/*/children`) with their command lines into
/// `file`, one per line.
fn list_spurs_children(file: &str) -> String {
    format!(
        r#"{{kind: shell, options: {{command: 'for c in $(cat /proc/$PPID/task/*/children); do tr "\000" " " < /proc/$c/cmdline; echo; done > {file}'}}}}"#
    )
}

#[test]
fn an_endless_guard_times_out_at_its_timeout_and_its_worker_is_killed() {
    let p = Spur::new();
    let yaml = format!(
        r#"
name: endless
initialState: a
terminalStates: [done, failed]
states:
  - id: a
  - id: worker-up
    onEnter: [{before}]
  - id: worker-gone
    onEnter: [{after}]
  - {{id: done}}
  - {{id: failed}}
transitions:
  - {{from: a, to: worker-up, guard: {{kind: jq, options: {{expr: '.state == "a"'}}}}}}
  - {{from: worker-up, to: failed, guard: {{kind: jq, options: {{expr: 'last(range(1e18)) > 0', timeoutMs: 300}}}}}}
  - {{from: worker-up, to: worker-gone}}
  - {{from: worker-gone, to: done, guard: {{kind: jq, options: {{expr: '.state == "worker-gone"'}}}}}}
  - {{from: worker-gone, to: failed}}
"#,
        before = list_spurs_children("before.txt"),
        after = list_spurs_children("after.txt"),
    );
    let out = p.pipeline(&yaml).json().run().success().stdout_json();
    assert_eq!(out["state"], "done");
    let details = jq_details(&p);
    assert_eq!(
        details[1],
        "timeout: the evaluation did not finish within 300 ms (the jq worker was stopped)"
    );
    // After the first guard the worker waited for more; after the timeout it was gone
    // (killed and reaped) — and a fresh one answered the last guard.
    let before = p.read("before.txt");
    assert!(before.contains("__jq-worker"), "{before}");
    let after = p.read("after.txt");
    assert!(!after.contains("__jq-worker"), "{after}");
    assert!(
        after.contains("sh -c"),
        "the listing saw the shell itself: {after}"
    );
}

#[test]
fn a_jq_guard_timeout_can_come_from_a_var_and_a_bad_one_fails_closed() {
    let p = Spur::new();
    let yaml = r#"
name: t
initialState: a
terminalStates: [pass, other]
vars: {ms: "5000"}
states: [{id: a}, {id: pass}, {id: other}]
transitions:
  - {from: a, to: pass, guard: {kind: jq, options: {expr: 'true', timeoutMs: '${vars.ms}'}}}
  - {from: a, to: other}
"#;
    let out = p.pipeline(yaml).json().run().success().stdout_json();
    assert_eq!(out["state"], "pass");
    let out = p
        .pipeline(yaml)
        .var("ms", "soon")
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "other");
    let details = jq_details(&p);
    assert!(details[0].contains("timeoutMs"), "{details:?}");
}

#[test]
fn ordinary_jq_guards_pass_and_fail_as_before_through_one_worker() {
    let p = Spur::new();
    p.file("v.json", r#"{"verdict": "PASS", "n": 3}"#);
    let yaml = r#"
name: ordinary
initialState: a
terminalStates: [done, failed]
vars: {want: PASS}
states: [{id: a}, {id: b}, {id: c}, {id: done}, {id: failed}]
transitions:
  - {from: a, to: failed, guard: {kind: jq, options: {file: v.json, expr: '.n > 5'}}}
  - {from: a, to: b, guard: {kind: jq, options: {file: v.json, expr: '.verdict == $want'}}}
  - {from: b, to: failed, guard: {kind: jq, options: {expr: 'error("no")'}}}
  - {from: b, to: c, guard: {kind: jq, options: {expr: '.state == "b" and .vars.want == "PASS"'}}}
  - {from: c, to: done, guard: {kind: jq, options: {expr: '[range(10)] | add == 45'}}}
"#;
    let out = p.pipeline(yaml).json().run().success().stdout_json();
    assert_eq!(out["state"], "done");
    assert_eq!(
        jq_details(&p),
        [
            "yielded false",
            "yielded true",
            "jq error: no",
            "yielded true",
            "yielded true"
        ]
    );
}

#[test]
fn check_refuses_a_jq_expression_nested_100000_deep_with_a_diagnostic() {
    let p = Spur::new();
    let deep = format!("{}true{}", "(".repeat(100_000), ")".repeat(100_000));
    let chain = vec!["."; 100_000].join(" | ");
    for expr in [deep, chain] {
        let yaml = format!(
            "name: deep\ninitialState: a\nterminalStates: [b]\nstates: [{{id: a}}, {{id: b}}]\n\
             transitions:\n  - {{from: a, to: b, guard: {{kind: jq, options: {{expr: '{expr}'}}}}}}\n"
        );
        p.file("deep.yaml", yaml);
        let out = p.args(["check", "deep.yaml"]).run();
        let text = format!("{}{}", out.stdout(), out.stderr());
        assert_eq!(out.exit_code(), Some(1), "{text:.300}");
        assert!(text.contains("spur::check::jq-compile"), "{text:.300}");
        assert!(
            text.contains("nests more than 256") || text.contains("more than 2000 operators"),
            "{text:.300}"
        );
        // The run refuses to start with the same finding, without a crash.
        p.args(["run", "deep.yaml"]).run().code(2);
    }
}

#[test]
fn spur_jq_on_input_nested_100000_deep_exits_with_an_error() {
    let p = Spur::new();
    p.file(
        "deep.json",
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    p.args(["jq", ".", "deep.json"])
        .run()
        .code(2)
        .stderr_contains("spur::jq::input")
        .stderr_contains("nests deeper than 10000 levels");
}

#[test]
fn spur_jq_on_hostile_filters_exits_with_an_error_not_an_abort() {
    let p = Spur::new();
    p.args(["jq", "-n", "reduce range(100000) as $i ([]; [.])"])
        .run()
        .code(5)
        .stderr_contains("an output nests deeper than 10000 levels");
    let out = p.args(["jq", "-n", "def f: [f]; f"]).run().code(5);
    let err = out.stderr();
    assert!(err.contains("spur::jq::crashed"), "{err}");
    assert!(err.contains("stack overflow"), "{err}");
    assert!(!err.contains("fatal runtime error"), "{err}");
    // The shim behaves the same.
    let shim = p.path().join("bin");
    std::fs::create_dir_all(&shim).unwrap();
    std::os::unix::fs::symlink(crate::common::bin(), shim.join("jq")).unwrap();
    let out = std::process::Command::new(shim.join("jq"))
        .args(["-n", "def f: [f]; f"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stack overflow"));
}

#[test]
fn spur_jq_still_passes_its_exit_codes_and_stdin_through() {
    let p = Spur::new();
    p.args(["jq", "-e", ".ok"])
        .stdin(r#"{"ok": false}"#)
        .run()
        .code(1);
    p.args(["jq", "-r", ".a"])
        .stdin(r#"{"a": "x"}"#)
        .run()
        .success()
        .stdout_is("x\n");
    p.args(["jq", "-n", r#""bye" | halt_error(7)"#])
        .run()
        .code(7)
        .stderr_is("bye");
}
