//! `spur feature …` end to end (issue 20, item 4): features as the reference keeps them
//! (`docs/features*/<id>_<slug>.md`), created, listed, shown, checked, moved through the
//! feature lifecycle and synced from their tasks — never done over a task the done gate
//! has not certified.

use serde_json::Value;

use crate::common::{write_verdict_through_spur, Spur};

const F3: &str = "docs/features/F3_feature-management-cli.md";
const TASK: &str = "docs/tasks/0700_ship-it.md";

macro_rules! assert_feature_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

fn feature(p: &Spur, args: &[&str]) -> crate::common::Output {
    p.args(["feature"]).args(args).run()
}

fn project() -> Spur {
    let p = Spur::new();
    std::fs::create_dir_all(p.join(".spur")).unwrap();
    p
}

/// A project with feature A1 (filled, active) and task 0700 of it in `status`.
fn feature_with_task(status: &str) -> Spur {
    let p = project();
    feature(&p, &["create", "Greeting"]).success();
    feature(&p, &["create", "Hello file", "--parent", "A"]).success();
    p.file("goal.md", "Say hello.\n");
    p.file("scope.md", "- In: hello.txt\n- Out: the rest\n");
    feature(
        &p,
        &[
            "update",
            "A1",
            "--section",
            "Goal",
            "--from-file",
            "goal.md",
        ],
    )
    .success();
    feature(
        &p,
        &[
            "update",
            "A1",
            "--section",
            "scope",
            "--from-file",
            "scope.md",
        ],
    )
    .success();
    let task = std::fs::read_to_string(crate::common::repo_path(
        "tests/fixtures/lifecycle/0700_ship-it.md",
    ))
    .unwrap()
    .replace("feature_id: F1", "feature_id: A1")
    .replace("status: wip", &format!("status: {status}"));
    p.file(TASK, task);
    p.file("hello.txt", "hello\n");
    feature(&p, &["update", "A1", "active"]).success();
    feature(&p, &["update", "A1", "verifying"]).success();
    p
}

#[test]
fn create_allocates_tree_ids_and_writes_the_reference_template() {
    let p = project();
    let out = feature(&p, &["create", "Greeting", "--json"]).success();
    let json = out.stdout_json();
    assert_eq!(
        (&json["id"], &json["ref"]["kind"]),
        (&"A".into(), &"feature".into())
    );
    assert_feature_snapshot!("create_json", p.redact(out.stdout()));
    assert_feature_snapshot!("create_file", p.read("docs/features/A_greeting.md"));
    let out = feature(&p, &["create", "Hello file", "--parent", "A"]).success();
    assert_eq!(
        out.stdout(),
        "Created feature A1: docs/features/A1_hello-file.md\n"
    );
    assert_eq!(
        feature(&p, &["create", "Other", "--json"])
            .success()
            .stdout_json()["id"],
        "B"
    );
    // A parent that does not exist, an id that is not one: refused, nothing written.
    let out = feature(&p, &["create", "X", "--parent", "Q"]).code(2);
    assert!(
        out.stderr().contains("spur::feature::not-found"),
        "{}",
        out.stderr()
    );
    feature(&p, &["create", "X", "--parent", "a1"]).code(2);
    assert_eq!(
        std::fs::read_dir(p.join("docs/features")).unwrap().count(),
        3
    );
}

#[test]
fn list_and_show_print_the_reference_shapes() {
    let p = project();
    p.fixture(
        "tests/fixtures/reference-features/F3_feature-management-cli.md",
        F3,
    );
    feature(&p, &["create", "Greeting"]).success();
    let out = feature(&p, &["list"]).success();
    assert_feature_snapshot!("list_human", out.stdout());
    let list = feature(&p, &["list", "--priority", "P1", "--json"])
        .success()
        .stdout_json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], "F3");
    assert_eq!(list[0]["frontmatter"]["tags"][1], "wave-2");
    let show = feature(&p, &["show", "F3", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["content"], p.read(F3));
    assert_eq!(show["status"], "backlog");
    let out = feature(&p, &["show", "F3"]).success();
    assert_eq!(out.stdout(), p.read(F3));
    feature(&p, &["show", "F9"]).code(2);
}

