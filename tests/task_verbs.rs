//! The `spur task` verbs end to end through the binary, on real task files of the reference
//! (`tests/fixtures/reference-tasks/`): create, batch-create, list, show, path, check,
//! update (a status, a section) and record, human output and JSON.

use crate::common::Spur;

pub(crate) const T0055: &str =
    "0055_W1_Task_lifecycle_engine_integration_with_file-wins_rehydration.md";
pub(crate) const T0089: &str =
    "0089_foundation-restore-dnd-kit-markdown-editor-deps-and-adr-for-.md";
pub(crate) const T0093: &str = "0093_new-task-slide-out-panel-feeding-the-create-endpoint.md";
pub(crate) const T0096: &str =
    "0096_drag-and-drop-polish-dnd-kit-migration-with-drop-zone-feedba.md";

/// A project with `.spur/` and the reference task files `names` under `docs/tasks/`.
pub(crate) fn reference_project(names: &[&str]) -> Spur {
    let project = Spur::new();
    std::fs::create_dir_all(project.join(".spur")).unwrap();
    for name in names {
        project.fixture(
            &format!("tests/fixtures/reference-tasks/{name}"),
            &format!("docs/tasks/{name}"),
        );
    }
    project
}

/// Times and the temp project change between runs.
macro_rules! assert_task_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

/// `spur task ARGS` as user ada.
fn task(project: &Spur, args: &[&str]) -> crate::common::Output {
    project.args(["task"]).args(args).env("USER", "ada").run()
}

#[test]
fn create_allocates_the_next_wbs_and_writes_the_reference_skeleton() {
    let project = reference_project(&[T0093, T0096]);
    let out = task(&project, &["create", "Say hello, world!", "--json"]).success();
    let json = out.stdout_json();
    assert_eq!(json["wbs"], "0097");
    assert_eq!(json["ref"]["kind"], "task");
    assert_eq!(json["ref"]["id"], "0097");
    assert_eq!(json["eventName"], "task.created");
    assert_eq!(json["status"], "backlog");
    assert_task_snapshot!("create_json", project.redact(out.stdout()));
    assert_task_snapshot!(
        "create_file",
        project.read("docs/tasks/0097_say-hello-world.md")
    );
    let out = task(&project, &["create", "Wire it", "--feature", "F7"]).success();
    assert_eq!(
        out.stdout(),
        "Created task 0098: docs/tasks/0098_wire-it.md\n"
    );
    let file = project.read("docs/tasks/0098_wire-it.md");
    // Linked to a feature but its criteria are guidance only: `todo` would not pass
    // `spur task check --as todo`, so it starts in backlog.
    assert!(
        file.contains("\nstatus: backlog\ntemplate: feature-impl\n"),
        "{file}"
    );
    assert!(file.contains("\nfeature_id: F7\n"), "{file}");
    // The new files pass the structural check for their status.
    task(&project, &["check", "0097"]).success();
    task(&project, &["check", "0098"]).success();
}

#[test]
fn create_refuses_bad_values_and_writes_nothing() {
    let project = reference_project(&[]);
    let out = task(&project, &["create", "x", "--template", "epic"]).code(2);
    assert_task_snapshot!("create_bad_template", out.stderr());
    task(&project, &["create", "x", "--folder", "../elsewhere"]).code(2);
    task(&project, &["create", "x", "--feature", "f7"]).code(2);
    assert!(!project.exists("docs/tasks"));
    assert!(!project.exists("../elsewhere"));
}

