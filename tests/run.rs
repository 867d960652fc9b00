//! `spur run` / `spur continue` / `spur runs` / `spur trace` through the binary: the
//! semantics of DESIGN §2, every guard and action kind, the done gate, exit codes, --json.

use crate::common::{repo_path, Project};
use serde_json::Value;

/// Run spur with `--json`; (exit code, parsed stdout, stderr).
fn run_json(project: &Project, args: &[&str]) -> (i32, Value, String) {
    let output = project.spur().args(args).arg("--json").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (output.status.code().unwrap_or(-1), value, stderr)
}

fn run_pipeline(project: &Project, yaml: &str, extra: &[&str]) -> (i32, Value, String) {
    project.file("p.yaml", yaml);
    let mut args = vec!["run", "p.yaml"];
    args.extend_from_slice(extra);
    run_json(project, &args)
}

fn copy_example(project: &Project, example: &str, to: &str) {
    project.file(to, std::fs::read(repo_path(example)).unwrap());
}

/// The journal events of the newest run.
fn trace(project: &Project) -> Vec<Value> {
    let (_, runs, _) = run_json(project, &["runs"]);
    let id = runs[0]["runId"].as_str().unwrap().to_owned();
    let (code, records, _) = run_json(project, &["trace", &id]);
    assert_eq!(code, 0);
    records.as_array().unwrap().clone()
}

fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

// ---- semantics (DESIGN §2) ------------------------------------------------------------------

#[test]
fn first_passing_guard_in_declaration_order_wins() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
        r#"
name: order
initialState: a
states: [{id: a}, {id: skipped}, {id: first}, {id: later}]
transitions:
  - {from: a, to: skipped, guard: {kind: never}}
  - {from: a, to: first, guard: {kind: shell, options: {command: "true"}}}
  - {from: a, to: later, guard: {kind: always}}
"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(out["state"], "first");
    // later's guard was never evaluated: the first pass stops the search.
    let guards = events(&trace(&p), "guard-evaluated")
        .iter()
        .map(|g| g["to"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(guards, ["skipped", "first"]);
}

#[test]
fn no_passing_transition_fails_the_run_with_failed_guard() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
        r#"
name: stuck
initialState: a
terminalStates: [b]
states: [{id: a}, {id: b}]
transitions:
  - {from: a, to: b, guard: {kind: shell, options: {command: "false"}}}
"#,
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["outcome"], "failed");
    assert_eq!(out["state"], "a");
    assert_eq!(out["reason"], "no-passing-transition");
    assert_eq!(out["terminalReason"], "failed-guard");
}

#[test]
fn exceeding_the_iteration_bound_fails_with_retry_exhausted() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["reason"], "iteration-bound-exceeded");
    assert_eq!(out["terminalReason"], "retry-exhausted");
    assert_eq!(out["iterations"], 5);
    assert_eq!(events(&trace(&p), "transition").len(), 5);
}

#[test]
fn a_failing_action_under_fail_ends_the_run_at_its_state_without_routing() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["state"], "a");
    assert_eq!(out["reason"], "action-failed");
    assert_eq!(out["terminalReason"], "failed-check");
    assert_eq!(p.read("trail.txt"), "one\n");
    assert!(events(&trace(&p), "guard-evaluated").is_empty());
}

#[test]
fn on_error_continue_records_the_failure_and_goes_on() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 0);
    // The last action failed, so action-ok did not pass.
    assert_eq!(out["state"], "notok");
    assert_eq!(p.read("trail.txt"), "after\n");
    let finished = events(&trace(&p), "action-finished")
        .iter()
        .map(|a| a["ok"].as_bool().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(finished, [false, true, false]);
}

#[test]
fn action_on_error_overrides_the_pipeline_default() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["reason"], "action-failed");
}

#[test]
fn vars_set_by_actions_are_merged_after_the_whole_on_enter_sequence() {
    let p = Project::new();
    p.file("value.txt", "new\n");
    let (code, out, _) = run_pipeline(
        &p,
        r#"
name: merge
initialState: a
terminalStates: [seen-new, seen-old]
vars:
  v: old
states:
  - id: a
    onEnter:
      - {kind: file.read.into-var, options: {path: value.txt, var: v}}
      - {kind: shell, options: {command: "echo ${vars.v} $v > during.txt"}}
  - {id: seen-new}
  - {id: seen-old}
transitions:
  - {from: a, to: seen-new, guard: {kind: shell, options: {command: 'test "$v" = new'}}}
  - {from: a, to: seen-old}
"#,
        &[],
    );
    assert_eq!(code, 0);
    // Inside the sequence the old value is still in effect; the guard sees the new one.
    assert_eq!(p.read("during.txt"), "old old\n");
    assert_eq!(out["state"], "seen-new");
}

