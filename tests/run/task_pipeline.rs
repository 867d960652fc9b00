//! The shipped task pipeline (`pipelines/task-pipeline.yaml`) and its demo project.

use super::make_executable;
use crate::common::{events, Spur};

/// The demo project of `examples/demo` with the shipped task pipeline.
fn demo_project() -> Spur {
    let p = Spur::new();
    for file in [
        ".spur/config.yaml",
        "stub-agent.sh",
        "check",
        "docs/tasks/0592_hello.md",
    ] {
        p.fixture(&format!("examples/demo/{file}"), file);
    }
    for exe in ["stub-agent.sh", "check"] {
        make_executable(&p.join(exe));
    }
    p.fixture("pipelines/task-pipeline.yaml", "task-pipeline.yaml");
    p
}

#[test]
fn the_task_pipeline_demo_runs_end_to_end_through_the_done_gate() {
    let p = demo_project();
    let out = p
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .var("profile", "auto")
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["state"], "done");
    assert_eq!(out["doneGate"]["decision"], "allow");
    // The artifact is spur's (verdict.derive, then verify's merge), so the default
    // `doneGate.externalVerdicts: deny` accepts it: the reason is pass, not external.
    assert_eq!(out["doneGate"]["reason"], "pass");
    assert_eq!(out["doneGate"]["verdict"], "PASS");
    assert_eq!(p.read("hello.txt"), "hello, world\n");
    // The test ⇄ fix loop ran once: red, fixed, green.
    let states: Vec<String> = events(&p.newest_trace(), "state-entered")
        .iter()
        .map(|r| r["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        states,
        [
            "precheck",
            "implement",
            "test",
            "fix",
            "test",
            "review",
            "verify",
            "record",
            "done"
        ]
    );
    // The task moved through its lifecycle with the task verbs: wip (implement), testing
    // (record, after `spur task check --as testing`), done (the done gate).
    let task = p.args(["task", "show", "0592"]).json().run().stdout_json();
    assert_eq!(task["status"], "done");
    assert_eq!(task["certification"], "certified");
    let moves: Vec<(String, String)> = task["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["to"].as_str().unwrap().to_owned(),
                h["via"]["how"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("wip".to_owned(), "update".to_owned()),
            ("testing".to_owned(), "update".to_owned()),
            ("done".to_owned(), "done-gate-pass".to_owned())
        ]
    );
    // The task file: its status a view of the ledger, the implementer's Solution, the
    // verdict in Testing and Review, the proven boxes ticked; the rest as it was.
    let file = p.read("docs/tasks/0592_hello.md");
    let original = std::fs::read_to_string(crate::common::repo_path(
        "examples/demo/docs/tasks/0592_hello.md",
    ))
    .unwrap();
    assert!(file.contains("\nstatus: done\n"), "{file}");
    assert!(file.contains("- [x] R1. `hello.txt`"), "{file}");
    assert!(file.contains("- [x] AC-1: `./check` passes"), "{file}");
    assert!(file.contains("| `hello.txt:1` | the greeting |"), "{file}");
    assert!(
        file.contains("- Verdict: PASS (from verdict artifact)"),
        "{file}"
    );
    assert!(file.contains("<!-- spur:record-review -->"), "{file}");
    let untouched = original
        .replace("status: todo", "status: done")
        .replace("- [ ] R1.", "- [x] R1.")
        .replace("- [ ] AC-1:", "- [x] AC-1:");
    assert!(file.starts_with(&untouched), "{file}");
    let writers: Vec<String> = p
        .read(".spur/ledger/tasks/0592.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == "verdict-written")
        .map(|r| r["writer"].as_str().unwrap().to_owned())
        .collect();
    // verify.run at test (twice: red, then green), verdict.derive, verify.run at verify.
    assert_eq!(writers, ["verify", "verify", "verdict-derive", "verify"]);
}

#[test]
fn the_task_pipeline_pauses_for_approval_unless_profile_is_auto() {
    let p = demo_project();
    let out = p
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .json()
        .run()
        .code(3)
        .stdout_json();
    assert_eq!(out["state"], "approve");
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let out = p
        .args(["continue", &run_id, "--answer", "yes"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done");
}

#[test]
fn the_task_pipeline_fails_when_the_quality_gate_stays_red() {
    let p = demo_project();
    p.file("check", "#!/bin/sh\nexit 1\n");
    make_executable(&p.join("check"));
    let out = p
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .var("profile", "auto")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["state"], "failed");
    assert_eq!(out["terminalReason"], "retry-exhausted");
}

#[test]
fn the_task_pipeline_is_denied_done_when_the_verifier_does_not_say_pass() {
    let p = demo_project();
    let stub = p
        .read("stub-agent.sh")
        .replace("Verdict: PASS", "Verdict: FAIL")
        .replace("| R1 | MET |", "| R1 | UNMET |");
    p.file("stub-agent.sh", stub);
    make_executable(&p.join("stub-agent.sh"));
    let out = p
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .var("profile", "auto")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["state"], "record");
    assert_eq!(out["reason"], "done-gate-denied");
    assert_eq!(out["doneGate"]["verdict"], "FAIL");
}

#[test]
fn the_task_pipeline_is_denied_done_when_a_verify_gate_is_red_despite_a_pass_answer() {
    let p = demo_project();
    // A second gate that the test state does not run, but the verify state does.
    let config = p.read(".spur/config.yaml") + "    lint: { command: \"exit 3\" }\n";
    p.file(".spur/config.yaml", config);
    let out = p
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .var("profile", "auto")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["state"], "record");
    assert_eq!(out["reason"], "done-gate-denied");
    assert_eq!(out["doneGate"]["verdict"], "FAIL");
    let artifact: serde_json::Value =
        serde_json::from_str(&p.read(".spur/run/0592-verdict.json")).unwrap();
    let mut gate_rows: Vec<(String, String)> = artifact["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("gate-"))
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    gate_rows.sort();
    assert_eq!(
        gate_rows,
        [
            // The task file's AC-1 names `./check`: verify runs it too.
            ("gate-evidence-command:AC-1".to_owned(), "pass".to_owned()),
            ("gate-lint".to_owned(), "fail".to_owned()),
            ("gate-quality".to_owned(), "pass".to_owned())
        ]
    );
    let task = p.args(["task", "show", "0592"]).json().run().stdout_json();
    assert_ne!(task["status"], "done");
}
