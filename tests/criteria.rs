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

/// `spur verify --wbs 0592 --json`: (exit code, JSON document).
fn verify(project: &Spur) -> (i32, serde_json::Value) {
    let out = project.args(["verify", "--wbs", "0592", "--json"]).run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

fn gate<'a>(outcome: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    outcome["gates"]
        .as_array()
        .and_then(|gates| gates.iter().find(|g| g["name"] == name))
        .unwrap_or_else(|| panic!("no gate {name} in {outcome}"))
}

const GREETING_TASK: &str = "\
# 0592 Say hello

## Requirements

- R1: greeting.txt holds the greeting.

## Acceptance Criteria

- [ ] AC-1: `grep -q 'hello, world' greeting.txt` passes
";

/// The verdict a verifier writes: everything MET, AC-1 claimed by a command it says ran.
const GREETING_PASS: &str = r#"{"wbs":"0592","verdict":"PASS",
  "requirements":[{"id":"R1","status":"MET","evidence":"greeting.txt:1"}],
  "acceptanceCriteria":[{"id":"AC-1: `grep -q 'hello, world' greeting.txt` passes","status":"MET",
    "evidenceType":"command","evidence":"`true` exited 0"}]}"#;

/// Break 5: a verdict claims "`grep -q 'hello, world' greeting.txt` passes"; spur verify
/// really runs that command (not the `true` the row names), its failure is a blocking
/// gate result with exit code and output, and the verdict it merges into fails.
#[test]
fn break_5_verify_runs_the_command_the_criterion_names() {
    let project = project(GREETING_TASK, CONFIG)
        .file("greeting.txt", "goodbye\n")
        .file(ARTIFACT, GREETING_PASS);
    let (code, json) = verify(&project);
    assert_eq!(code, 1, "{json}");
    let result = gate(&json, "evidence-command:AC-1");
    assert_eq!(result["status"], "FAIL", "{result}");
    assert_eq!(result["severity"], "blocker");
    assert_eq!(result["exitCode"], 1);
    assert_eq!(result["reprobed"], true);
    assert_eq!(
        result["command"], "grep -q 'hello, world' greeting.txt",
        "{result}"
    );
    let evidence = project.read(".spur/run/0592-evidence/evidence-command:AC-1.md");
    assert!(
        evidence.contains("grep -q 'hello, world' greeting.txt"),
        "{evidence}"
    );
    assert!(project
        .read(".spur/run/0592-verify-report.md")
        .contains("evidence-command:AC-1"));
    // The failure is merged into the verdict: done is denied.
    let verdict: serde_json::Value = serde_json::from_str(&project.read(ARTIFACT)).unwrap();
    let row = verdict["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|r| r["name"] == "gate-evidence-command:AC-1"))
        .unwrap_or_else(|| panic!("no check row in {verdict}"));
    assert_eq!(
        (&row["status"], &row["severity"]),
        (&"fail".into(), &"blocker".into())
    );
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1, "{json}");

    // Once the greeting is right, the same command passes, also run alone with --gate.
    project.file("greeting.txt", "hello, world\n");
    let (code, json) = verify(&project);
    assert_eq!(code, 0, "{json}");
    assert_eq!(gate(&json, "evidence-command:AC-1")["status"], "PASS");
    let out = project
        .args([
            "verify",
            "--wbs",
            "0592",
            "--gate",
            "evidence-command:AC-1",
            "--json",
        ])
        .run()
        .success();
    assert_eq!(out.stdout_json()["gates"].as_array().map(Vec::len), Some(1));
}

/// The command of a criterion runs via `sh -c` exactly as the task file's author wrote it,
/// in the project root; a command a verdict row names is never run in its place.
#[test]
fn the_task_files_command_runs_as_written_and_the_artifacts_never_does() {
    let task = "## Requirements\n- R1 x\n## Acceptance Criteria\n\
        - [ ] AC-1: `printf '%s|%s' \"$(pwd)\" 'a;b' > ran.txt` works\n";
    let project = project(task, CONFIG).file(
        ARTIFACT,
        r#"{"wbs":"0592","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}],
          "acceptanceCriteria":[{"id":"AC-1","status":"MET","evidenceType":"command",
            "evidence":"`touch pwned` passes"}]}"#,
    );
    let (code, json) = verify(&project);
    assert_eq!(code, 0, "{json}");
    let root = project.path().canonicalize().unwrap();
    assert_eq!(project.read("ran.txt"), format!("{}|a;b", root.display()));
    assert!(
        !project.exists("pwned"),
        "a value of the artifact was executed"
    );
}