#[test]
fn on_exit_runs_before_the_transition_is_committed() {
    let p = Project::new();
    let (code, _, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("trail.txt"), "enter-a\nexit-a\nenter-b\n");
    let records = trace(&p);
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
    let p = Project::new();
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
    let (code, _, _) = run_pipeline(
        &p,
        yaml,
        &[
            "--vars",
            r#"{"y":"json","z":"json"}"#,
            "--var",
            "z=flag1",
            "--var",
            "z=flag2",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("vars.txt"), "default json flag2\n");
}

#[test]
fn an_undefined_template_name_is_rejected_before_the_run_starts() {
    let p = Project::new();
    let (code, _, stderr) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(!p.join("out.txt").exists());
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn a_wbs_that_is_not_a_safe_path_segment_is_a_usage_error_before_anything_runs() {
    let p = Project::new();
    copy_example(&p, "examples/run/gate.yaml", "p.yaml");
    for bad in ["../escape", "a/b", "-x", ""] {
        if bad.is_empty() {
            continue;
        }
        let (code, _, stderr) = run_json(&p, &["run", "p.yaml", "--var", &format!("wbs={bad}")]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains("spur::usage::invalid_wbs"), "{stderr}");
    }
    assert!(!p.join(".spur/runs").exists());
    assert!(!p.join("entered-done.txt").exists());
}

#[test]
fn a_run_without_a_wbs_ends_completed() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
        "name: plain\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(out["outcome"], "completed");
    assert_eq!(out["terminalReason"], "done");
    assert_eq!(out["doneGate"], Value::Null);
}

#[test]
fn reaching_a_failure_state_fails_with_the_declared_terminal_reason_or_failed_check() {
    let p = Project::new();
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
    let (code, out, _) = run_pipeline(&p, yaml, &[]);
    assert_eq!(
        (code, out["reason"].as_str(), out["terminalReason"].as_str()),
        (1, Some("failure-state"), Some("failed-check"))
    );
    let (_, out, _) = run_pipeline(&p, yaml, &["--var", "which=timeout"]);
    assert_eq!(out["terminalReason"], "failed-timeout");
}

#[test]
fn json_outcome_has_exactly_the_documented_fields() {
    let p = Project::new();
    p.file(
        "p.yaml",
        "name: plain\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
    );
    let output = p.spur().args(["run", "p.yaml", "--json"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let out: Value = serde_json::from_str(&stdout).unwrap();
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
    let p = Project::new();
    p.file(
        "p.yaml",
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
    );
    let output = p.spur().args(["run", "p.yaml"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr
        .lines()
        .map(|l| match l.rfind(" (") {
            Some(i) if l.ends_with("s)") => format!("{} ([T])", &l[..i]),
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(stderr, @r"
    spur: running human
    ● a (iteration 0)
      ✓ note: hello human at a ([T])
      → a → b
    ● b (iteration 1)
    ");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(": completed at b — done (terminal-state, 1 transition)"),
        "{stdout}"
    );
}

// ---- pause, hitl and continue ---------------------------------------------------------------

fn paused_approve_run(p: &Project) -> String {
    copy_example(p, "examples/run/approve.yaml", "approve.yaml");
    let (code, out, stderr) = run_json(p, &["run", "approve.yaml"]);
    assert_eq!(code, 3, "{stderr}");
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
        let p = Project::new();
        let run_id = paused_approve_run(&p);
        let (c, out, stderr) = run_json(&p, &["continue", &run_id, "--answer", answer]);
        assert_eq!(c, code, "{answer}: {stderr}");
        assert_eq!(out["state"], state, "{answer}");
        assert_eq!(out["outcome"], outcome, "{answer}");
        assert_eq!(out["terminalReason"], reason, "{answer}");
        assert_eq!(out["runId"], run_id.as_str());
    }
}

#[test]
fn continue_without_an_answer_or_with_a_wrong_one_is_a_usage_error() {
    let p = Project::new();
    let run_id = paused_approve_run(&p);
    let (code, _, stderr) = run_json(&p, &["continue", &run_id]);
    assert_eq!(code, 2);
    assert!(stderr.contains("spur::run::answer_required"), "{stderr}");
    let (code, _, stderr) = run_json(&p, &["continue", &run_id, "--answer", "maybe"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("spur::run::answer_invalid"), "{stderr}");
    // Still resumable afterwards.
    let (code, _, _) = run_json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, 0);
}

#[test]
fn a_pause_state_without_hitl_stops_after_on_enter_and_resumes_at_transition_selection() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 3);
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let (code, out, _) = run_json(&p, &["continue", &run_id]);
    assert_eq!(code, 0);
    assert_eq!(out["state"], "b");
    // onEnter did not run again on resume.
    assert_eq!(p.read("trail.txt"), "entered\n");
    let (code, _, stderr) = run_json(&p, &["continue", &run_id]);
    assert_eq!(code, 4, "a finished run cannot be continued: {stderr}");
    assert!(stderr.contains("spur::run::finished"), "{stderr}");
}

#[test]
fn hitl_select_stores_the_choice_in_its_var() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
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
        &[],
    );
    assert_eq!(code, 3);
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let (code, _, stderr) = run_json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, 2, "yes is not a choice here: {stderr}");
    let (code, out, _) = run_json(&p, &["continue", &run_id, "--answer", "retry"]);
    assert_eq!(code, 0);
    assert_eq!(out["state"], "retried");
}

#[test]
fn a_pipeline_changed_since_the_run_started_is_refused_on_resume() {
    let p = Project::new();
    let run_id = paused_approve_run(&p);
    let text = p.read("approve.yaml");
    p.file("approve.yaml", format!("{text}\n# edited\n"));
    let (code, _, stderr) = run_json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, 4);
    assert!(stderr.contains("spur::run::pipeline_changed"), "{stderr}");
    let (code, _, _) = run_json(
        &p,
        &[
            "continue",
            &run_id,
            "--answer",
            "yes",
            "--allow-changed-pipeline",
        ],
    );
    assert_eq!(code, 0);
}

