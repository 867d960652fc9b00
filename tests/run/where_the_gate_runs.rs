//! Where the done gate runs: a run with a wbs ends at a success terminal whose terminal
//! reason is `done` only right after the gate answered in the same process: a fresh run, a
//! resumed one (a done-gate record an earlier process wrote never counts), one resumed with
//! `--allow-changed-pipeline` (the issue's break 3). A cancelled ending is never gated.

use serde_json::Value;

use crate::common::{events, Spur};

/// Task 0592 pauses at `hold`, which goes on to `done`.
const PAUSING: &str = r#"
name: pausing
initialState: work
terminalStates: [done]
vars: {wbs: "0592"}
states:
  - {id: work}
  - {id: hold, pause: true}
  - id: done
    onEnter: [{kind: shell, options: {command: "echo entered > entered-done.txt"}}]
transitions:
  - {from: work, to: hold}
  - {from: hold, to: done}
"#;

fn paused_run(p: &Spur) -> String {
    let out = p
        .args(["run", "pipeline.yaml", "--json"])
        .run()
        .code(3)
        .stdout_json();
    out["runId"].as_str().unwrap().to_owned()
}

fn task_status(p: &Spur) -> Value {
    p.args(["task", "show", "0592"])
        .json()
        .run()
        .success()
        .stdout_json()["status"]
        .clone()
}

