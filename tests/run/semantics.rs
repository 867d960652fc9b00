//! The semantics of a run: guard order, failing guards and actions, the iteration
//! bound, onError, var precedence, onExit, failure states, the JSON outcome
//! and the human output.

use serde_json::Value;

use crate::common::{events, Spur};

#[test]
fn first_passing_guard_in_declaration_order_wins() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: order
initialState: a
states: [{id: a}, {id: skipped}, {id: first}, {id: later}]
transitions:
  - {from: a, to: skipped, guard: {kind: never}}
  - {from: a, to: first, guard: {kind: shell, options: {command: "true"}}}
  - {from: a, to: later, guard: {kind: always}}
"#,
        )
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "first");
    // later's guard was never evaluated: the first pass stops the search.
    let guards = events(&p.newest_trace(), "guard-evaluated")
        .iter()
        .map(|g| g["to"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(guards, ["skipped", "first"]);
}

#[test]
fn no_passing_transition_fails_the_run_with_failed_guard() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: stuck
initialState: a
terminalStates: [b]
states: [{id: a}, {id: b}]
transitions:
  - {from: a, to: b, guard: {kind: shell, options: {command: "false"}}}
"#,
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed");
    assert_eq!(out["state"], "a");
    assert_eq!(out["reason"], "no-passing-transition");
    assert_eq!(out["terminalReason"], "failed-guard");
}

#[test]
fn exceeding_the_iteration_bound_fails_with_retry_exhausted() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: loop
initialState: a
iterationBound: 5
terminalStates: [end]
states: [{id: a}, {id: b}, {id: end}]
transitions:
  - {from: a, to: b}
  - {from: b, to: a}
  - {from: b, to: end}
"#,
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "iteration-bound-exceeded");
    assert_eq!(out["terminalReason"], "retry-exhausted");
    assert_eq!(out["iterations"], 5);
    assert_eq!(events(&p.newest_trace(), "transition").len(), 5);
}

#[test]
fn a_failing_action_under_fail_ends_the_run_at_its_state_without_routing() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: fail
initialState: a
terminalStates: [b, c]
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: "echo one >> trail.txt"}}
      - {kind: shell, options: {command: "exit 3"}}
      - {kind: shell, options: {command: "echo never >> trail.txt"}}
  - {id: b}
  - {id: c}
transitions:
  - {from: a, to: b, guard: {kind: action-ok}}
  - {from: a, to: c}
"#,
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["state"], "a");
    assert_eq!(out["reason"], "action-failed");
    assert_eq!(out["terminalReason"], "failed-check");
    assert_eq!(p.read("trail.txt"), "one\n");
    assert!(events(&p.newest_trace(), "guard-evaluated").is_empty());
}

#[test]
fn on_error_continue_records_the_failure_and_goes_on() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: cont
initialState: a
defaultOnError: continue
terminalStates: [ok, notok]
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: "exit 1"}}
      - {kind: shell, options: {command: "echo after >> trail.txt"}}
      - {kind: shell, options: {command: "exit 2"}}
  - {id: ok}
  - {id: notok}
transitions:
  - {from: a, to: ok, guard: {kind: action-ok}}
  - {from: a, to: notok}
"#,
        )
        .json()
        .run()
        .success()
        .stdout_json();
    // The last action failed, so action-ok did not pass.
    assert_eq!(out["state"], "notok");
    assert_eq!(p.read("trail.txt"), "after\n");
    let finished = events(&p.newest_trace(), "action-finished")
        .iter()
        .map(|a| a["ok"].as_bool().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(finished, [false, true, false]);
}

#[test]
fn action_on_error_overrides_the_pipeline_default() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: override
initialState: a
defaultOnError: continue
terminalStates: [b]
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: "exit 1"}, onError: fail}
  - {id: b}
transitions:
  - {from: a, to: b}
"#,
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "action-failed");
}

#[test]
fn on_exit_runs_before_the_transition_is_committed() {
    let p = Spur::new();
    p.pipeline(
        r#"
name: exit
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "echo enter-a >> trail.txt"}}]
    onExit: [{kind: shell, options: {command: "echo exit-a >> trail.txt"}}]
  - id: b
    onEnter: [{kind: shell, options: {command: "echo enter-b >> trail.txt"}}]
transitions:
  - {from: a, to: b}
"#,
    )
    .json()
    .run()
    .success();
    assert_eq!(p.read("trail.txt"), "enter-a\nexit-a\nenter-b\n");
    let records = p.newest_trace();
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    let exit_finished = records
        .iter()
        .position(|r| r["event"] == "action-finished" && r["phase"] == "exit")
        .unwrap();
    let transition = names.iter().position(|n| *n == "transition").unwrap();
    assert!(exit_finished < transition, "{names:?}");
}