/// A row claiming evidence type `command` for a criterion that names none: its first code
/// span is run (and only its). A row claiming another type runs nothing.
#[test]
fn a_command_row_for_a_criterion_naming_none_runs_the_rows_command() {
    let task = "## Requirements\n- R1 x\n## Acceptance Criteria\n\
        - [ ] AC-1: the greeting exists\n- [ ] AC-2: the greeting is polite\n";
    let project = project(task, CONFIG).file(
        ARTIFACT,
        r#"{"wbs":"0592","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}],
          "acceptanceCriteria":[
            {"id":"AC-1","status":"MET","evidenceType":"command","evidence":"ran `test -f greeting.txt` then `touch second`"},
            {"id":"AC-2","status":"MET","evidenceType":"test","evidence":"`touch not-a-command-row`"}]}"#,
    );
    let (code, json) = verify(&project);
    assert_eq!(code, 1, "{json}");
    let result = gate(&json, "evidence-command:AC-1");
    assert_eq!(result["command"], "test -f greeting.txt");
    assert_eq!(result["status"], "FAIL");
    assert!(json["gates"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["name"] != "evidence-command:AC-2"));
    assert!(!project.exists("second") && !project.exists("not-a-command-row"));

    project.file("greeting.txt", "hello\n");
    let (code, json) = verify(&project);
    assert_eq!(code, 0, "{json}");
}

/// A command that fails and then passes on its re-probe is a flaky FAIL (verify's re-probe
/// rule: a gate that cannot pass twice in a row has no stable pass), with both attempts.
#[test]
fn a_command_that_fails_then_passes_on_reprobe_is_a_flaky_fail() {
    // The first run leaves a mark and fails; the re-probe finds the mark and passes.
    let task = "## Requirements\n- R1 x\n## Acceptance Criteria\n\
        - [ ] AC-1: `if [ -e mark ]; then exit 0; else touch mark; exit 3; fi` settles\n";
    let project = project(task, CONFIG);
    let (code, json) = verify(&project);
    assert_eq!(code, 1, "{json}");
    let result = gate(&json, "evidence-command:AC-1");
    assert_eq!(
        (&result["status"], &result["reprobed"], &result["flaky"]),
        (&"FAIL".into(), &true.into(), &true.into()),
        "{result}"
    );
    assert_eq!(result["exitCode"], 3);
    assert_eq!(result["confidence"], "low");
}