#[test]
fn batch_create_is_all_or_nothing() {
    let project = reference_project(&[T0096]);
    project.file(
        "batch.json",
        r#"[
          {"name": "Parse answers", "requirements": "R1. Parse the table. R2. Lint each row.", "feature_id": "F7", "priority": "P1", "tags": ["answers"]},
          {"name": "Write the book page"},
          {"name": "Ideas for the board", "template": "brainstorm", "background": "Cards could carry avatars."}
        ]"#,
    );
    let out = task(
        &project,
        &["batch-create", "--file", "batch.json", "--json"],
    )
    .success();
    assert_task_snapshot!("batch_create_json", out.stdout());
    let first = project.read("docs/tasks/0097_parse-answers.md");
    assert!(
        first.contains("### Requirements\n\n- R1. Parse the table.\n- R2. Lint each row.\n"),
        "{first}"
    );
    assert!(first.contains("status: backlog\n") && first.contains("tags: [\"answers\"]\n"));
    let second = project.read("docs/tasks/0098_write-the-book-page.md");
    assert!(second.contains("status: backlog\n"), "{second}");
    // A brainstorm with its background is ready: todo, and it passes the check as todo.
    let third = project.read("docs/tasks/0099_ideas-for-the-board.md");
    assert!(third.contains("status: todo\n"), "{third}");
    task(&project, &["check", "0099"]).success();

    // One bad item: nothing of the batch is written.
    project.file(
        "bad.json",
        r#"[{"name": "ok"}, {"name": "bad", "colour": "red"}]"#,
    );
    let out = task(&project, &["batch-create", "--file", "bad.json"]).code(2);
    assert!(
        out.stderr().contains("unknown field `colour`"),
        "{}",
        out.stderr()
    );
    project.file(
        "bad.json",
        r#"[{"name": "ok"}, {"name": "bad", "priority": "P9"}]"#,
    );
    let out = task(&project, &["batch-create", "--file", "bad.json"]).code(2);
    assert!(
        out.stderr().contains("task 2 of the batch"),
        "{}",
        out.stderr()
    );
    let files = std::fs::read_dir(project.join("docs/tasks"))
        .unwrap()
        .count();
    assert_eq!(files, 4);
}

#[test]
fn list_shows_a_board_and_filters() {
    let project = reference_project(&[T0055, T0089, T0093, T0096]);
    let out = task(&project, &["list"]).success();
    assert_task_snapshot!("list_board", out.stdout());
    // A fresh project: no ledger has a record, so the two files that say done are not
    // believed — they list at the ledger's status, todo, marked uncertified.
    let out = task(&project, &["list", "--status", "Todo", "--json"]).success();
    let json = out.stdout_json();
    let listed: Vec<(&str, &str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["wbs"].as_str().unwrap(),
                t["fileStatus"].as_str().unwrap(),
                t["certification"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("0055", "done", "uncertified"),
            ("0089", "done", "uncertified"),
            ("0093", "todo", "none"),
            ("0096", "todo", "none")
        ]
    );
    assert_eq!(json[2]["frontmatter"]["feature_id"], "F7");
    assert_eq!(
        json[2]["name"],
        "New Task slide-out panel feeding the create endpoint"
    );
    assert_eq!(json[0]["frontmatter"]["status"], "todo");
    let out = task(&project, &["list", "--status", "done", "--json"]).success();
    assert_eq!(out.stdout_json(), serde_json::json!([]));
    let out = task(&project, &["list", "--feature", "F4", "--json"]).success();
    assert_task_snapshot!("list_feature_json", project.redact(out.stdout()));
}

#[test]
fn show_has_the_reference_fields_and_the_ledger() {
    let project = reference_project(&[T0096]);
    let out = task(&project, &["show", "0096", "--json"]).success();
    let json = out.stdout_json();
    assert_eq!(json["status"], "todo");
    assert_eq!(json["feature_id"], "F7");
    assert_eq!(json["fileStatus"], "todo");
    assert_eq!(json["frontmatter"]["status"], "todo");
    assert_eq!(json["certification"], "none");
    let content = json["content"].as_str().unwrap();
    assert!(
        content.starts_with("\n## 0096. Drag-and-drop polish"),
        "{content}"
    );
    assert!(content.contains("\n### Requirements\n- [ ] R1. Replace"));
    let mut head = json.clone();
    head["content"] = "[CONTENT]".into();
    assert_task_snapshot!(
        "show_json",
        project.redact(&serde_json::to_string_pretty(&head).unwrap())
    );
    let out = task(&project, &["show", "0096"]).success();
    assert_task_snapshot!("show_human", out.stdout());
}

#[test]
fn path_prints_the_file() {
    let project = reference_project(&[T0096]);
    let out = task(&project, &["path", "0096", "--json"]).success();
    assert_task_snapshot!("path_json", project.redact(out.stdout()));
    let out = task(&project, &["path", "0096"]).success();
    assert_eq!(
        project.redact(out.stdout()),
        format!("[PROJECT]/docs/tasks/{T0096}\n")
    );
    let out = task(&project, &["path", "0100", "--json"]).code(2);
    assert!(
        out.stderr().contains("no task file for 0100"),
        "{}",
        out.stderr()
    );
}

