//! The task ledger is the one record of a task's status (break 1 of issue 16): a step that
//! writes `.spur/tasks/<wbs>.json` changes a view, not the status. A view that says done
//! with no ledger record is uncertified; a view that disagrees with the ledger is tampered.

use serde_json::Value;

use crate::common::Spur;

/// A run of task T1 whose one step forges the task's view, then goes to the success
/// terminal `done`.
const FORGE_VIEW: &str = r#"name: forge
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars:
  wbs: "T1"
states:
  - id: work
    onEnter:
      - kind: shell
        options:
          command: |
            mkdir -p .spur/tasks
            printf '%s' '{"wbs":"T1","status":"done","history":[]}' > .spur/tasks/T1.json
  - id: done
  - id: failed
transitions:
  - from: work
    to: done
"#;

fn project() -> Spur {
    let project = Spur::new();
    std::fs::create_dir_all(project.join(".spur")).unwrap();
    project
}

fn show(project: &Spur, wbs: &str) -> Value {
    project
        .args(["task", "show", wbs, "--json"])
        .run()
        .success()
        .stdout_json()
}

/// `spur audit verify`: (exit code, stdout + stderr, redacted).
fn audit_verify(project: &Spur) -> (i32, String) {
    let out = project.args(["audit", "verify"]).run();
    let text = out.stdout_redacted() + &out.stderr_redacted();
    (out.exit_code().expect("exited"), text)
}

fn update(project: &Spur, args: &[&str]) -> (i32, Value) {
    let out = project
        .args(["task", "update"])
        .args(args)
        .json()
        .env("USER", "ada")
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

#[test]
fn a_step_that_writes_a_done_view_does_not_certify_the_task() {
    let project = project();
    let out = project
        .pipeline(FORGE_VIEW)
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    assert_eq!(out["doneGate"]["verdict"], "UNKNOWN", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("missing verify verdict artifact"),
        "{message}"
    );

    let task = show(&project, "T1");
    assert_eq!(task["certification"], "uncertified", "{task}");
    assert_eq!(task["status"], "todo", "the ledger's status: {task}");
    assert_eq!(task["view"]["status"], "done", "{task}");
    assert_eq!(task["ledger"]["records"], 0, "{task}");
    let text = project.args(["task", "show", "T1"]).run().success();
    assert!(text.stdout().contains("uncertified"), "{}", text.stdout());

    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("task T1 is uncertified"), "{text}");
    assert!(text.contains("not a failure"), "{text}");

    // Not a noop: the gate runs, and denies without a verdict.
    let (code, json) = update(&project, &["T1", "done"]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["decision"], "deny", "{json}");
    assert_eq!(json["verdict"], "UNKNOWN", "{json}");
}

#[test]
fn a_step_that_rewrites_the_view_of_a_ledgered_task_is_tampering() {
    let project = project();
    let (code, _) = update(&project, &["T1", "in-progress"]);
    assert_eq!(code, 0);
    assert_eq!(show(&project, "T1")["certification"], "none");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");

    let out = project
        .pipeline(FORGE_VIEW)
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");

    let task = show(&project, "T1");
    assert_eq!(task["certification"], "tampered", "{task}");
    assert_eq!(task["status"], "in-progress", "{task}");
    let detail = task["detail"].as_str().unwrap();
    assert!(detail.contains("says done"), "{detail}");
    assert!(detail.contains("in-progress"), "{detail}");

    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("task T1 is tampered"), "{text}");
    assert!(text.contains("says done"), "{text}");
}
