//! The done gate end to end through the binary: `spur task update WBS done` denies anything
//! but a self-consistent PASS, a forced override is audited first, and `spur audit verify`
//! catches any edit of the audit log.

use crate::common::{unwrapped, Spur};

const ARTIFACT: &str = ".spur/run/0592-verdict.json";

/// Make `examples/verdicts/<name>` task 0592's verdict artifact, written through spur.
fn artifact(project: &Spur, name: &str) {
    crate::common::fixture_verdict_through_spur(
        project,
        "0592",
        &format!("examples/verdicts/{name}"),
    );
}

/// A project with a `.spur/` directory (so the state dir is found from subdirectories).
fn project() -> Spur {
    let project = Spur::new();
    std::fs::create_dir_all(project.join(".spur")).unwrap();
    project
}

/// `spur task update WBS STATUS … --json` as user ada: (exit code, JSON document).
fn update(project: &Spur, args: &[&str]) -> (i32, serde_json::Value) {
    let out = project
        .args(["task", "update"])
        .args(args)
        .json()
        .env("USER", "ada")
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

/// `spur audit verify`: (exit code, stdout and stderr, redacted).
fn audit_verify(project: &Spur) -> (i32, String) {
    let out = project.args(["audit", "verify"]).run();
    let text = out.stdout_redacted() + &out.stderr_redacted();
    (out.exit_code().expect("exited"), text)
}

#[test]
fn the_done_gate_end_to_end() {
    let project = project();

    // No artifact → deny UNKNOWN.
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!(code, 1);
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["verdict"], "UNKNOWN");
    assert_eq!(json["status"], "todo");
    insta::assert_snapshot!(
        "deny_missing",
        project.redact(json["message"].as_str().unwrap())
    );

    // PARTIAL → deny.
    artifact(&project, "partial.json");
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!(
        (code, &json["decision"], &json["verdict"]),
        (1, &"deny".into(), &"PARTIAL".into())
    );

    // A stored PASS that recomputes to FAIL → deny, named self-inconsistent.
    artifact(&project, "self-inconsistent-pass.json");
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!(code, 1);
    assert_eq!(json["verdict"], "FAIL");
    insta::assert_snapshot!(
        "deny_self_inconsistent",
        project.redact(json["message"].as_str().unwrap())
    );

    // PASS → allow, status done.
    artifact(&project, "pass.json");
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!(code, 0);
    let mut shown = json.clone();
    shown["message"] = project.redact(json["message"].as_str().unwrap()).into();
    insta::assert_json_snapshot!("allow_pass", shown);
    assert!(json["message"]
        .as_str()
        .unwrap()
        .contains("verify verdict PASS"));

    // Done again → noop.
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!((code, &json["decision"]), (0, &"noop".into()));

    // The task's history says how it got there.
    let show = project
        .args(["task", "show", "0592", "--json"])
        .run()
        .stdout_json();
    assert_eq!(show["status"], "done");
    assert_eq!(show["history"][0]["via"]["how"], "done-gate-pass");
    assert_eq!(show["history"][0]["user"], "ada");

    // Forced with a reason → allow, audit line written, audit verify passes.
    std::fs::remove_file(project.join(ARTIFACT)).unwrap();
    let (code, json) = update(
        &project,
        &[
            "0600",
            "done",
            "--force-done",
            "--reason",
            "verified by hand: CI is down",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["reason"], "forced");
    assert_eq!(json["verdict"], "UNKNOWN");
    assert_eq!(json["status"], "done");
    let log = project.read(".spur/audit.jsonl");
    assert_eq!(log.lines().count(), 1);
    let record: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(record["wbs"], "0600");
    assert_eq!(record["user"], "ada");
    assert_eq!(record["reason"], "verified by hand: CI is down");
    assert!(record["denyMessage"]
        .as_str()
        .unwrap()
        .contains("missing verify verdict artifact"));
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        text,
        "audit log [PROTECTED]/audit.jsonl is intact: 1 record\n\
         task ledgers and views agree: 2 tasks checked (2 certified)\n"
    );

    // A second override, then edit one byte of the first line → verify names line 1.
    update(
        &project,
        &["0601", "done", "--force-done", "--reason", "second"],
    );
    let log = project.read(".spur/audit.jsonl");
    let edited = log.replacen("verified by hand", "verified by hanD", 1);
    std::fs::write(project.join(".spur/audit.jsonl"), edited).unwrap();
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1);
    insta::assert_snapshot!("audit_broken", text);
}

