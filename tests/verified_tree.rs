//! "Verified at this tree" end to end: `spur verify --wbs W` records its gate results with a
//! fingerprint of the tree in the task ledger, and the done gate certifies only at that tree
//! with every required gate green there — whatever the verdict artifact's rows say.

use std::os::unix::fs::{symlink, PermissionsExt as _};

use crate::common::Spur;

const ANSWER: &str = "Verdict: PASS

## Requirements

| Req | Status | Evidence |
|-----|--------|----------|
| R1 | MET | `hello.txt:1` |

## Acceptance Criteria

| AC | Status | Evidence Type | Evidence |
|----|--------|---------------|----------|
| AC-1 | MET | command | `./check` passes against `hello.txt:1` |
";

/// The demo's task in the checklist shape: a task file without frontmatter has no
/// lifecycle, so `spur task update 0592 done` asks the done gate alone — what these tests
/// are about.
const BARE_TASK: &str = "# 0592 Say hello

## Requirements

- R1: hello.txt holds the greeting `hello, world`.

## Acceptance Criteria

- [ ] AC-1: `./check` passes
";

/// The README's demo project (task 0592, gate `quality` = `./check` on hello.txt) with the
/// greeting spelled `greeting`, its task file bare, and the verifier's answer at `answer.md`.
fn demo(greeting: &str) -> Spur {
    let project = Spur::new().fixture("examples/demo", ".");
    project.file("docs/tasks/0592_hello.md", BARE_TASK);
    project.file("hello.txt", format!("{greeting}\n"));
    project.file("answer.md", ANSWER);
    project
}

fn verify(project: &Spur) -> (i32, serde_json::Value) {
    let out = project.args(["verify", "--wbs", "0592"]).json().run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

/// `spur task verdict 0592 --from-answer answer.md`: the requirements' verdict, PASS.
fn verdict_from_answer(project: &Spur) {
    project
        .args(["task", "verdict", "0592", "--from-answer", "answer.md"])
        .run()
        .success();
}

/// `spur task update 0592 done --json`: (exit code, decision, message).
fn done(project: &Spur) -> (i32, String, String) {
    let out = project
        .args(["task", "update", "0592", "done"])
        .json()
        .env("USER", "ada")
        .run();
    let json = out.stdout_json();
    (
        out.exit_code().expect("exited"),
        json["decision"].as_str().unwrap_or_default().to_owned(),
        project.redact(json["message"].as_str().unwrap_or_default()),
    )
}

/// A green verify and a PASS verdict for the demo as it is.
fn green(project: &Spur) {
    let (code, json) = verify(project);
    assert_eq!(code, 0, "{json}");
    verdict_from_answer(project);
}

fn assert_denied(project: &Spur, fragment: &str) -> String {
    let (code, decision, message) = done(project);
    assert_eq!((code, decision.as_str()), (1, "deny"), "{message}");
    assert!(message.contains(fragment), "{fragment:?} not in {message}");
    message
}

#[test]
fn break_1_a_red_gate_is_not_washed_out_by_rewriting_the_artifact() {
    let project = demo("hello, wrold");
    let (code, json) = verify(&project);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["gates"][0]["status"], "FAIL");
    assert_eq!(json["fingerprint"].as_str().map(str::len), Some(64));
    // The artifact now has a red gate-quality row; rewriting it from the answer drops the
    // row and says PASS.
    verdict_from_answer(&project);
    let artifact = project.read(".spur/run/0592-verdict.json");
    assert!(!artifact.contains("gate-quality"), "{artifact}");
    let message = assert_denied(&project, "gate-quality FAIL (verify run verify-");
    assert!(message.contains("spur verify --wbs 0592"), "{message}");
    insta::assert_snapshot!(
        "red_gate",
        message.replace(&json["run"].as_str().unwrap().to_owned(), "[RUN]")
    );
    // Fixed and re-verified → allowed.
    project.file("hello.txt", "hello, world\n");
    green(&project);
    assert_eq!(done(&project).1, "allow");
}