#[test]
fn workflow_run_and_continue_are_aliases() {
    let p = Project::new();
    copy_example(&p, "examples/run/approve.yaml", "approve.yaml");
    let (code, out, _) = run_json(&p, &["workflow", "run", "approve.yaml"]);
    assert_eq!(code, 3);
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let (code, out, _) = run_json(&p, &["workflow", "continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, 0);
    assert_eq!(out["state"], "done");
}

// ---- the done gate --------------------------------------------------------------------------

fn gate_project(verdict: Option<&str>) -> Project {
    let p = Project::new();
    copy_example(&p, "examples/run/gate.yaml", "gate.yaml");
    if let Some(v) = verdict {
        copy_example(&p, v, ".spur/run/0592-verdict.json");
    }
    p
}

fn assert_denied(p: &Project, out: &Value, verdict: &str, message_part: &str) {
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
    let (code, task, _) = run_json(p, &["task", "show", "0592"]);
    assert_eq!(code, 0);
    assert_ne!(task["status"], "done", "{task}");
}

#[test]
fn done_gate_denies_without_a_verdict_artifact() {
    let p = gate_project(None);
    let (code, out, _) = run_json(&p, &["run", "gate.yaml"]);
    assert_eq!(code, 1);
    assert_denied(&p, &out, "UNKNOWN", "missing verify verdict artifact");
}

#[test]
fn done_gate_denies_a_partial_verdict() {
    let p = gate_project(Some("examples/verdicts/partial.json"));
    let (code, out, _) = run_json(&p, &["run", "gate.yaml"]);
    assert_eq!(code, 1);
    assert_denied(&p, &out, "PARTIAL", "PARTIAL");
}

#[test]
fn done_gate_denies_a_stored_pass_that_recomputes_to_fail() {
    let p = gate_project(Some("examples/verdicts/self-inconsistent-pass.json"));
    let (code, out, _) = run_json(&p, &["run", "gate.yaml"]);
    assert_eq!(code, 1);
    assert_denied(&p, &out, "FAIL", "self-inconsistent");
}

#[test]
fn done_gate_allows_a_pass_and_the_task_becomes_done() {
    let p = gate_project(Some("examples/verdicts/pass.json"));
    let (code, out, stderr) = run_json(&p, &["run", "gate.yaml"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["state"], "done");
    assert_eq!(out["forced"], false);
    assert_eq!(out["doneGate"]["decision"], "allow");
    assert_eq!(out["doneGate"]["verdict"], "PASS");
    assert_eq!(p.read("entered-done.txt"), "entered\n");
    let (_, task, _) = run_json(&p, &["task", "show", "0592"]);
    assert_eq!(task["status"], "done", "{task}");
}

#[test]
fn force_done_needs_a_reason() {
    let p = gate_project(None);
    let output = p
        .spur()
        .args(["run", "gate.yaml", "--force-done"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let output = p
        .spur()
        .args(["run", "gate.yaml", "--force-done", "--reason", "  "])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("spur::usage::blank_force_reason"),
        "{stderr}"
    );
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn force_done_with_a_reason_is_allowed_and_audited() {
    let p = gate_project(Some("examples/verdicts/partial.json"));
    let (code, out, stderr) = run_json(
        &p,
        &[
            "run",
            "gate.yaml",
            "--force-done",
            "--reason",
            "verified by hand",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["forced"], true);
    let audit = p.read(".spur/audit.jsonl");
    assert!(audit.contains("verified by hand"), "{audit}");
    assert!(audit.contains(out["runId"].as_str().unwrap()), "{audit}");
    let output = p.spur().args(["audit", "verify"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn a_failure_terminal_is_not_gated() {
    let p = Project::new();
    let (code, out, _) = run_pipeline(
        &p,
        "name: f\ninitialState: a\nterminalStates: [x]\nfailureStates: [x]\nvars: {wbs: \"7\"}\nstates: [{id: a}, {id: x}]\ntransitions: [{from: a, to: x}]\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["state"], "x");
    assert_eq!(out["doneGate"], Value::Null);
}

// ---- locks ----------------------------------------------------------------------------------

#[test]
fn a_second_run_of_the_same_task_is_refused_with_exit_4() {
    let p = Project::new();
    p.file(
        "inner.yaml",
        "name: inner\ninitialState: a\nvars: {wbs: \"42\"}\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
    );
    // The outer run holds the lock of task 42 while its action starts a second run of 42.
    let (code, out, stderr) = run_pipeline(
        &p,
        r#"
name: outer
initialState: a
terminalStates: [b]
vars: {wbs: "42"}
states:
  - id: a
    onEnter:
      - kind: shell
        options: {command: '"$SPUR_BIN" run inner.yaml --state-dir "$SPUR_STATE_DIR" 2> inner.err; echo $? > inner.code'}
  - {id: b}
transitions: [{from: a, to: b, guard: {kind: always}}]
"#,
        &["--force-done", "--reason", "test"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["state"], "b");
    assert_eq!(p.read("inner.code"), "4\n");
    assert!(
        p.read("inner.err").contains("spur::run::locked"),
        "{}",
        p.read("inner.err")
    );
    // Released when the run ends.
    let (code, _, stderr) = run_json(
        &p,
        &["run", "inner.yaml", "--force-done", "--reason", "test"],
    );
    assert_eq!(code, 0, "{stderr}");
}

// ---- guards ---------------------------------------------------------------------------------

/// A pipeline whose only choice is `guard` → pass, else → other; returns the chosen state.
fn choose(p: &Project, guard: &str, extra: &[&str]) -> String {
    let yaml = format!(
        r#"
name: guard
initialState: a
terminalStates: [pass, other]
vars: {{x: "1", path: marker.txt}}
states:
  - id: a
    onEnter: [{{kind: shell, options: {{command: "true"}}}}]
  - {{id: pass}}
  - {{id: other}}
transitions:
  - {{from: a, to: pass, guard: {guard}}}
  - {{from: a, to: other}}
"#
    );
    let (code, out, stderr) = run_pipeline(p, &yaml, extra);
    assert_eq!(code, 0, "{guard}: {stderr}");
    out["state"].as_str().unwrap().to_owned()
}

#[test]
fn guard_kinds_always_never_action_ok_shell() {
    let p = Project::new();
    assert_eq!(choose(&p, "{kind: always}", &[]), "pass");
    assert_eq!(choose(&p, "{kind: never}", &[]), "other");
    assert_eq!(choose(&p, "{kind: action-ok}", &[]), "pass");
    assert_eq!(
        choose(
            &p,
            r#"{kind: shell, options: {command: 'test "$x" = 1'}}"#,
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: shell, options: {command: 'test "$x" = 1'}}"#,
            &["--var", "x=2"]
        ),
        "other"
    );
}

#[test]
fn guard_kind_jq_on_the_run_context_and_on_a_file() {
    let p = Project::new();
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {expr: '$x == "1" and .vars.x == "1" and .state == "a"'}}"#,
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(&p, r#"{kind: jq, options: {expr: '.lastAction.ok'}}"#, &[]),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {expr: '$x == "1"'}}"#,
            &["--var", "x=2"]
        ),
        "other"
    );
    p.file("v.json", r#"{"verdict": "PASS"}"#);
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: v.json, expr: '.verdict == "PASS"'}}"#,
            &[]
        ),
        "pass"
    );
    // Non-boolean output, a missing file and malformed JSON fail closed.
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: v.json, expr: '.verdict'}}"#,
            &[]
        ),
        "other"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: missing.json, expr: 'true'}}"#,
            &[]
        ),
        "other"
    );
    p.file("bad.json", "{nope");
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: bad.json, expr: 'true'}}"#,
            &[]
        ),
        "other"
    );
    let detail = events(&trace(&p), "guard-evaluated")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("not valid JSON"), "{detail}");
}