/// Break 3: the pipeline of a paused run is edited so that the run's state is now a
/// terminal (`transitions: []`); resuming with `--allow-changed-pipeline` asks the gate.
#[test]
fn a_changed_pipeline_that_makes_the_current_state_terminal_still_asks_the_gate() {
    let p = Spur::new().file("pipeline.yaml", PAUSING);
    let run_id = paused_run(&p);
    let edited = PAUSING.replace(
        "transitions:\n  - {from: work, to: hold}\n  - {from: hold, to: done}\n",
        "transitions: []\n",
    );
    assert_ne!(edited, PAUSING);
    p.file("pipeline.yaml", &edited);

    // No verdict: the gate denies, the run fails.
    let out = p
        .args(["continue", &run_id, "--allow-changed-pipeline", "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    assert_ne!(task_status(&p), "done");
}

#[test]
fn a_changed_pipeline_resumed_with_a_pass_verdict_is_certified_by_the_gate() {
    let p = Spur::new().file("pipeline.yaml", PAUSING);
    let run_id = paused_run(&p);
    p.file(
        "pipeline.yaml",
        PAUSING.replace(
            "transitions:\n  - {from: work, to: hold}\n  - {from: hold, to: done}\n",
            "transitions: []\n",
        ),
    );
    crate::common::fixture_verdict_through_spur(&p, "0592", "examples/verdicts/pass.json");
    let out = p
        .args(["continue", &run_id, "--allow-changed-pipeline", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done", "{out}");
    assert_eq!(out["state"], "hold", "{out}");
    assert_eq!(out["doneGate"]["decision"], "allow", "{out}");
    assert_eq!(out["doneGate"]["verdict"], "PASS", "{out}");
    assert_eq!(task_status(&p), "done");
}

/// A run killed right after its transition into `done` was committed: the gate that
/// allowed it was asked by the killed process, so the resuming one asks again before it
/// finishes.
#[test]
fn a_resumed_run_asks_the_gate_again_in_its_own_process() {
    let project = || {
        let p = Spur::new().file(
            "pipeline.yaml",
            PAUSING.replace("pause: true", "pause: false"),
        );
        crate::common::fixture_verdict_through_spur(&p, "0592", "examples/verdicts/pass.json");
        p
    };
    let reference = project();
    reference.args(["run", "pipeline.yaml"]).run().success();
    let records = reference.newest_trace();
    let transition = records
        .iter()
        .find(|r| r["event"] == "transition" && r["to"] == "done")
        .expect("the reference run entered done");
    let kill_after = transition["seq"].as_u64().unwrap();

    let p = project();
    p.env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", kill_after.to_string())
        .args(["run", "pipeline.yaml"])
        .run()
        .killed();
    // The newest run: the one before it wrote the verdict.
    let run_id = p.runs()[0]["runId"].as_str().unwrap().to_owned();
    let before = events(&p.trace(&run_id), "done-gate").len();
    assert_eq!(before, 1, "the killed process asked the gate once");

    let out = p
        .args(["continue", &run_id, "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done", "{out}");
    let records = p.trace(&run_id);
    let resumed = records
        .iter()
        .position(|r| r["event"] == "resumed")
        .expect("resumed");
    let asked_again = records[resumed..]
        .iter()
        .any(|r| r["event"] == "done-gate" && r["decision"] != "deny");
    assert!(asked_again, "{records:#?}");
    assert!(out["doneGate"].is_object(), "{out}");
}

/// A success terminal reached as a cancellation (named `cancelled`, or declared
/// `terminalReason: cancelled`) is not a certification: the gate is not asked, the task is
/// not done, and the run ends completed.
#[test]
fn a_cancelled_ending_is_never_gated() {
    for (target, declared) in [
        ("cancelled", ""),
        ("canceled", ""),
        ("stopped", ", terminalReason: cancelled"),
    ] {
        let p = Spur::new();
        let out = p
            .pipeline(&format!(
                "name: c\ninitialState: a\nterminalStates: [{target}]\nvars: {{wbs: \"0592\"}}\n\
                 states: [{{id: a}}, {{id: {target}}}]\n\
                 transitions: [{{from: a, to: {target}{declared}}}]\n"
            ))
            .json()
            .run()
            .success()
            .stdout_json();
        assert_eq!(out["state"], target, "{out}");
        assert_eq!(out["terminalReason"], "cancelled", "{target}: {out}");
        assert_eq!(out["outcome"], "completed", "{target}: {out}");
        assert_eq!(out["doneGate"], Value::Null, "{target}: {out}");
        assert!(
            events(&p.newest_trace(), "done-gate").is_empty(),
            "{target}"
        );
        assert_ne!(task_status(&p), "done", "{target}");
    }
}

/// A run whose initial state is itself a success terminal is gated before it enters it.
#[test]
fn a_run_that_starts_in_a_done_terminal_is_gated() {
    let p = Spur::new();
    let out = p
        .pipeline("name: i\ninitialState: done\nvars: {wbs: \"0592\"}\nstates: [{id: done}]\ntransitions: []\n")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    let records = p.newest_trace();
    assert!(events(&records, "state-entered").is_empty(), "{records:#?}");
}

/// A force reason is this process's, like the gate's answer: `run-started` records the
/// reason a run was started with, but the journal is a file a step can write, so a resumed
/// run forces only when `spur continue` itself is given `--force-done --reason`.
#[test]
fn a_resumed_run_forces_only_with_its_own_force_reason() {
    let p = Spur::new().file("pipeline.yaml", PAUSING);
    let started = p
        .args([
            "run",
            "pipeline.yaml",
            "--force-done",
            "--reason",
            "by hand",
        ])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = started["runId"].as_str().unwrap().to_owned();
    let out = p
        .args(["continue", &run_id, "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["forced"], false, "{out}");
    assert!(!p.exists(".spur/audit.jsonl"), "nothing was forced");

    let p = Spur::new().file("pipeline.yaml", PAUSING);
    let run_id = paused_run(&p);
    p.args(["continue", &run_id, "--force-done", "--reason", "  "])
        .run()
        .code(2);
    let out = p
        .args([
            "continue",
            &run_id,
            "--force-done",
            "--reason",
            "checked by hand",
        ])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done", "{out}");
    assert_eq!(out["forced"], true, "{out}");
    assert!(p.read(".spur/audit.jsonl").contains("checked by hand"));
    let records = p.trace(&run_id);
    let resumed = events(&records, "resumed");
    assert_eq!(
        resumed.last().unwrap()["forceDoneReason"],
        "checked by hand"
    );
}

#[test]
fn continue_with_force_done_on_a_run_without_a_task_is_a_usage_error() {
    let p = Spur::new().file(
        "pipeline.yaml",
        PAUSING.replace("vars: {wbs: \"0592\"}\n", ""),
    );
    let run_id = paused_run(&p);
    p.args(["continue", &run_id, "--force-done", "--reason", "why"])
        .run()
        .code(2)
        .stderr_contains("spur::usage::force-done-without-task");
    p.args(["continue", &run_id]).run().success();
}