#[test]
fn editing_any_line_of_the_audit_log_is_named() {
    let project = project();
    for wbs in ["a1", "a2", "a3"] {
        let (code, _) = update(&project, &[wbs, "done", "--force-done", "--reason", "r"]);
        assert_eq!(code, 0);
    }
    let original = project.read(".spur/audit.jsonl");
    for line in 1..=3 {
        let edited: String = original
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == line {
                    format!("{}\n", l.replacen("\"r\"", "\"R\"", 1))
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(project.join(".spur/audit.jsonl"), edited).unwrap();
        let (code, text) = audit_verify(&project);
        assert_eq!(code, 1);
        assert!(text.contains(&format!("broken at line {line}:")), "{text}");
    }
    // A removed record is caught at the line after it.
    let without_second: String = original
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    std::fs::write(project.join(".spur/audit.jsonl"), without_second).unwrap();
    let (_, text) = audit_verify(&project);
    assert!(
        text.contains("broken at line 2: the record does not follow"),
        "{text}"
    );
}

#[test]
fn audit_list_shows_overrides() {
    let project = project();
    update(
        &project,
        &["0592", "done", "--force-done", "--reason", "hotfix"],
    );
    let mut records = project
        .args(["audit", "list", "--json"])
        .run()
        .success()
        .stdout_json();
    let record = &mut records[0];
    assert_eq!(record["mac"].as_str().unwrap().len(), 64);
    assert_eq!(record["key"].as_str().unwrap().len(), 16);
    assert_eq!(record["policySha256"].as_str().unwrap().len(), 64);
    record["time"] = "[time]".into();
    record["mac"] = "[mac]".into();
    record["key"] = "[key id]".into();
    for field in ["artifactPath", "denyMessage"] {
        record[field] = project.redact(record[field].as_str().unwrap()).into();
    }
    insta::assert_json_snapshot!(records);
}

#[test]
fn force_done_needs_a_real_reason_and_the_status_done() {
    let project = project();
    let usage = |args: &[&str]| {
        project.args(["task", "update"]).args(args).run().code(2);
    };
    usage(&["0592", "done", "--force-done"]);
    usage(&["0592", "done", "--force-done", "--reason", ""]);
    usage(&["0592", "done", "--force-done", "--reason", "  \t "]);
    usage(&["0592", "done", "--reason", "why"]);
    usage(&["0592", "blocked", "--force-done", "--reason", "why"]);
    usage(&["../etc", "done"]);
    usage(&["-x", "todo"]);
    usage(&["0592", "not a status"]);
    assert!(!project.join(".spur/audit.jsonl").exists());
    assert!(!project.join(".spur/tasks").exists());
}

#[test]
fn other_statuses_move_freely_and_leave_done() {
    let project = project();
    artifact(&project, "pass.json");
    let (code, json) = update(&project, &["0592", "In-Progress"]);
    assert_eq!((code, &json["status"]), (0, &"in-progress".into()));
    let (_, json) = update(&project, &["0592", "in-progress"]);
    assert_eq!(json["decision"], "noop");
    update(&project, &["0592", "done"]);
    let (code, json) = update(&project, &["0592", "review"]);
    assert_eq!((code, &json["status"]), (0, &"review".into()));
    let out = project
        .args(["task", "show", "0592"])
        .env("USER", "ada")
        .run();
    let shape: Vec<String> = out
        .stdout()
        .lines()
        .map(|l| match l.split_once("Z  ") {
            Some((_, rest)) => format!("  [time]  {rest}"),
            None => l.to_owned(),
        })
        .collect();
    insta::assert_snapshot!(shape.join("\n"));
}

#[test]
fn the_state_dir_is_found_walking_up_and_can_be_overridden() {
    let project = project();
    std::fs::create_dir_all(project.join("sub/dir")).unwrap();
    artifact(&project, "pass.json");
    project
        .current_dir("sub/dir")
        .args(["task", "update", "0592", "done"])
        .run()
        .success();
    assert!(project.join(".spur/tasks/0592.json").exists());

    let (code, json) = update(
        &project,
        &["0592", "done", "--state-dir", "elsewhere/.spur"],
    );
    assert_eq!((code, &json["verdict"]), (1, &"UNKNOWN".into()));
}

#[cfg(unix)]
#[test]
fn an_artifact_symlinked_outside_the_project_is_denied() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("0592-verdict.json");
    std::fs::copy(
        crate::common::repo_path("examples/verdicts/pass.json"),
        &target,
    )
    .unwrap();
    let project = project();
    std::fs::create_dir_all(project.join(".spur/run")).unwrap();
    std::os::unix::fs::symlink(&target, project.join(ARTIFACT)).unwrap();
    let (code, json) = update(&project, &["0592", "done"]);
    assert_eq!(code, 1);
    assert_eq!(json["verdict"], "UNKNOWN");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("outside the project"),
        "{json}"
    );
}