#[test]
fn guard_kind_file_exists_with_a_templated_path() {
    let p = Project::new();
    assert_eq!(
        choose(
            &p,
            "{kind: file-exists, options: {path: '${vars.path}'}}",
            &[]
        ),
        "other"
    );
    p.file("marker.txt", "");
    assert_eq!(
        choose(
            &p,
            "{kind: file-exists, options: {path: '${vars.path}'}}",
            &[]
        ),
        "pass"
    );
}

#[test]
fn guard_combinators_all_any_not() {
    let p = Project::new();
    assert_eq!(
        choose(
            &p,
            "{kind: all, options: {guards: [{kind: always}, {kind: action-ok}]}}",
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            "{kind: all, options: {guards: [{kind: always}, {kind: never}]}}",
            &[]
        ),
        "other"
    );
    assert_eq!(choose(&p, "{kind: any, options: {guards: [{kind: never}, {kind: shell, options: {command: 'true'}}]}}", &[]), "pass");
    assert_eq!(
        choose(
            &p,
            "{kind: any, options: {guards: [{kind: never}, {kind: never}]}}",
            &[]
        ),
        "other"
    );
    assert_eq!(
        choose(&p, "{kind: not, options: {guards: [{kind: never}]}}", &[]),
        "pass"
    );
    assert_eq!(
        choose(&p, "{kind: not, options: {guards: [{kind: always}]}}", &[]),
        "other"
    );
}