#[test]
fn var_precedence_is_defaults_then_vars_json_then_var_flags_later_winning() {
    let p = Spur::new();
    let yaml = r#"
name: prec
initialState: a
terminalStates: [b]
vars: {x: default, y: default, z: default}
states:
  - id: a
    onEnter: [{kind: shell, options: {command: 'echo "$x $y $z" > vars.txt'}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#;
    p.pipeline(yaml)
        .args([
            "--vars",
            r#"{"y":"json","z":"json"}"#,
            "--var",
            "z=flag1",
            "--var",
            "z=flag2",
        ])
        .json()
        .run()
        .success();
    assert_eq!(p.read("vars.txt"), "default json flag2\n");
}

#[test]
fn an_undefined_template_name_is_rejected_before_the_run_starts() {
    let p = Spur::new();
    p.pipeline(
        r#"
name: undefined
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "echo ${vars.nope} > out.txt"}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    )
    .json()
    .run()
    .code(2)
    .stderr_contains("nope");
    assert!(!p.join("out.txt").exists());
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn a_wbs_that_is_not_a_safe_path_segment_is_a_usage_error_before_anything_runs() {
    let p = Spur::new();
    p.fixture("examples/run/gate.yaml", "p.yaml");
    for bad in ["../escape", "a/b", "-x", ""] {
        if bad.is_empty() {
            continue;
        }
        let run = p.args(["run", "p.yaml"]).var("wbs", bad).json().run();
        let stderr = run.stderr();
        assert_eq!(run.exit_code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("spur::usage::invalid-wbs"), "{stderr}");
    }
    assert!(!p.join(".spur/runs").exists());
    assert!(!p.join("entered-done.txt").exists());
}

#[test]
fn a_run_without_a_wbs_ends_completed() {
    let p = Spur::new();
    let out = p.pipeline("name: plain\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n").json().run().success().stdout_json();
    assert_eq!(out["outcome"], "completed");
    assert_eq!(out["terminalReason"], "done");
    assert_eq!(out["doneGate"], Value::Null);
}

#[test]
fn reaching_a_failure_state_fails_with_the_declared_terminal_reason_or_failed_check() {
    let p = Spur::new();
    let yaml = r#"
name: failing
initialState: a
terminalStates: [bad, timeout]
failureStates: [bad, timeout]
vars: {which: bad}
states: [{id: a}, {id: bad}, {id: timeout}]
transitions:
  - {from: a, to: timeout, terminalReason: failed-timeout, guard: {kind: shell, options: {command: 'test "$which" = timeout'}}}
  - {from: a, to: bad}
"#;
    let run = p.pipeline(yaml).json().run();
    let code = run.exit_code().unwrap_or(-1);
    let out = run.stdout_json();
    assert_eq!(
        (code, out["reason"].as_str(), out["terminalReason"].as_str()),
        (1, Some("failure-state"), Some("failed-check"))
    );
    let out = p
        .pipeline(yaml)
        .var("which", "timeout")
        .json()
        .run()
        .stdout_json();
    assert_eq!(out["terminalReason"], "failed-timeout");
}

#[test]
fn json_outcome_has_exactly_the_documented_fields() {
    let run = Spur::new()
        .pipeline("name: plain\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n")
        .json()
        .run();
    let stdout = run.stdout();
    let out = run.stdout_json();
    let run_id = out["runId"].as_str().unwrap();
    assert_eq!(run_id.len(), 23);
    insta::assert_snapshot!(stdout.replace(run_id, "[RUN-ID]"), @r#"
    {
      "runId": "[RUN-ID]",
      "pipeline": "plain",
      "outcome": "completed",
      "state": "b",
      "terminalReason": "done",
      "reason": "terminal-state",
      "iterations": 1,
      "forced": false,
      "doneGate": null
    }
    "#);
}

#[test]
fn human_output_shows_a_line_per_state_action_and_transition() {
    let run = Spur::new()
        .pipeline(
            r#"
name: human
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{kind: note, options: {message: "hello ${workflow} at ${state}"}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#,
        )
        .run()
        .success();
    let run_id = run
        .stdout()
        .split(':')
        .next()
        .unwrap_or_default()
        .trim_start_matches("run ")
        .to_owned();
    let stderr = run
        .stderr()
        .replace(&run_id, "[RUN]")
        .lines()
        .map(|l| match l.rfind(" (") {
            Some(i) if l.ends_with("s)") => format!("{} ([T])", &l[..i]),
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(stderr, @r"
    spur: running human (run [RUN])
    ● a (iteration 0)
      ✓ note: hello human at a ([T])
      → a → b
    ● b (iteration 1)
    ");
    run.stdout_contains(": completed at b — done (terminal-state, 1 transition)");
}
