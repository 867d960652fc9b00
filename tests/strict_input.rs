//! Strict input at the done gate's edges: an artifact may not say two things (duplicate
//! keys), a forced override needs a reason a person can read, a run takes only the vars its
//! pipeline declares, and `--force-done` needs a task to force.

use crate::common::Spur;

const ARTIFACT: &str = ".spur/run/T1-verdict.json";

/// An artifact whose first `requirements` and `checks` fail, repeated with clean ones: a
/// reader that keeps the last of each key sees PASS.
const DUPLICATED: &str = r#"{
  "wbs": "T1",
  "verdict": "PASS",
  "requirements": [{"id": "R1", "status": "UNMET", "evidence": "tests/a.rs:1"}],
  "checks": [{"name": "tests", "status": "fail", "severity": "blocker"}],
  "requirements": [{"id": "R1", "status": "MET", "evidence": "tests/a.rs:1"}],
  "checks": [{"name": "tests", "status": "pass", "severity": "blocker"}]
}
"#;

fn project() -> Spur {
    let project = Spur::new();
    std::fs::create_dir_all(project.join(".spur/run")).unwrap();
    project
}

#[test]
fn an_artifact_that_repeats_a_key_is_invalid_and_names_the_key_and_line() {
    let project = project().file(ARTIFACT, DUPLICATED);
    let out = project
        .args(["verdict", "check", ARTIFACT, "--wbs", "T1", "--json"])
        .run()
        .code(1);
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "invalid", "{json}");
    let reason = json["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(r#"duplicate key "requirements" at line 6"#),
        "{reason}"
    );
}

#[test]
fn the_gate_denies_an_artifact_that_repeats_a_key() {
    let project = project().file(ARTIFACT, DUPLICATED);
    let out = project
        .args(["task", "update", "T1", "done", "--json"])
        .run()
        .code(1);
    let json = out.stdout_json();
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["verdict"], "UNKNOWN");
    assert!(
        json["message"]
            .as_str()
            .unwrap_or_default()
            .contains("duplicate key"),
        "{json}"
    );
    assert_eq!(json["status"], "todo");
}

#[test]
fn a_repeated_status_inside_one_row_is_caught_too() {
    let row_dup = r#"{"wbs": "T1", "verdict": "PASS",
      "requirements": [{"id": "R1", "status": "UNMET", "status": "MET", "evidence": "a.rs:1"}]}"#;
    let project = project().file(ARTIFACT, row_dup);
    project
        .args(["task", "update", "T1", "done"])
        .run()
        .code(1)
        .stderr_contains(r#"duplicate key "status" at line 2"#);
}

/// Reasons that a person cannot see: empty of anything printable.
const INVISIBLE_REASONS: &[&str] = &[
    "\u{200b}",
    "\u{feff}",
    " \u{200b}\u{200c}\u{200d}\u{2060} ",
    "\t\n",
    "\u{0007}\u{001b}",
    "\u{00ad}",
    "\u{180e}\u{fe0f}",
    "\u{202e}\u{2066}",
    "\u{3164}",
];

#[test]
fn a_force_reason_needs_a_visible_character() {
    for reason in INVISIBLE_REASONS {
        let project = project();
        let out = project
            .args([
                "task",
                "update",
                "T1",
                "done",
                "--force-done",
                "--reason",
                reason,
            ])
            .run()
            .code(2);
        assert!(
            out.stderr().contains("visible"),
            "reason {reason:?}: {}",
            out.stderr()
        );
        assert!(
            !project.exists(".spur/audit.jsonl"),
            "reason {reason:?} was audited"
        );
    }
}

#[test]
fn a_reason_with_one_visible_character_among_invisible_ones_is_accepted() {
    let project = project();
    project
        .args(["task", "update", "T1", "done", "--force-done", "--reason"])
        .arg("\u{200b}ok\u{200b}")
        .run()
        .success();
    assert!(project.exists(".spur/audit.jsonl"));
}