#[test]
fn unknown_guard_kinds_run_a_plugin_from_path_or_fail_closed() {
    let p = Project::new();
    assert_eq!(
        choose(&p, "{kind: approved, options: {who: ops}}", &[]),
        "other"
    );
    let detail = events(&trace(&p), "guard-evaluated")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("spur-guard-approved"), "{detail}");
    p.file(
        "bin/spur-guard-approved",
        "#!/bin/sh\ngrep -q '\"who\":\"ops\"' && exit 0\nexit 1\n",
    );
    make_executable(&p.join("bin/spur-guard-approved"));
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let yaml = r#"
name: plugin
initialState: a
terminalStates: [pass, other]
states: [{id: a}, {id: pass}, {id: other}]
transitions:
  - {from: a, to: pass, guard: {kind: approved, options: {who: ops}}}
  - {from: a, to: other}
"#;
    p.file("p.yaml", yaml);
    let output = p
        .spur()
        .env("PATH", &path)
        .args(["run", "p.yaml", "--json"])
        .output()
        .unwrap();
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["state"], "pass");
}

#[test]
fn every_guard_evaluation_is_journaled_with_result_and_duration() {
    let p = Project::new();
    choose(&p, "{kind: never}", &[]);
    let guards = events(&trace(&p), "guard-evaluated")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(guards.len(), 2);
    assert_eq!(guards[0]["kind"], "never");
    assert_eq!(guards[0]["passed"], false);
    assert_eq!(guards[1]["kind"], "none");
    assert_eq!(guards[1]["passed"], true);
    assert!(guards[0]["durationUs"].is_u64());
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

// ---- actions --------------------------------------------------------------------------------

/// Run a one-state pipeline with `actions` as onEnter; (exit code, outcome, records).
fn with_actions(p: &Project, actions: &str, extra: &[&str]) -> (i32, Value, Vec<Value>) {
    let yaml = format!(
        r#"
name: actions
initialState: a
terminalStates: [b]
vars: {{x: "1", out: "", agent: stub, choice: ""}}
states:
  - id: a
    onEnter:
{actions}
  - {{id: b}}
transitions: [{{from: a, to: b}}]
"#
    );
    let (code, out, _) = run_pipeline(p, &yaml, extra);
    (code, out, trace(p))
}

fn finished(records: &[Value]) -> Vec<Value> {
    events(records, "action-finished")
        .into_iter()
        .cloned()
        .collect()
}

#[test]
fn shell_action_runs_with_vars_in_env_cwd_env_and_a_log_file() {
    let p = Project::new();
    std::fs::create_dir_all(p.join("sub")).unwrap();
    let (code, _, records) = with_actions(
        &p,
        r#"      - {kind: shell, options: {command: 'echo "$x $EXTRA $(basename "$PWD")" > out.txt; echo to-log', cwd: sub, env: {EXTRA: e}}}"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("sub/out.txt"), "1 e sub\n");
    let started = events(&records, "action-started")[0].clone();
    let run_id = records[0]["runId"].as_str().map(str::to_owned);
    let _ = run_id;
    let log = started["log"].as_str().unwrap();
    let (_, runs, _) = run_json(&p, &["runs"]);
    let dir = format!(".spur/runs/{}/{log}", runs[0]["runId"].as_str().unwrap());
    assert_eq!(p.read(&dir), "to-log\n");
}

#[test]
fn shell_action_timeout_fails_with_failed_timeout() {
    let p = Project::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: shell, options: {command: 'sleep 30', timeoutMs: 100}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["terminalReason"], "failed-timeout");
    assert_eq!(finished(&records)[0]["timedOut"], true);
}

#[test]
fn a_timeout_kills_the_whole_process_group_including_grandchildren() {
    let p = Project::new();
    let (code, _, _) = with_actions(
        &p,
        r#"      - {kind: shell, options: {command: 'sh -c "sleep 100 & echo \$! > grandchild.pid; sleep 100"', timeoutMs: 300}}"#,
        &[],
    );
    assert_eq!(code, 1);
    let pid = p.read("grandchild.pid").trim().to_owned();
    // Gone, a zombie waiting for init to reap it, or with its SIGKILL pending: not running.
    assert!(
        !crate::common::process_is_running(&pid),
        "grandchild {pid} still running"
    );
}

#[test]
fn note_and_run_artifact_are_recorded_in_the_run() {
    let p = Project::new();
    p.file("report.json", "{}");
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: note, options: {message: 'hello ${vars.x}'}}\n      - {kind: run.artifact, options: {path: report.json, artifactKind: report}}",
        &[],
    );
    assert_eq!(code, 0);
    let f = finished(&records);
    assert_eq!(f[0]["message"], "hello 1");
    let (_, runs, _) = run_json(&p, &["runs"]);
    let artifacts = p.read(&format!(
        ".spur/runs/{}/artifacts.jsonl",
        runs[0]["runId"].as_str().unwrap()
    ));
    let line: Value = serde_json::from_str(artifacts.trim()).unwrap();
    assert_eq!(line["path"], "report.json");
    assert_eq!(line["kind"], "report");
    assert_eq!(line["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn file_read_into_var_fails_on_a_missing_file() {
    let p = Project::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: file.read.into-var, options: {path: missing.txt, var: out}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["reason"], "action-failed");
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("missing.txt"));
}