/// The reference implementation's task-file shape (frontmatter, `### Requirements`,
/// gherkin scenarios) through the answer lint, verify's evidence commands and the gate.
#[test]
fn a_reference_format_task_file_through_the_lint_verify_and_the_gate() {
    let project = Spur::new()
        .file(".spur/config.yaml", "")
        .fixture(
            "examples/task-files/0593_reference-format.md",
            "docs/tasks/0593_reference-format.md",
        )
        .file("hello.txt", "hello, world\n");
    let answer = |rows: &str| {
        format!(
            "Verdict: PASS\n\n| Req | Status | Evidence |\n|---|---|---|\n\
             | R1 | MET | `hello.txt:1` |\n| R2 | MET | `hello.txt:1` |\n\n\
             | AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n{rows}"
        )
    };
    let core = "| Scenario: R1 — the greeting is written | MET | command | `hello.txt:1` |\n\
                | R2 — the greeting is one line | MET | command | `hello.txt:1` |\n";
    // The advisory scenario has no row: the lint names it and the artifact is a FAIL.
    project.file("answer.md", answer(core));
    let out = project
        .args([
            "task",
            "verdict",
            "0593",
            "--from-answer",
            "answer.md",
            "--json",
        ])
        .run()
        .code(1);
    assert!(
        out.stdout()
            .contains("Scenario: R1 — the book mentions the greeting"),
        "{}",
        out.stdout()
    );
    project
        .args(["task", "update", "0593", "done"])
        .run()
        .code(1);

    let advisory =
        "| Scenario: R1 — the book mentions the greeting | MET | static-ref | `hello.txt:1` |\n";
    project.file("answer.md", answer(&format!("{core}{advisory}")));
    // The implementer's Solution, written before verify like the rest of the tree.
    project.file("solution.md", "| `hello.txt:1` | the greeting |\n");
    project
        .args(["task", "verdict", "0593", "--from-answer", "answer.md"])
        .run()
        .success();
    let out = project
        .args(["verify", "--wbs", "0593", "--json"])
        .run()
        .success();
    let json = out.stdout_json();
    for (name, command) in [
        (
            "evidence-command:r1-the-greeting-is-written",
            "grep -qx 'hello, world' hello.txt",
        ),
        (
            "evidence-command:r2-the-greeting-is-one-line",
            r#"test "$(wc -l < hello.txt)" -eq 1"#,
        ),
    ] {
        let result = gate(&json, name);
        assert_eq!(
            (&result["status"], &result["command"]),
            (&"PASS".into(), &command.into())
        );
    }
    // The task file has the lifecycle (frontmatter `status:`): wip, its Solution, record
    // (Testing, Review, the proven boxes) into testing, then done through the gate. None of
    // these writes is in the tree verify bound the evidence to.
    project
        .args(["task", "update", "0593", "wip"])
        .run()
        .success();
    project
        .args(["task", "update", "0593", "--section", "Solution"])
        .args(["--from-file", "solution.md"])
        .run()
        .success();
    project
        .args(["task", "record", "0593", "--transition", "testing"])
        .run()
        .success();
    let out = project
        .args(["task", "update", "0593", "done", "--json"])
        .run();
    assert_eq!(out.stdout_json()["decision"], "allow", "{}", out.stdout());
}

/// Break 5, to the end: a criterion that names a command blocks done until spur verify ran
/// it green at this tree — rewriting the verdict without its red row, or never running
/// verify, does not help (the results come from spur's `verified` records).
#[test]
fn break_5_a_criterion_command_is_required_at_this_tree() {
    let project = project(GREETING_TASK, CONFIG)
        .file("greeting.txt", "goodbye\n")
        .file(ARTIFACT, GREETING_PASS);
    // No verify run yet: the criterion's command has no result.
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1, "{json}");
    assert!(
        message(&json).contains("(required: gate-evidence-command:AC-1)"),
        "{json}"
    );
    // A red run, then the verdict written back without the red row: still denied.
    let (code, _) = verify(&project);
    assert_eq!(code, 1);
    project.file(ARTIFACT, GREETING_PASS);
    let (code, json) = mark_done(&project);
    assert_eq!(code, 1, "{json}");
    assert!(
        message(&json).contains("gate-evidence-command:AC-1 FAIL (verify run verify-"),
        "{json}"
    );
    // Green at this tree: allowed.
    project.file("greeting.txt", "hello, world\n");
    let (code, json) = verify(&project);
    assert_eq!(code, 0, "{json}");
    let (code, json) = mark_done(&project);
    assert_eq!(
        (code, json["decision"].as_str()),
        (0, Some("allow")),
        "{json}"
    );
}

/// A task file verify cannot use is a problem of the run (it plans no evidence command and
/// does not pass), named with its code, file and line.
#[test]
fn verify_reports_a_task_file_it_cannot_use() {
    let task =
        "## Requirements\n- R1 x\n## Acceptance Criteria\n- [ ] AC-1: `true`\n- [ ] AC-1: again\n";
    let project = project(task, "");
    let (code, json) = verify(&project);
    assert_eq!(code, 1, "{json}");
    let problem = &json["problems"][0];
    assert_eq!(
        problem["code"], "spur::task-file::duplicate-criterion",
        "{json}"
    );
    assert!(
        problem["message"]
            .as_str()
            .unwrap_or_default()
            .contains("0592_hello.md:5: acceptance criterion id AC-1 is declared twice"),
        "{json}"
    );
}