const TASK_PIPELINE: &str = "\
name: strict
initialState: work
vars: { wbs: \"0000\" }
states:
  - id: work
  - id: done
transitions:
  - { from: work, to: done }
";

#[test]
fn a_var_the_pipeline_does_not_declare_is_a_usage_error_with_did_you_mean() {
    let project = project();
    project
        .pipeline(TASK_PIPELINE)
        .var("wsb", "0045")
        .run()
        .code(2)
        .stderr_contains("wsb")
        .stderr_contains("wbs");
    assert!(!project.exists(".spur/runs"), "a run was started");
}

#[test]
fn an_undeclared_name_in_vars_json_is_a_usage_error() {
    let project = project();
    project
        .pipeline(TASK_PIPELINE)
        .args(["--vars", r#"{"wbs": "T1", "profle": "auto"}"#])
        .run()
        .code(2)
        .stderr_contains("profle");
}

#[test]
fn force_done_on_a_run_without_a_task_is_a_usage_error() {
    let no_task = "\
name: no-task
initialState: work
states:
  - id: work
  - id: done
transitions:
  - { from: work, to: done }
";
    let project = project();
    project
        .pipeline(no_task)
        .args(["--force-done", "--reason", "because"])
        .run()
        .code(2)
        .stderr_contains("wbs");
    assert!(!project.exists(".spur/audit.jsonl"));
    assert!(!project.exists(".spur/runs"), "a run was started");
}

/// A run whose step certifies its own task with a nested `spur task update $wbs done`, as
/// the reference pipelines do from their record steps. The run's state directory is not
/// the project's `.spur/`, so the nested call must find it through the run's environment.
const NESTED: &str = r#"
name: nested
initialState: record
vars: { wbs: "0000" }
states:
  - id: record
    onEnter:
      - kind: shell
        onError: continue
        options:
          command: '"$SPUR_BIN" task update "$wbs" done --json > elsewhere/nested.json 2> elsewhere/nested.err; echo $? > elsewhere/nested.code'
  - id: done
transitions:
  - { from: record, to: done }
"#;

#[test]
fn a_nested_task_update_done_from_a_step_certifies_through_the_gate() {
    let project = project().file("elsewhere/keep", "");
    // The pipeline file first, and the step's output in the state dir: verify binds the
    // task to the tree it ran at.
    let nested = project.pipeline(NESTED);
    crate::common::fixture_verdict_through_spur_in(
        &project,
        "elsewhere",
        "0592",
        "examples/verdicts/pass.json",
    );
    let out = nested
        .var("wbs", "0592")
        .args(["--state-dir", "elsewhere"])
        .json()
        .run()
        .success();
    assert_eq!(out.stdout_json()["outcome"], "done");
    assert_eq!(
        project.read("elsewhere/nested.code").trim(),
        "0",
        "{}",
        project.read("elsewhere/nested.err")
    );
    let nested: serde_json::Value =
        serde_json::from_str(&project.read("elsewhere/nested.json")).unwrap();
    assert_eq!(nested["decision"], "allow", "{nested}");
    assert_eq!(nested["reason"], "pass");
    // The run's own gate found the task already done: certified once, by the nested call.
    assert_eq!(out.stdout_json()["doneGate"]["decision"], "noop");
    let show = project
        .args(["task", "show", "0592", "--json", "--state-dir", "elsewhere"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(show["status"], "done");
    assert!(
        !project.exists(".spur/tasks"),
        "the nested call wrote the wrong state dir"
    );
}

#[test]
fn a_nested_task_update_done_without_a_verdict_is_denied_and_so_is_the_run() {
    let project = project().file("elsewhere/keep", "");
    let out = project
        .pipeline(NESTED)
        .var("wbs", "0592")
        .args(["--state-dir", "elsewhere"])
        .json()
        .run()
        .code(1);
    assert_eq!(project.read("elsewhere/nested.code").trim(), "1");
    let nested: serde_json::Value =
        serde_json::from_str(&project.read("elsewhere/nested.json")).unwrap();
    assert_eq!(nested["decision"], "deny");
    assert_eq!(out.stdout_json()["doneGate"]["decision"], "deny");
}