fn agent_project(command: &str) -> Project {
    let p = Project::new();
    p.file(
        ".spur/config.yaml",
        format!("verify: {{ ignored: true }}\nagents:\n  stub:\n    command: {command}\n"),
    );
    p
}

#[test]
fn agent_run_passes_input_as_argument_and_env_and_captures_the_answer() {
    // The input arrives as the command's last argument ("$@") and as $SPUR_AGENT_INPUT.
    let p = agent_project(r#"'sh -c ''printf "arg=%s env=%s\n" "$1" "$SPUR_AGENT_INPUT"'' agent'"#);
    let (code, _, _) = with_actions(
        &p,
        r#"      - {kind: agent.run, options: {agent: '${vars.agent}', input: 'do task ${vars.x}; $(echo no)', answerFile: answer.txt, timeoutMs: 5000}}"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(
        p.read("answer.txt"),
        "arg=do task 1; $(echo no) env=do task 1; $(echo no)\n"
    );
}

#[test]
fn agent_run_with_no_mapping_fails_naming_the_agent_and_the_config_key() {
    let p = Project::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: ghost, input: hi}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["terminalReason"], "failed-agent");
    let error = finished(&records)[0]["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("\"ghost\"") && error.contains("agents:") && error.contains("config.yaml"),
        "{error}"
    );
}

#[test]
fn agent_run_expect_file_and_require_diff() {
    let p = agent_project("'true'");
    let (code, out, _) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: stub, expectFile: made.txt}}",
        &[],
    );
    assert_eq!(
        (code, out["terminalReason"].as_str()),
        (1, Some("failed-agent"))
    );
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: stub, requireDiff: true}}",
        &[],
    );
    assert_eq!(code, 1);
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("requireDiff"));

    let p = agent_project("'echo changed > made.txt'");
    let (code, _, _) = with_actions(&p, "      - {kind: agent.run, options: {agent: stub, expectFile: made.txt, requireDiff: true}}", &[]);
    assert_eq!(code, 0);
}

#[test]
fn command_gate_writes_pass_or_fail_and_soft_fail_does_not_fail_the_action() {
    let p = Project::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: sh, args: ['-c', 'exit 0'], resultFile: .spur/run/g1.status}}\n      - {kind: command.gate, options: {executable: sh, args: ['-c', 'exit 1'], resultFile: .spur/run/g2.status, softFail: true}}",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read(".spur/run/g1.status"), "PASS\n");
    assert_eq!(p.read(".spur/run/g2.status"), "FAIL\n");
    let (code, _, _) = with_actions(&p, "      - {kind: command.gate, options: {executable: 'false', resultFile: .spur/run/g3.status}}", &[]);
    assert_eq!(code, 1);
    assert_eq!(p.read(".spur/run/g3.status"), "FAIL\n");
}

#[test]
fn command_gate_args_are_not_run_through_a_shell() {
    let p = Project::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: touch, args: ['$(touch pwned)', '${vars.x}; touch pwned2']}}",
        &[],
    );
    assert_eq!(code, 0);
    assert!(p.join("$(touch pwned)").exists());
    assert!(p.join("1; touch pwned2").exists());
    assert!(!p.join("pwned").exists() && !p.join("pwned2").exists());
}

