//! The tasks board and the audit page say what the ledger says: a view forged to say done
//! is flagged tampered on its card and on the audit page.

use super::http::get;
use super::server::UiServer;
use crate::common::Spur;

#[test]
fn a_task_whose_view_was_forged_to_done_is_flagged_tampered_on_the_board_and_the_audit_page() {
    let project = Spur::new();
    project.args(["init"]).run().success();
    project
        .args(["task", "create", "forged one"])
        .run()
        .success();
    let tasks = project
        .args(["task", "list", "--json"])
        .run()
        .success()
        .stdout_json();
    let wbs = tasks
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "forged one")
        .and_then(|t| t["wbs"].as_str())
        .unwrap_or_else(|| panic!("no task in {tasks}"))
        .to_owned();
    project
        .args(["task", "update", &wbs, "todo"])
        .run()
        .success();
    let ui = UiServer::start(&project, &[]);

    let board = get(ui.addr, "/tasks").body;
    let card = |board: &str| {
        board
            .split(&format!("data-wbs=\"{wbs}\""))
            .nth(1)
            .and_then(|rest| rest.split("</div>").next())
            .unwrap_or_else(|| panic!("no card for {wbs} in {board}"))
            .to_owned()
    };
    assert!(
        card(&board).starts_with(" data-certification=\"none\""),
        "{}",
        card(&board)
    );
    assert!(!card(&board).contains("tampered"));
    let todo_column = board
        .split("data-status=\"todo\"")
        .nth(1)
        .and_then(|rest| rest.split("data-status=").next())
        .unwrap_or_default();
    assert!(
        todo_column.contains(&format!("data-wbs=\"{wbs}\"")),
        "the card is in its status's column: {board}"
    );

    project.file(
        &format!(".spur/tasks/{wbs}.json"),
        format!(r#"{{"wbs":"{wbs}","status":"done","history":[]}}"#),
    );
    let board = get(ui.addr, "/tasks").body;
    let forged = card(&board);
    assert!(
        forged.starts_with(" data-certification=\"tampered\""),
        "{forged}"
    );
    assert!(forged.contains("⚠ tampered"), "{forged}");
    assert!(forged.contains("verdict: none"), "{forged}");

    let audit = get(ui.addr, "/audit").body;
    assert!(audit.contains("data-intact=\"false\""), "{audit}");
    assert!(
        audit.contains(&format!("Task {wbs} is tampered")),
        "{audit}"
    );
}