#[test]
fn a_broken_task_ledger_is_a_usage_error_and_left_alone() {
    let project = project();
    update(&project, &["0592", "in-progress"]);
    update(&project, &["0592", "review"]);
    // The first record edited: its seal no longer matches it.
    let ledger = ".spur/ledger/tasks/0592.jsonl";
    let edited = project.read(ledger).replacen("\"ada\"", "\"eve\"", 1);
    project.file(ledger, &edited);
    for args in [&["0592", "blocked"][..], &["0592", "done"]] {
        let out = project
            .args(["task", "update"])
            .args(args)
            .run()
            .code(2)
            .stderr_contains("spur::task::ledger-broken");
        // miette wraps the message: compare it with the wrapping undone.
        let message = unwrapped(out.stderr());
        assert!(
            message.contains("0592.jsonl is broken at seq 0: its seal is not the key's MAC"),
            "{message}"
        );
    }
    assert_eq!(project.read(ledger), edited);
}

#[test]
fn a_corrupt_view_is_not_the_status_and_is_rewritten_from_the_ledger() {
    let project = project();
    project.file(".spur/tasks/0592.json", "{ not json");
    let (code, json) = update(&project, &["0592", "blocked"]);
    assert_eq!((code, &json["status"]), (0, &"blocked".into()), "{json}");
    let view: serde_json::Value =
        serde_json::from_str(&project.read(".spur/tasks/0592.json")).unwrap();
    assert_eq!(view["status"], "blocked");
}

#[test]
fn a_denied_invalid_artifact_warns_once_on_stderr() {
    let project = project();
    artifact(&project, "rejected-rows.json");
    let out = project
        .args(["task", "update", "0592", "done", "--json"])
        .run()
        .code(1);
    let stderr = out.stderr();
    assert_eq!(
        stderr
            .matches("warning[L4.malformed-verdict-artifact]: task 0592")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("rejected rows: 4; invalid fields: id, scenario, status, row, name"));
    assert_eq!(out.stdout_json()["verdict"], "UNKNOWN");
}

#[test]
fn removing_the_last_audit_record_is_caught_by_the_task_history() {
    let project = project();
    for wbs in ["a1", "a2"] {
        update(&project, &[wbs, "done", "--force-done", "--reason", "r"]);
    }
    let log = project.read(".spur/audit.jsonl");
    let first_only = format!("{}\n", log.lines().next().unwrap());
    std::fs::write(project.join(".spur/audit.jsonl"), first_only).unwrap();
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1);
    assert!(
        text.contains("broken at line 2: the forced override of task a2 at "),
        "{text}"
    );
    assert!(text.contains("records were removed from the log"), "{text}");
}