#[test]
fn command_gate_result_file_must_stay_under_the_run_directory() {
    let p = Project::new();
    std::fs::create_dir_all(p.join(".spur/run")).unwrap();
    std::fs::create_dir_all(p.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(p.join("elsewhere"), p.join(".spur/run/link")).unwrap();
    for bad in [
        "status.txt",
        ".spur/run/../escape",
        ".spur/run/link/x.status",
    ] {
        let (code, _, records) = with_actions(&p, &format!("      - {{kind: command.gate, options: {{executable: 'true', resultFile: '{bad}'}}}}"), &[]);
        assert_eq!(code, 1, "{bad}");
        assert!(
            finished(&records)[0]["error"]
                .as_str()
                .unwrap()
                .contains("resultFile"),
            "{bad}"
        );
    }
    assert!(!p.join("elsewhere/x.status").exists());
}

#[test]
fn command_gate_retries_only_on_matching_output() {
    let p = Project::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: sh, args: ['-c', 'echo try >> tries.txt; echo flaky; exit 1'], retry: {maxAttempts: 3, delayMs: 1, on: [flaky]}, softFail: true}}\n      - {kind: command.gate, options: {executable: sh, args: ['-c', 'echo try >> tries2.txt; echo broken; exit 1'], retry: {maxAttempts: 3, delayMs: 1, on: [flaky]}, softFail: true}}",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("tries.txt").lines().count(), 3);
    assert_eq!(p.read("tries2.txt").lines().count(), 1);
}

#[test]
fn proof_fingerprint_sets_its_var_and_fails_when_expect_differs() {
    let p = Project::new();
    p.file("src.txt", "one");
    p.file("task.md", "# task");
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: proof.fingerprint, options: {var: out, taskFile: task.md}}\n      - {kind: shell, options: {command: 'echo changed > src.txt'}}",
        &[],
    );
    assert_eq!(code, 0);
    let digest = finished(&records)[0]["setVars"]["out"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(digest.starts_with("sha256:"), "{digest}");
    let (code, _, records) = with_actions(
        &p,
        &format!("      - {{kind: proof.fingerprint, options: {{var: out, taskFile: task.md, expect: '{digest}'}}}}"),
        &[],
    );
    assert_eq!(code, 1);
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("changed"));
}

#[test]
fn json_update_rewrites_a_file_with_jq_atomically() {
    let p = Project::new();
    p.file("data.json", r#"{"checks": []}"#);
    let (code, _, _) = with_actions(
        &p,
        r#"      - {kind: json.update, options: {path: data.json, expr: '.checks += [{name: "x", value: $x}]'}}"#,
        &[],
    );
    assert_eq!(code, 0);
    let data: Value = serde_json::from_str(&p.read("data.json")).unwrap();
    assert_eq!(
        data,
        serde_json::json!({"checks": [{"name": "x", "value": "1"}]})
    );
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: json.update, options: {path: data.json, expr: '.checks | error(\"no\")'}}",
        &[],
    );
    assert_eq!(code, 1, "a jq error fails the action");
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("json.update"));
    let data: Value = serde_json::from_str(&p.read("data.json")).unwrap();
    assert_eq!(
        data["checks"][0]["name"], "x",
        "the file is unchanged after a failed update"
    );
}

#[test]
fn plugin_actions_get_options_on_stdin_and_set_vars() {
    let p = Project::new();
    p.file(
        "bin/spur-action-stamp",
        "#!/bin/sh\nread input\necho \"$input\" > plugin-input.json\necho '{\"ok\": true, \"setVars\": {\"out\": \"stamped\"}}'\n",
    );
    make_executable(&p.join("bin/spur-action-stamp"));
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    p.file(
        "p.yaml",
        r#"
name: plugin
initialState: a
terminalStates: [pass, other]
vars: {out: "", x: "1"}
states:
  - id: a
    onEnter: [{kind: stamp, options: {label: '${vars.x}'}}]
  - {id: pass}
  - {id: other}
transitions:
  - {from: a, to: pass, guard: {kind: shell, options: {command: 'test "$out" = stamped'}}}
  - {from: a, to: other}
"#,
    );
    let output = p
        .spur()
        .env("PATH", &path)
        .args(["run", "p.yaml", "--json"])
        .output()
        .unwrap();
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        out["state"],
        "pass",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let input: Value = serde_json::from_str(&p.read("plugin-input.json")).unwrap();
    assert_eq!(input["label"], "1");
}

#[test]
fn an_unknown_action_kind_without_a_plugin_fails_clearly() {
    let p = Project::new();
    let (code, _, records) = with_actions(&p, "      - {kind: teleport, options: {}}", &[]);
    assert_eq!(code, 1);
    let error = finished(&records)[0]["error"].as_str().unwrap().to_owned();
    assert!(error.contains("spur-action-teleport"), "{error}");
}

#[test]
fn shell_steps_get_jq_even_in_embedded_mode() {
    let p = Project::new();
    p.file("v.json", r#"{"verdict":"PASS"}"#);
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: shell, options: {command: 'jq -r .verdict v.json > verdict.txt'}}",
        &["--jq", "embedded"],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("verdict.txt"), "PASS\n");
}

// ---- dry run, runs, trace -------------------------------------------------------------------

#[test]
fn dry_run_runs_nothing_and_names_the_first_branch_point() {
    let p = Project::new();
    p.file(
        "p.yaml",
        r#"
name: dry
initialState: a
terminalStates: [done, failed]
failureStates: [failed]
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "touch ran.txt"}}]
  - id: b
    pause: true
  - id: check
  - {id: done}
  - {id: failed}
