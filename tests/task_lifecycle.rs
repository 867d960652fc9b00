//! The task lifecycle as a pipeline (issue 20, item 3): `spur task update WBS STATUS` of a
//! task with a task file is a request to its long-lived lifecycle instance (`task:<wbs>`
//! of the shipped `task-lifecycle.yaml`, or the project's `.spur/workflows/` copy),
//! journaled, with `spur task check --as` for testing and done and the done gate for the
//! move into done; a run that certifies such a task goes through it too.

use serde_json::Value;

use crate::common::{write_verdict_through_spur, Spur};

const TASK: &str = "docs/tasks/0700_ship-it.md";

/// A project with `.spur/` and task 0700 (a reference-format file that passes `spur task
/// check --as done`) in `status`.
fn project(status: &str) -> Spur {
    let p = Spur::new();
    std::fs::create_dir_all(p.join(".spur")).unwrap();
    p.fixture("tests/fixtures/lifecycle/0700_ship-it.md", TASK);
    let text = p
        .read(TASK)
        .replace("status: wip", &format!("status: {status}"));
    p.file(TASK, text);
    p.file("hello.txt", "hello\n");
    p.fixture("pipelines/task-lifecycle.yaml", "task-lifecycle.yaml");
    p
}

const PASS: &str = r#"{
  "wbs": "0700",
  "verdict": "PASS",
  "requirements": [ { "id": "R1", "status": "MET", "evidence": "hello.txt:1" } ],
  "acceptanceCriteria": [
    { "id": "AC-1", "status": "MET", "evidenceType": "test", "evidence": "hello.txt:1" }
  ],
  "checks": [ { "name": "task-check", "status": "pass", "evidence": "spur task check 0700" } ]
}"#;

fn update(p: &Spur, args: &[&str]) -> (i32, Value) {
    let out = p.args(["task", "update", "0700"]).args(args).json().run();
    let json = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code().unwrap_or(-1), json)
}

/// The instance's journal, as `spur lifecycle show` prints it.
fn instance(p: &Spur) -> Value {
    p.args([
        "lifecycle",
        "show",
        "task-lifecycle.yaml",
        "--entity",
        "task:0700",
    ])
    .json()
    .run()
    .success()
    .stdout_json()
}

