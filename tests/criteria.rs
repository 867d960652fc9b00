//! Complete verdicts and the criterion's own command, through the binary (issue 17 breaks
//! 2 and 5): with a task file, the gate denies a verdict that lacks a row for any of its
//! requirements or criteria; `spur verify --wbs` runs the command a criterion names.

use crate::common::Spur;

const ARTIFACT: &str = ".spur/run/0592-verdict.json";

/// Accepts verdicts written outside spur (the artifacts below are written by hand), so the
/// completeness check is what decides.
const CONFIG: &str = "doneGate:\n  externalVerdicts: allow\n";

/// A project with `task` as task 0592's task file and `config` as its config.
fn project(task: &str, config: &str) -> Spur {
    Spur::new()
        .file(".spur/config.yaml", config)
        .file("docs/tasks/0592_hello.md", task)
}

/// `spur task update 0592 done --json`: (exit code, JSON document).
fn mark_done(project: &Spur) -> (i32, serde_json::Value) {
    let out = project
        .args(["task", "update", "0592", "done"])
        .json()
        .env("USER", "ada")
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

fn message(json: &serde_json::Value) -> &str {
    json["message"].as_str().unwrap_or_default()
}

const THREE_REQUIREMENTS: &str = "\
# 0592 Say hello

## Requirements

- R1: hello.txt holds the greeting.
- R2: the greeting is one line.
- R3: nothing else is written.
";

/// Break 2: the task file declares R1 R2 R3; an artifact with only `R1 MET` is denied,
/// naming R2 and R3 — dropping the UNMET rows no longer improves the verdict.
#[test]
fn break_2_a_verdict_missing_rows_is_denied_naming_them() {
    let project = project(THREE_REQUIREMENTS, CONFIG).file(
        ARTIFACT,
        r#"{"wbs":"0592","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"hello.txt:1"}]}"#,
    );
    let (code, json) = mark_done(&project);
    assert_eq!(
        (code, json["decision"].as_str()),
        (1, Some("deny")),
        "{json}"
    );
    insta::assert_snapshot!("incomplete_deny", project.redact(message(&json)));

    // With every row, UNMET ones included, the verdict is FAIL: still denied, for that.
    project.file(
        ARTIFACT,
        r#"{"wbs":"0592","verdict":"FAIL","requirements":[{"id":"R1","status":"MET","evidence":"hello.txt:1"},
            {"id":"R2","status":"UNMET","evidence":"-"},{"id":"R3","status":"UNMET","evidence":"-"}]}"#,
    );
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1);
    assert!(message(&json).contains("verdict FAIL"), "{json}");

    // Every row MET: allowed.
    project.file(
        ARTIFACT,
        r#"{"wbs":"0592","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"hello.txt:1"},
            {"id":"R2","status":"MET","evidence":"hello.txt:1"},{"id":"R3","status":"MET","evidence":"hello.txt:1"}]}"#,
    );
    let (code, json) = mark_done(&project);
    assert_eq!(
        (code, json["decision"].as_str()),
        (0, Some("allow")),
        "{json}"
    );
}

#[test]
fn a_missing_criterion_row_is_denied_and_a_broken_task_file_fails_closed() {
    let task = format!("{THREE_REQUIREMENTS}\n## Acceptance Criteria\n\n- [ ] AC-1: the greeting is polite\n- [ ] [advisory] the book mentions it\n");
    let rows = r#"{"id":"R1","status":"MET","evidence":"a:1"},{"id":"R2","status":"MET","evidence":"a:1"},{"id":"R3","status":"MET","evidence":"a:1"}"#;
    let project = project(&task, CONFIG).file(
        ARTIFACT,
        format!(
            r#"{{"wbs":"0592","verdict":"PASS","requirements":[{rows}],
            "acceptanceCriteria":[{{"id":"AC-1","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"}}]}}"#
        ),
    );
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1);
    assert!(
        message(&json)
            .contains("no row for acceptance criterion `[advisory] the book mentions it`"),
        "{json}"
    );

    // A task file the gate cannot parse denies, naming file and line.
    project.file(
        "docs/tasks/0592_hello.md",
        format!("{task}- [ ] AC-1: declared twice\n"),
    );
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1);
    assert!(
        message(&json).contains("0592_hello.md:13: acceptance criterion id AC-1 is declared twice"),
        "{json}"
    );
}
