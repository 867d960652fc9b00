//! The done gate at the success terminal of a run with a `wbs`, and `--force-done`.

use serde_json::Value;

use crate::common::Spur;

/// `examples/run/gate.yaml` (task 0592), with `verdict` as the task's verdict artifact.
fn gate_project(verdict: Option<&str>) -> Spur {
    let p = Spur::new().fixture("examples/run/gate.yaml", "gate.yaml");
    if let Some(v) = verdict {
        crate::common::fixture_verdict_through_spur(&p, "0592", v);
    }
    p
}

fn assert_denied(p: &Spur, out: &Value, verdict: &str, message_part: &str) {
    assert_eq!(out["outcome"], "failed");
    assert_eq!(out["state"], "work", "the success state is not entered");
    assert_eq!(out["reason"], "done-gate-denied");
    assert_eq!(out["terminalReason"], "failed-check");
    assert_eq!(out["doneGate"]["decision"], "deny");
    assert_eq!(out["doneGate"]["verdict"], verdict);
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(message.contains(message_part), "{message}");
    assert!(message.contains("--force-done"), "{message}");
    assert!(
        !p.join("entered-done.txt").exists(),
        "done's onEnter must not run"
    );
    let task = p
        .args(["task", "show", "0592"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_ne!(task["status"], "done", "{task}");
}

#[test]
fn done_gate_denies_without_a_verdict_artifact() {
    let p = gate_project(None);
    let out = p
        .args(["run", "gate.yaml"])
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_denied(&p, &out, "UNKNOWN", "missing verify verdict artifact");
}

#[test]
fn done_gate_denies_a_partial_verdict() {
    let p = gate_project(Some("examples/verdicts/partial.json"));
    let out = p
        .args(["run", "gate.yaml"])
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_denied(&p, &out, "PARTIAL", "PARTIAL");
}

#[test]
fn done_gate_denies_a_stored_pass_that_recomputes_to_fail() {
    let p = gate_project(Some("examples/verdicts/self-inconsistent-pass.json"));
    let out = p
        .args(["run", "gate.yaml"])
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_denied(&p, &out, "FAIL", "self-inconsistent");
}

#[test]
fn done_gate_allows_a_pass_and_the_task_becomes_done() {
    let p = gate_project(Some("examples/verdicts/pass.json"));
    let out = p
        .args(["run", "gate.yaml"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["state"], "done");
    assert_eq!(out["forced"], false);
    assert_eq!(out["doneGate"]["decision"], "allow");
    assert_eq!(out["doneGate"]["verdict"], "PASS");
    assert_eq!(p.read("entered-done.txt"), "entered\n");
    let task = p.args(["task", "show", "0592"]).json().run().stdout_json();
    assert_eq!(task["status"], "done", "{task}");
}

#[test]
fn force_done_needs_a_reason() {
    let p = gate_project(None);
    p.args(["run", "gate.yaml", "--force-done"]).run().code(2);
    p.args(["run", "gate.yaml", "--force-done", "--reason", "  "])
        .run()
        .code(2)
        .stderr_contains("spur::usage::blank-force-reason");
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn force_done_with_a_reason_is_allowed_and_audited() {
    let p = gate_project(Some("examples/verdicts/partial.json"));
    let out = p
        .args([
            "run",
            "gate.yaml",
            "--force-done",
            "--reason",
            "verified by hand",
        ])
        .json()
        .run()
        .success();
    // The progress line says the gate was forced.
    assert!(
        out.stderr()
            .contains("done gate: allow (verdict PARTIAL, forced by --force-done)"),
        "{}",
        out.stderr()
    );
    let out = out.stdout_json();
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["forced"], true);
    let audit = p.read(".spur/audit.jsonl");
    assert!(audit.contains("verified by hand"), "{audit}");
    assert!(audit.contains(out["runId"].as_str().unwrap()), "{audit}");
    p.args(["audit", "verify"]).run().success();
}

#[test]
fn a_failure_terminal_is_not_gated() {
    let p = Spur::new();
    let out = p.pipeline("name: f\ninitialState: a\nterminalStates: [x]\nfailureStates: [x]\nvars: {wbs: \"7\"}\nstates: [{id: a}, {id: x}]\ntransitions: [{from: a, to: x}]\n").json().run().code(1).stdout_json();
    assert_eq!(out["state"], "x");
    assert_eq!(out["doneGate"], Value::Null);
}