#[test]
fn break_4_a_green_verify_does_not_certify_a_changed_tree() {
    let project = demo("hello, world");
    green(&project);
    let (_, json) = verify(&project);
    let run = json["run"].as_str().unwrap().to_owned();
    // The code changes after the green verify.
    project.file("hello.txt", "hello, wrold\n");
    let message = assert_denied(
        &project,
        &format!("the tree changed since verify run {run}"),
    );
    assert!(
        message.contains("Re-run the gates at this tree: spur verify --wbs 0592"),
        "{message}"
    );
    // Changed back: the evidence is of this tree again.
    project.file("hello.txt", "hello, world\n");
    assert_eq!(done(&project).1, "allow");
}

/// An edit a step makes to the project.
type Edit = fn(&Spur);

#[test]
fn chmod_rename_symlink_and_new_files_after_verify_are_denied() {
    let cases: [(&str, Edit); 5] = [
        ("chmod", |p| {
            std::fs::set_permissions(p.join("hello.txt"), std::fs::Permissions::from_mode(0o755))
                .unwrap()
        }),
        ("rename", |p| {
            std::fs::rename(p.join("stub-agent.sh"), p.join("agent.sh")).unwrap()
        }),
        ("retarget", |p| {
            std::fs::remove_file(p.join("link")).unwrap();
            symlink("stub-agent.sh", p.join("link")).unwrap();
        }),
        ("add", |p| {
            p.file("src/new.rs", "");
        }),
        ("remove", |p| {
            std::fs::remove_file(p.join("README.md")).unwrap()
        }),
    ];
    for (what, edit) in cases {
        let project = demo("hello, world");
        symlink("hello.txt", project.join("link")).unwrap();
        green(&project);
        edit(&project);
        let (code, _, message) = done(&project);
        assert_eq!(code, 1, "{what}: {message}");
        assert!(
            message.contains("the tree changed since verify run"),
            "{what}: {message}"
        );
    }
}

#[test]
fn editing_the_git_index_or_exclude_does_not_hide_a_change() {
    let project = demo("hello, world");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(project.path())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !git(&["init", "-q"]) {
        return;
    }
    git(&["add", "-A"]);
    green(&project);
    // The step edits a file and tells git not to see it.
    project.file("hello.txt", "hello, wrold\n");
    std::fs::write(project.join(".git/info/exclude"), "hello.txt\n").unwrap();
    git(&["rm", "-q", "--cached", "hello.txt"]);
    git(&["update-index", "--assume-unchanged", "check"]);
    assert_denied(&project, "the tree changed since verify run");
}

#[test]
fn a_task_files_solution_may_change_after_verify_but_not_its_requirements() {
    let project = demo("hello, world");
    let task = "docs/tasks/0592_hello.md";
    let original = project.read(task);
    green(&project);
    project.file(
        task,
        // Frontmatter without a `status:` key: the task stays bare (no lifecycle), so the
        // gate alone decides, on the tree.
        format!("---\nowner: ada\n---\n{original}\n## Solution\n\nWrote hello.txt.\n\n## Testing\n\n./check passes\n"),
    );
    assert_eq!(done(&project).1, "allow");

    let project = demo("hello, world");
    green(&project);
    project.file(task, original.replace("hello, world", "hello, there"));
    assert_denied(&project, "the tree changed since verify run");
}

#[test]
fn fingerprint_exclude_leaves_out_what_it_names() {
    let project = demo("hello, world");
    let config = project.read(".spur/config.yaml");
    project.file(
        ".spur/config.yaml",
        format!("{config}\ndoneGate:\n  fingerprintExclude: [\"generated/\"]\n"),
    );
    project.file("generated/stamp", "1");
    let out = project.args(["verify", "--wbs", "0592"]).run().success();
    assert!(!out.stderr().contains("unknown key"), "{}", out.stderr());
    green(&project);
    project.file("generated/stamp", "2");
    assert_eq!(done(&project).1, "allow");
}

#[test]
fn the_config_counts_and_removing_the_gates_after_verify_does_not_help() {
    let project = demo("hello, wrold");
    let (code, _) = verify(&project);
    assert_eq!(code, 1);
    verdict_from_answer(&project);
    project.file(
        ".spur/config.yaml",
        "agents:\n  claude: { command: \"sh ./stub-agent.sh\" }\n",
    );
    assert_denied(&project, "the tree changed since verify run");
}

