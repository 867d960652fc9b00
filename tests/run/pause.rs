//! Pause states, human-in-the-loop answers and `spur continue`.

use crate::common::Spur;

/// Start `examples/run/approve.yaml`, which pauses for the operator; the run id.
fn paused_approve_run(p: &Spur) -> String {
    let out = p
        .fixture("examples/run/approve.yaml", "approve.yaml")
        .args(["run", "approve.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    assert_eq!(out["outcome"], "paused");
    assert_eq!(out["state"], "approve");
    assert_eq!(out["terminalReason"], "paused-operator");
    out["runId"].as_str().unwrap().to_owned()
}

#[test]
fn pause_then_continue_routes_on_the_operators_answer() {
    for (answer, state, outcome, code, reason) in [
        ("yes", "done", "completed", 0, "done"),
        ("no", "failed", "failed", 1, "failed-check"),
        ("cancel", "cancelled", "failed", 1, "cancelled"),
    ] {
        let p = Spur::new();
        let run_id = paused_approve_run(&p);
        let run = p
            .args(["continue", &run_id, "--answer", answer])
            .json()
            .run();
        assert_eq!(run.exit_code(), Some(code), "{answer}: {}", run.stderr());
        let out = run.stdout_json();
        assert_eq!(out["state"], state, "{answer}");
        assert_eq!(out["outcome"], outcome, "{answer}");
        assert_eq!(out["terminalReason"], reason, "{answer}");
        assert_eq!(out["runId"], run_id.as_str());
    }
}

#[test]
fn continue_without_an_answer_or_with_a_wrong_one_is_a_usage_error() {
    let p = Spur::new();
    let run_id = paused_approve_run(&p);
    p.args(["continue", &run_id])
        .json()
        .run()
        .code(2)
        .stderr_contains("spur::run::answer-required");
    p.args(["continue", &run_id, "--answer", "maybe"])
        .json()
        .run()
        .code(2)
        .stderr_contains("spur::run::answer-invalid");
    // Still resumable afterwards.
    p.args(["continue", &run_id, "--answer", "yes"])
        .json()
        .run()
        .success();
}

#[test]
fn a_pause_state_without_hitl_stops_after_on_enter_and_resumes_at_transition_selection() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: pausing
initialState: a
terminalStates: [b]
states:
  - id: a
    pause: true
    onEnter: [{kind: shell, options: {command: "echo entered >> trail.txt"}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#,
        )
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let out = p
        .args(["continue", &run_id])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b");
    // onEnter did not run again on resume.
    assert_eq!(p.read("trail.txt"), "entered\n");
    // A finished run cannot be continued.
    p.args(["continue", &run_id])
        .json()
        .run()
        .code(4)
        .stderr_contains("spur::run::finished");
}

#[test]
fn hitl_select_stores_the_choice_in_its_var() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: select
initialState: a
terminalStates: [retried, stopped]
vars: {choice: ""}
states:
  - id: a
    onEnter:
      - {kind: hitl.select, options: {prompt: "Next?", options: [retry, stop], var: choice}}
  - {id: retried}
  - {id: stopped}
transitions:
  - {from: a, to: retried, guard: {kind: shell, options: {command: 'test "$choice" = retry'}}}
  - {from: a, to: stopped}
"#,
        )
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = out["runId"].as_str().unwrap().to_owned();
    // yes is not a choice here.
    p.args(["continue", &run_id, "--answer", "yes"])
        .json()
        .run()
        .code(2);
    let out = p
        .args(["continue", &run_id, "--answer", "retry"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "retried");
}

#[test]
fn a_pipeline_changed_since_the_run_started_is_refused_on_resume() {
    let p = Spur::new();
    let run_id = paused_approve_run(&p);
    let text = p.read("approve.yaml");
    p.file("approve.yaml", format!("{text}\n# edited\n"));
    p.args(["continue", &run_id, "--answer", "yes"])
        .json()
        .run()
        .code(4)
        .stderr_contains("spur::run::pipeline-changed");
    p.args(["continue", &run_id, "--answer", "yes"])
        .arg("--allow-changed-pipeline")
        .json()
        .run()
        .success();
}

#[test]
fn workflow_run_and_continue_are_aliases() {
    let p = Spur::new().fixture("examples/run/approve.yaml", "approve.yaml");
    let out = p
        .args(["workflow", "run", "approve.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let out = p
        .args(["workflow", "continue", &run_id, "--answer", "yes"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "done");
}