transitions:
  - {from: a, to: failed, guard: {kind: never}}
  - {from: a, to: b}
  - {from: b, to: check, guard: {kind: all, options: {guards: [{kind: always}]}}}
  - {from: check, to: done, description: passed, guard: {kind: shell, options: {command: "touch guard-ran.txt"}}}
  - {from: check, to: failed}
"#,
    );
    let output = p
        .spur()
        .args(["run", "p.yaml", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout), @r"
    dry run of dry (no action or guard was run)
      a: shell
      b [pauses]
      check
    branch point at check: decided only by a real run, in this order:
      → done if shell guard passes — passed
      → failed if none guard passes
    ");
    assert!(!p.join("ran.txt").exists() && !p.join("guard-ran.txt").exists());
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn runs_lists_newest_first_and_trace_shows_gap_free_seq() {
    let p = Project::new();
    let yaml =
        "name: r\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n";
    let (_, first, _) = run_pipeline(&p, yaml, &[]);
    let (_, second, _) = run_pipeline(&p, yaml, &["--var", "wbs=0001"]);
    let (code, runs, _) = run_json(&p, &["runs"]);
    assert_eq!(code, 0);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["runId"], second["runId"]);
    assert_eq!(runs[1]["runId"], first["runId"]);
    let keys: Vec<&String> = runs[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["outcome", "pipeline", "runId", "startedAt", "state", "wbs"]
    );
    assert_eq!(runs[1]["outcome"], "completed");
    assert_eq!(runs[0]["wbs"], "0001");
    let records = trace(&p);
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(records[0]["event"], "run-started");
    assert_eq!(records.last().unwrap()["event"], "run-finished");
    let (code, _, stderr) = run_json(&p, &["trace", "20990101T000000Z-000000"]);
    assert_eq!(code, 2, "{stderr}");
}

// ---- the shipped task pipeline and its demo ------------------------------------------------

fn demo_project() -> Project {
    let p = Project::new();
    for file in [
        ".spur/config.yaml",
        "stub-agent.sh",
        "check",
        "docs/tasks/0592_hello.md",
    ] {
        copy_example(&p, &format!("examples/demo/{file}"), file);
    }
    for exe in ["stub-agent.sh", "check"] {
        make_executable(&p.join(exe));
    }
    copy_example(&p, "pipelines/task-pipeline.yaml", "task-pipeline.yaml");
    p
}

#[test]
fn the_task_pipeline_demo_runs_end_to_end_through_the_done_gate() {
    let p = demo_project();
    let (code, out, stderr) = run_json(
        &p,
        &[
            "run",
            "task-pipeline.yaml",
            "--var",
            "wbs=0592",
            "--var",
            "profile=auto",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["outcome"], "done");
    assert_eq!(out["state"], "done");
    assert_eq!(out["doneGate"]["decision"], "allow");
    assert_eq!(out["doneGate"]["verdict"], "PASS");
    assert_eq!(p.read("hello.txt"), "hello, world\n");
    // The test ⇄ fix loop ran once: red, fixed, green.
    let states: Vec<String> = events(&trace(&p), "state-entered")
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
    let (_, task, _) = run_json(&p, &["task", "show", "0592"]);
    assert_eq!(task["status"], "done");
}

#[test]
fn the_task_pipeline_pauses_for_approval_unless_profile_is_auto() {
    let p = demo_project();
    let (code, out, _) = run_json(&p, &["run", "task-pipeline.yaml", "--var", "wbs=0592"]);
    assert_eq!(code, 3);
    assert_eq!(out["state"], "approve");
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let (code, out, stderr) = run_json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["outcome"], "done");
}

#[test]
fn the_task_pipeline_fails_when_the_quality_gate_stays_red() {
    let p = demo_project();
    p.file("check", "#!/bin/sh\nexit 1\n");
    make_executable(&p.join("check"));
    let (code, out, _) = run_json(
        &p,
        &[
            "run",
            "task-pipeline.yaml",
            "--var",
            "wbs=0592",
            "--var",
            "profile=auto",
        ],
    );
    assert_eq!(code, 1);
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
    let (code, out, _) = run_json(
        &p,
        &[
            "run",
            "task-pipeline.yaml",
            "--var",
            "wbs=0592",
            "--var",
            "profile=auto",
        ],
    );
    assert_eq!(code, 1);
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
    let (code, out, _) = run_json(
        &p,
        &[
            "run",
            "task-pipeline.yaml",
            "--var",
            "wbs=0592",
            "--var",
            "profile=auto",
        ],
    );
    assert_eq!(code, 1);
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
            ("gate-lint".to_owned(), "fail".to_owned()),
            ("gate-quality".to_owned(), "pass".to_owned())
        ]
    );
    let (_, task, _) = run_json(&p, &["task", "show", "0592"]);
    assert_ne!(task["status"], "done");
}