fn events(instance: &Value) -> Vec<String> {
    instance["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["event"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[test]
fn update_moves_the_tasks_lifecycle_instance_through_the_shipped_graph_to_done() {
    let p = project("todo");
    assert_eq!(update(&p, &["wip"]).0, 0);
    let (code, json) = update(&p, &["testing"]);
    assert_eq!((code, &json["status"]), (0, &Value::from("testing")));
    let i = instance(&p);
    assert_eq!(i["state"], "testing");
    // Re-seeded from the file's status, then each request journaled with its guard.
    let seen = events(&i);
    for e in [
        "lifecycle-bound",
        "reseeded",
        "transition-requested",
        "guard-evaluated",
        "transition",
    ] {
        assert!(seen.iter().any(|s| s == e), "{e} in {seen:?}");
    }
    write_verdict_through_spur(&p, "0700", PASS);
    let (code, json) = update(&p, &["done"]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        (&json["decision"], &json["reason"], &json["status"]),
        (&"allow".into(), &"pass".into(), &"done".into())
    );
    assert!(p.read(TASK).contains("\nstatus: done\n"));
    let i = instance(&p);
    assert_eq!(i["state"], "done");
    assert!(events(&i).iter().any(|e| e == "done-gate"));
    // done is re-enterable: reopen to wip, as the graph says.
    assert_eq!(update(&p, &["wip"]).0, 0);
    assert_eq!(instance(&p)["state"], "wip");
}

#[test]
fn a_request_to_done_from_a_status_with_no_edge_is_denied_naming_the_edge() {
    let p = project("wip");
    write_verdict_through_spur(&p, "0700", PASS);
    let (code, json) = update(&p, &["done"]);
    assert_eq!(code, 1);
    assert_eq!(json["decision"], "deny");
    assert_eq!(
        json["message"],
        "task 0700 stays wip: task-lifecycle has no transition \"wip\" → \"done\"; \
         from \"wip\" it goes to: testing, blocked, cancelled"
    );
    assert_eq!(json["status"], "wip");
    assert!(p.read(TASK).contains("\nstatus: wip\n"));
    // Journaled: the request and its refusal.
    let i = instance(&p);
    let last = i["records"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "transition-denied");
    assert_eq!(last["reason"], "no-such-transition");
    // A force does not invent an edge either.
    let (code, _) = update(&p, &["done", "--force-done", "--reason", "ship it"]);
    assert_eq!(code, 1);
    assert!(!p.exists(".spur/audit.jsonl"), "no override was recorded");
}

#[test]
fn a_step_that_hand_edits_the_frontmatter_to_done_is_not_believed() {
    let p = project("wip");
    // The file's wip is recorded (file wins) at spur's first touch.
    assert_eq!(update(&p, &["wip"]).0, 0);
    // A run's step writes `status: done` into the task file, then the run ends.
    p.file(
        "edit.yaml",
        "name: edit\ninitialState: edit\nvars: { wbs: '' }\nstates:\n  - id: edit\n    onEnter:\n      \
         - kind: shell\n        options: { command: \"sed -i 's/^status: wip$/status: done/' docs/tasks/0700_ship-it.md\" }\n  \
         - id: edited\ntransitions: [{from: edit, to: edited, terminalReason: cancelled}]\n",
    );
    p.args(["run", "edit.yaml"]).run().success();
    assert!(p.read(TASK).contains("\nstatus: done\n"));
    let show = p
        .args(["task", "show", "0700"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_ne!(show["status"], "done", "{show}");
    // The lifecycle still stands where the ledger says: wip has no edge to done.
    write_verdict_through_spur(&p, "0700", PASS);
    let (code, json) = update(&p, &["done"]);
    assert_eq!(code, 1, "{json}");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("no transition \"wip\" → \"done\""),
        "{json}"
    );
    // Nor does a run certify it: its lifecycle refuses the move into done.
    p.file(
        "finish.yaml",
        "name: finish\ninitialState: start\nvars: { wbs: '' }\nstates:\n  - id: start\n  - id: done\n\
         transitions: [{from: start, to: done}]\n",
    );
    let out = p
        .args(["run", "finish.yaml"])
        .var("wbs", "0700")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "done-gate-denied");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("its lifecycle (task-lifecycle) refused wip → done"),
        "{message}"
    );
    assert_eq!(out["doneGate"]["verdict"], "PASS");
}

#[test]
fn no_lifecycle_skips_the_graph_but_never_the_done_gate() {
    let p = project("wip");
    // No verdict: the gate denies, though the graph was skipped.
    let (code, json) = update(&p, &["done", "--no-lifecycle"]);
    assert_eq!(code, 1);
    assert_eq!(json["decision"], "deny");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("missing verify verdict artifact"),
        "{json}"
    );
    assert!(p.read(TASK).contains("\nstatus: wip\n"));
    // A verdict written outside spur: still the gate's to refuse.
    p.file(".spur/run/0700-verdict.json", PASS);
    let (code, json) = update(&p, &["done", "--no-lifecycle"]);
    assert_eq!(code, 1, "{json}");
    // With spur's PASS, --no-lifecycle reaches done through the gate (wip → done).
    write_verdict_through_spur(&p, "0700", PASS);
    let (code, json) = update(&p, &["done", "--no-lifecycle"]);
    assert_eq!((code, &json["reason"]), (0, &Value::from("pass")), "{json}");
}

#[test]
fn a_run_certifies_a_task_with_a_file_through_its_lifecycle() {
    let p = project("testing");
    write_verdict_through_spur(&p, "0700", PASS);
    p.file(
        "finish.yaml",
        "name: finish\ninitialState: start\nvars: { wbs: '' }\nstates:\n  - id: start\n  - id: done\n\
         transitions: [{from: start, to: done}]\n",
    );
    let out = p
        .args(["run", "finish.yaml"])
        .var("wbs", "0700")
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["doneGate"]["decision"], "allow");
    let i = instance(&p);
    assert_eq!(i["state"], "done");
    // The gate recorded the done on behalf of the run.
    let show = p
        .args(["task", "show", "0700"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(show["status"], "done");
    let last = show["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["runId"], out["runId"], "{show}");
}

#[test]
fn cancelled_is_never_gated_and_is_final() {
    let p = project("wip");
    let (code, json) = update(&p, &["cancelled"]);
    assert_eq!(
        (code, &json["status"]),
        (0, &Value::from("cancelled")),
        "{json}"
    );
    let (code, json) = update(&p, &["wip"]);
    assert_eq!(code, 1);
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("has no transition out of \"cancelled\""),
        "{json}"
    );
}

#[test]
fn a_projects_own_lifecycle_takes_the_place_of_the_shipped_one() {
    let p = project("todo");
    // A lifecycle whose only way to wip is refused by its guard.
    let own = p.read("task-lifecycle.yaml").replacen(
        "    description: Start work\n    guard:\n      kind: always",
        "    description: Start work\n    guard:\n      kind: never",
        1,
    );
    p.file(".spur/workflows/task-lifecycle.yaml", own);
    let (code, json) = update(&p, &["wip"]);
    assert_eq!(code, 1, "{json}");
    assert!(
        json["message"].as_str().unwrap().contains("guard"),
        "{json}"
    );
    // A broken one is a usage error, not a silent fallback.
    p.file(".spur/workflows/task-lifecycle.yaml", "name: [\n");
    let out = p.args(["task", "update", "0700", "wip"]).run().code(2);
    assert!(
        out.stderr().contains("spur::task::lifecycle-pipeline"),
        "{}",
        out.stderr()
    );
}