#[test]
fn no_verify_run_is_denied_when_gates_are_configured() {
    let project = demo("hello, world");
    verdict_from_answer(&project);
    assert_denied(
        &project,
        // The demo's AC-1 names `./check`: its evidence command is required too.
        "no spur verify run has recorded its gates for task 0592 (required: gate-quality, gate-evidence-command:AC-1)",
    );
}

#[test]
fn a_gate_that_changes_the_tree_is_reported_and_its_run_does_not_count() {
    let project = demo("hello, world");
    project.file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    quality: { command: \"./check\" }\n    stamp: { command: \"date +%N > stamp.txt\" }\n",
    );
    let (code, json) = verify(&project);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        json["treeChangedBy"],
        serde_json::json!(["gate-quality", "gate-stamp", "gate-evidence-command:AC-1"])
    );
    let out = project.args(["verify", "--wbs", "0592"]).run();
    assert!(
        out.stderr()
            .contains("warning: the tree changed while the gates ran"),
        "{}",
        out.stderr()
    );
    verdict_from_answer(&project);
    assert_denied(&project, "changed the tree while its gates ran");
}

#[test]
fn spur_verify_fingerprint_prints_what_verify_records() {
    let project = demo("hello, world");
    let (_, json) = verify(&project);
    let printed = project
        .args(["verify", "fingerprint", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(printed["fingerprint"], json["fingerprint"]);
    assert!(printed["entries"].as_u64().unwrap() >= 5, "{printed}");
    let human = project.args(["verify", "fingerprint"]).run().success();
    assert!(human
        .stdout()
        .starts_with(json["fingerprint"].as_str().unwrap()));
}

/// A pipeline that verifies the task, then runs `step` (a shell command), then ends done.
fn pipeline_after_verify(step: &str) -> String {
    format!(
        r#"name: edit-after-verify
initialState: verify
terminalStates: [done, failed]
failureStates: [failed]
vars: {{wbs: "0592"}}
states:
  - id: verify
    onEnter:
      - kind: verify.run
  - id: step
    onEnter:
      - kind: shell
        options:
          command: {step:?}
  - id: done
  - id: failed
transitions:
  - {{from: verify, to: step}}
  - {{from: step, to: done}}
"#
    )
}

#[test]
fn a_step_that_edits_the_tree_after_verify_is_denied_at_the_end_of_the_run() {
    for (step, allowed) in [
        ("printf 'hello, wrold\\n' > hello.txt", false),
        ("chmod +x hello.txt", false),
        ("echo note >> .spur/run/notes.txt", true),
    ] {
        let project = demo("hello, world");
        verdict_from_answer(&project);
        let out = project.pipeline(&pipeline_after_verify(step)).json().run();
        let json = out.stdout_json();
        let decision = &json["doneGate"]["decision"];
        if allowed {
            assert_eq!(
                (out.exit_code(), decision.as_str()),
                (Some(0), Some("allow")),
                "{step}: {json}"
            );
        } else {
            assert_eq!(
                (out.exit_code(), decision.as_str()),
                (Some(1), Some("deny")),
                "{step}: {json}"
            );
            let message = json["doneGate"]["message"].as_str().unwrap();
            assert!(
                message.contains("the tree changed since verify run"),
                "{step}: {message}"
            );
        }
    }
}

#[test]
fn results_of_runs_at_the_same_tree_combine_and_a_gate_never_run_there_blocks() {
    let project = demo("hello, world");
    // `second` passes once `.spur/ok` exists: the state dir is not part of the tree.
    project.file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    quality: { command: \"./check\" }\n    second: { command: \"test -e .spur/ok\" }\n",
    );
    let (code, _) = verify(&project);
    assert_eq!(code, 1);
    verdict_from_answer(&project);
    assert_denied(&project, "gate-second FAIL (verify run");
    project.file(".spur/ok", "");
    project
        .args(["verify", "--wbs", "0592", "--gate", "second"])
        .run()
        .success();
    // gate-quality's PASS from the first run and gate-second's from the second, same tree.
    assert_eq!(done(&project).1, "allow");

    let project = demo("hello, world");
    project.file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    quality: { command: \"./check\" }\n    second: { command: \"true\" }\n",
    );
    project
        .args(["verify", "--wbs", "0592", "--gate", "quality"])
        .run()
        .success();
    verdict_from_answer(&project);
    assert_denied(&project, "gate-second has no result at this tree");
}