#[test]
fn every_write_leaves_the_rest_of_a_reference_feature_file_byte_identical() {
    let p = project();
    p.fixture(
        "tests/fixtures/reference-features/F3_feature-management-cli.md",
        F3,
    );
    let original = p.read(F3);
    feature(
        &p,
        &["update", "F3", "--field", "priority", "--value", "P2"],
    )
    .success();
    let now = p.read(F3);
    let expected = original.replacen("priority: P1", "priority: P2", 1);
    // Only priority and updated_at differ.
    let strip = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("updated_at:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&now), strip(&expected));
    p.file("notes.md", "New notes.\n");
    feature(
        &p,
        &[
            "update",
            "F3",
            "--section",
            "notes",
            "--from-file",
            "notes.md",
        ],
    )
    .success();
    let after = p.read(F3);
    let cut = |t: &str, from: &str, to: &str| -> (String, String) {
        let a = t.find(from).unwrap();
        let b = t.find(to).unwrap();
        (t[..a].to_owned(), t[b..].to_owned())
    };
    let (a_head, a_tail) = cut(&after, "## Notes", "## History");
    let (n_head, n_tail) = cut(&now, "## Notes", "## History");
    assert_eq!((strip(&a_head), a_tail), (strip(&n_head), n_tail));
    assert!(
        after.contains("## Notes\n\nNew notes.\n\n## History"),
        "{after}"
    );
    let out = feature(
        &p,
        &[
            "update",
            "F3",
            "--section",
            "Design",
            "--from-file",
            "notes.md",
        ],
    )
    .code(2);
    assert!(out.stderr().contains("Goal, Scope"), "{}", out.stderr());
}

#[test]
fn check_reports_the_layers_for_the_status_it_is_to_enter() {
    let p = project();
    feature(&p, &["create", "Greeting"]).success();
    // Backlog: nothing required.
    feature(&p, &["check", "A"]).success();
    // Active requires Goal and Scope filled and gherkin scenarios with steps.
    let out = feature(&p, &["check", "A", "--as", "active"]).code(1);
    assert_feature_snapshot!("check_as_active", out.stdout());
    let json = feature(&p, &["check", "A", "--as", "active", "--json"])
        .code(1)
        .stdout_json();
    assert_eq!(
        json[0]["missingSections"],
        serde_json::json!(["Goal", "Scope"])
    );
    assert_eq!(json[0]["pass"], false);
    assert_feature_snapshot!(
        "check_as_active_json",
        serde_json::to_string_pretty(&json).unwrap()
    );
    feature(&p, &["check", "A", "--as", "shipped"]).code(2);
    // --strict makes a warning an error.
    p.file("ac.md", "Each of these:\n\n* works\n");
    feature(
        &p,
        &[
            "update",
            "A",
            "--section",
            "Acceptance Criteria",
            "--from-file",
            "ac.md",
        ],
    )
    .success();
    feature(&p, &["check", "A"]).success();
    feature(&p, &["check", "A", "--strict"]).code(1);
}

#[test]
fn a_feature_is_never_done_over_a_task_that_is_not() {
    let p = feature_with_task("testing");
    // The task is testing: check --as done names it, the update is refused.
    let json = feature(&p, &["check", "A1", "--as", "done", "--json"])
        .code(1)
        .stdout_json();
    let codes: Vec<&str> = json[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["L4.task-not-done"], "{json}");
    let out = feature(&p, &["update", "A1", "done"]).code(1);
    assert!(
        out.stderr().contains("task 0700 is testing"),
        "{}",
        out.stderr()
    );
    // A step writes `status: done` into the task file: not believed.
    p.file(
        TASK,
        p.read(TASK).replace("status: testing", "status: done"),
    );
    let out = feature(&p, &["update", "A1", "done"]).code(1);
    assert!(
        out.stderr().contains("its file says done"),
        "{}",
        out.stderr()
    );
    // Even a lifecycle whose guards let anything through keeps the check.
    let lenient =
        std::fs::read_to_string(crate::common::repo_path("pipelines/feature-lifecycle.yaml"))
            .unwrap()
            .replace(
                "command: '${vars.spurBin} feature check ${vars.featureId} --strict --as done'",
                "command: 'true'",
            );
    p.file(".spur/workflows/feature-lifecycle.yaml", lenient);
    feature(&p, &["update", "A1", "done"]).code(1);
    assert!(p
        .read("docs/features/A1_hello-file.md")
        .contains("\nstatus: verifying\n"));
    // Put the file back; the gate certifies the task; then the feature may be done.
    p.file(
        TASK,
        p.read(TASK).replace("status: done", "status: testing"),
    );
    write_verdict_through_spur(
        &p,
        "0700",
        r#"{ "wbs": "0700", "verdict": "PASS",
             "requirements": [ { "id": "R1", "status": "MET", "evidence": "hello.txt:1" } ],
             "acceptanceCriteria": [ { "id": "AC-1", "status": "MET", "evidenceType": "test", "evidence": "hello.txt:1" } ] }"#,
    );
    p.args(["task", "update", "0700", "done"]).run().success();
    let out = feature(&p, &["update", "A1", "done", "--json"]).success();
    assert_feature_snapshot!("update_done_json", p.redact(out.stdout()));
    let json = out.stdout_json();
    assert_eq!(
        (&json["fromStatus"], &json["toStatus"]),
        (&Value::from("verifying"), &Value::from("done"))
    );
    assert!(p
        .read("docs/features/A1_hello-file.md")
        .contains("\nstatus: done\n"));
}