#[test]
fn check_reports_findings_at_their_place() {
    let project = reference_project(&[T0089, T0096]);
    // A done task whose Review has no P1–P4 table: the reference's own rule fails it.
    let out = task(&project, &["check", "0089"]).code(1);
    assert_task_snapshot!("check_done_stdout", out.stdout());
    assert_task_snapshot!("check_done_stderr", out.stderr());
    let out = task(&project, &["check", "0089", "--json"]).code(1);
    assert_task_snapshot!("check_done_json", out.stdout());

    // 0096 passes as it is (todo); as done it lacks the evidence sections.
    task(&project, &["check", "0096", "--strict-core"]).success();
    let out = task(&project, &["check", "0096", "--as", "DONE"]).code(1);
    assert_task_snapshot!("check_as_done_stderr", out.stderr());
    assert!(
        out.stdout().starts_with("0096 (done): FAIL"),
        "{}",
        out.stdout()
    );
    // --strict: the one warning (no feature file for F7) fails it.
    task(&project, &["check", "0096", "--strict"]).code(1);
    let out = task(&project, &["check", "0096", "--as", "shipped"]).code(2);
    assert!(
        out.stderr().contains("invalid --as status \"shipped\""),
        "{}",
        out.stderr()
    );
    // Every task of the folders.
    let out = task(&project, &["check", "--json"]).code(1);
    let json = out.stdout_json();
    assert_eq!(json.as_array().unwrap().len(), 2);
    assert_eq!(json[1]["pass"], true);
}

#[test]
fn update_moves_a_status_through_the_lifecycle_and_the_file_follows() {
    let project = reference_project(&[T0096]);
    let path = format!("docs/tasks/{T0096}");
    let original = project.read(&path);
    // todo → done skips the lifecycle: refused, nothing written.
    let out = task(&project, &["update", "0096", "done", "--json"]).code(1);
    assert_task_snapshot!("update_denied_json", out.stdout());
    assert_eq!(project.read(&path), original);
    assert!(!project.exists(".spur/ledger/tasks/0096.jsonl"));
    // todo → in-progress (wip): recorded, and the file's status (and updated_at) follow.
    let out = task(&project, &["update", "0096", "in-progress"]).success();
    assert_eq!(out.stdout(), "task 0096: todo → wip\n");
    let file = project.read(&path);
    assert!(file.contains("\nstatus: wip\n"), "{file}");
    assert!(
        !file.contains("2026-06-20T15:57:14.415Z"),
        "updated_at is stamped"
    );
    // wip → testing: `spur task check --as testing` passes (Solution and Testing missing
    // are warnings at testing, as in the reference's matrix).
    task(&project, &["update", "0096", "testing"]).success();
    // testing → wip is not an edge; --no-lifecycle skips the graph only.
    task(&project, &["update", "0096", "wip"]).code(1);
    task(&project, &["update", "0096", "wip", "--no-lifecycle"]).success();
    task(&project, &["update", "0096", "testing"]).success();
    // testing → done: the structural check as done refuses (no Review, open boxes), before
    // the gate is asked.
    let out = task(&project, &["update", "0096", "done"]).code(1);
    assert_task_snapshot!("update_check_refused", out.stderr());
    let out = task(&project, &["update", "0096", "done", "--no-lifecycle"]).code(1);
    assert!(out
        .stderr()
        .contains("`spur task check 0096 --as done` does not pass"));
    let out = task(&project, &["update", "0096", "shipped"]).code(2);
    assert!(
        out.stderr().contains("\"shipped\" is not a task status"),
        "{}",
        out.stderr()
    );
    let show = task(&project, &["show", "0096", "--json"])
        .success()
        .stdout_json();
    let moves: Vec<&str> = show["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["to"].as_str().unwrap())
        .collect();
    assert_eq!(moves, ["wip", "testing", "wip", "testing"]);
}

#[test]
fn update_section_replaces_one_section() {
    let project = reference_project(&[T0096]);
    project.file(
        "solution.md",
        "### Solution\n\n| File | Line | What |\n|---|---|---|\n| `KanbanBoard.tsx` | 12 | dnd-kit |\n### Stray heading\nmore\n",
    );
    let out = task(
        &project,
        &[
            "update",
            "0096",
            "--section",
            "solution",
            "--from-file",
            "solution.md",
            "--json",
        ],
    )
    .success();
    assert_task_snapshot!("update_section_json", project.redact(out.stdout()));
    let file = project.read(&format!("docs/tasks/{T0096}"));
    assert!(
        file.contains("### Plan\n1. Wrap"),
        "the sections around are as they were"
    );
    assert!(
        file.contains("\n### Solution\n\n| File | Line | What |\n|---|---|---|\n| `KanbanBoard.tsx` | 12 | dnd-kit |\nmore\n\n### History\n"),
        "{file}"
    );
    let out = task(
        &project,
        &[
            "update",
            "0096",
            "--section",
            "Findings",
            "--from-file",
            "solution.md",
        ],
    )
    .code(2);
    assert_task_snapshot!("update_unknown_section", out.stderr());
    task(&project, &["update", "0096", "--section", "Solution"]).code(2);
    // The reference's other field writes: feature_id and priority, checked.
    let out = task(&project, &["update", "0096", "--feature", "F9", "--json"]).success();
    assert_eq!(out.stdout_json()["field"], "feature_id");
    let file = project.read(&format!("docs/tasks/{T0096}"));
    assert!(file.contains("\nfeature_id: F9\n"), "{file}");
    task(&project, &["update", "0096", "--priority", "P7"]).code(2);
    task(&project, &["update", "0096", "wip", "--priority", "P1"]).code(2);
    let show = task(&project, &["get", "0096", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["feature_id"], "F9");
}

#[test]
fn record_writes_testing_review_and_solution_then_transitions() {
    let project = reference_project(&[T0096]);
    // A git repository with one change since HEAD and one new file.
    project.file("src/board.tsx", "one\ntwo\nthree\n");
    project.git(&["init", "-q"]);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    project.file("src/board.tsx", "one\n2\nthree\n");
    project.file("src/overlay.tsx", "new\n");
    task(&project, &["update", "0096", "wip"]).success();
    crate::common::write_verdict_through_spur(
        &project,
        "0096",
        r#"{"wbs":"0096","verdict":"PASS","requirements":[
            {"id":"R1","status":"MET","evidence":"`src/board.tsx:2`"},
            {"id":"R2","status":"MET","evidence":"`src/overlay.tsx:1`"},
            {"id":"R3","status":"MET","evidence":"`src/board.tsx:2`"},
            {"id":"R4","status":"MET","evidence":"`src/board.tsx:2`"},
            {"id":"R5","status":"MET","evidence":"`src/board.tsx:2`"}],
          "acceptanceCriteria":[], "checks":[]}"#,
    );
    let out = task(
        &project,
        &[
            "record",
            "0096",
            "--solution-from-diff",
            "--transition",
            "testing",
            "--json",
        ],
    )
    .success();
    assert_task_snapshot!("record_json", out.stdout());
    let file = project.read(&format!("docs/tasks/{T0096}"));
    let from = file.find("### Plan").unwrap();
    assert_task_snapshot!("record_file_tail", &file[from..]);
    assert!(file.contains("- [x] R1. Replace"), "{file}");
    assert!(file.contains("\nstatus: testing\n"), "{file}");
    // A second record leaves the Solution alone (it is not empty any more) and rewrites
    // its own Review.
    let out = task(&project, &["record", "0096", "--solution-from-diff"]).success();
    assert_eq!(out.stdout(), "Testing written, Review written\n");
    // A Review someone wrote is never overwritten.
    project.file("review.md", "| P3 | board | — | a nit |\n");
    task(
        &project,
        &[
            "update",
            "0096",
            "--section",
            "Review",
            "--from-file",
            "review.md",
        ],
    )
    .success();
    let out = task(&project, &["record", "0096"]).success();
    assert_eq!(out.stdout(), "Testing written\n");
    assert!(project
        .read(&format!("docs/tasks/{T0096}"))
        .contains("| P3 | board | — | a nit |"));
}