#[test]
fn update_moves_a_feature_only_along_its_lifecycle() {
    let p = project();
    feature(&p, &["create", "Greeting"]).success();
    let out = feature(&p, &["update", "A", "done"]).code(1);
    assert!(
        out.stderr().contains("feature A stays backlog"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("no transition"), "{}", out.stderr());
    feature(&p, &["update", "A", "active"]).success();
    // active → verifying: the lifecycle's guard (`feature check --as verifying`) refuses
    // the empty Goal.
    let out = feature(&p, &["update", "A", "verifying"]).code(1);
    assert!(out.stderr().contains("guard"), "{}", out.stderr());
    assert!(p
        .read("docs/features/A_greeting.md")
        .contains("\nstatus: active\n"));
    feature(&p, &["update", "A", "shipped"]).code(2);
}

#[test]
fn sync_aligns_the_feature_with_its_tasks_through_the_lifecycle() {
    let p = feature_with_task("testing");
    let json = feature(&p, &["sync", "A1", "--json"])
        .success()
        .stdout_json();
    assert_eq!(json["proposal"]["to"], "active");
    assert_eq!(json["proposal"]["reopen"], true);
    assert_eq!(json["applied"], false, "a reopen needs --force");
    p.args([
        "task",
        "update",
        "0700",
        "done",
        "--force-done",
        "--reason",
        "shipped by hand",
    ])
    .run()
    .success();
    let json = feature(&p, &["sync", "A1", "--dry-run", "--json"])
        .success()
        .stdout_json();
    assert_eq!(
        (&json["proposal"]["to"], &json["applied"]),
        (&"done".into(), &false.into())
    );
    let out = feature(&p, &["sync", "A1", "--json"]).success();
    assert_feature_snapshot!("sync_json", out.stdout());
    // Done is final in the feature lifecycle: no edge back.
    feature(&p, &["update", "A1", "verifying"]).code(1);
    let out = feature(&p, &["sync", "A1"]).success();
    assert_eq!(
        out.stdout(),
        "Feature A1: [NOOP] done -> done (all 1 linked task(s) are done through the done gate)\n"
    );
}