#[test]
fn show_says_when_the_task_file_cannot_be_read_and_shows_the_ledger() {
    let project = reference_project(&[]);
    project.file("docs/tasks/0100_binary.md", [0xffu8, 0xfe, b'\n']);
    let out = task(&project, &["show", "0100", "--json"]).success();
    assert!(out.stderr().contains("not UTF-8"), "{}", out.stderr());
    let json = out.stdout_json();
    assert_eq!(json["status"], "todo");
    assert_eq!(json["content"], serde_json::Value::Null);
    let out = task(&project, &["check", "0100"]).code(2);
    assert!(out.stderr().contains("not UTF-8"), "{}", out.stderr());
    task(&project, &["update", "0100", "wip"]).code(2);
    // A FIFO where a task file would be is no task file: never opened, never waited on.
    let made = std::process::Command::new("mkfifo")
        .arg(project.join("docs/tasks/0101_fifo.md"))
        .status()
        .expect("mkfifo is needed for this test: install coreutils");
    assert!(made.success());
    let out = project
        .args(["task", "check", "0101"])
        .within(std::time::Duration::from_secs(20))
        .run()
        .code(2);
    assert!(
        out.stderr().contains("no task file for 0101"),
        "{}",
        out.stderr()
    );
    project
        .args(["task", "show", "0101"])
        .within(std::time::Duration::from_secs(20))
        .run()
        .success();
}
