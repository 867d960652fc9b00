//! Keyed chains (issue 19, item 2): the task ledger, the audit log and run journals are
//! sealed with a key that lives outside the project. A step can rewrite a whole file and
//! recompute a sha256 chain as spur did before keyed chains; it cannot seal it. Without
//! the key, records are *unverifiable*: not tampered, not fine.

use std::os::unix::fs::PermissionsExt as _;

use serde_json::Value;
use spur_engine::store::digest::sha256_hex;

use crate::common::Spur;

/// `text` re-chained as spur chained before keyed chains: each line of `lines` (JSON
/// objects) with its seal removed, `version` set, the chain field `prev_field` the sha256
/// of the line before (`genesis` for the first), and, when `own_hash`, a trailing `hash`,
/// the sha256 of the line up to it. What a step writes that needs no key.
fn rechained(
    lines: &[Value],
    version: u64,
    prev_field: &str,
    genesis: &str,
    own_hash: bool,
) -> String {
    let mut out = String::new();
    let mut prev = genesis.to_owned();
    for line in lines {
        let mut record = line.clone();
        let object = record.as_object_mut().expect("a record is an object");
        object.remove("key");
        object.remove("mac");
        object.remove("hash");
        object.insert("v".into(), version.into());
        object.insert(prev_field.into(), prev.clone().into());
        let mut text = serde_json::to_string(&record).unwrap();
        if own_hash {
            text.pop();
            let hash = sha256_hex(text.as_bytes());
            text = format!("{text},\"hash\":\"{hash}\"}}");
        }
        prev = sha256_hex(text.as_bytes());
        out.push_str(&text);
        out.push('\n');
    }
    out
}

fn records(project: &Spur, rel: &str) -> Vec<Value> {
    project
        .read(rel)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record is JSON"))
        .collect()
}

/// `spur audit verify`: (exit code, stdout + stderr, redacted).
fn audit_verify(project: &Spur) -> (i32, String) {
    let out = project.args(["audit", "verify"]).run();
    let text = out.stdout_redacted() + &out.stderr_redacted();
    (out.exit_code().expect("exited"), text)
}

fn show(project: &Spur, wbs: &str) -> Value {
    project
        .args(["task", "show", wbs, "--json"])
        .run()
        .success()
        .stdout_json()
}

fn update(project: &Spur, args: &[&str]) -> i32 {
    project
        .args(["task", "update"])
        .args(args)
        .env("USER", "ada")
        .run()
        .exit_code()
        .expect("exited")
}

/// A run of task T1 whose one step copies the files it forged beforehand (`forged/…`) over
/// spur's, then goes to the success terminal `done`, where the gate is asked.
const REWRITE: &str = r#"name: rewrite
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars:
  wbs: "T1"
states:
  - id: work
    onEnter:
      - kind: shell
        options:
          command: |
            cp forged/T1.jsonl "$SPUR_TEST_PROTECTED/ledger/tasks/T1.jsonl"
            cp forged/T1.json .spur/tasks/T1.json
  - id: done
  - id: failed
transitions:
  - {from: work, to: done}
"#;

#[test]
fn a_step_that_rewrites_the_whole_task_ledger_with_a_sha256_chain_is_caught() {
    let project = Spur::new();
    assert_eq!(update(&project, &["T1", "in-progress"]), 0);
    // The forgery, in the format of spur before keyed chains (format 2, every prev the
    // sha256 of the line before): the ledger says T1 went in-progress, then done through
    // the gate; the view says the same. Consistent, and no key needed.
    let mut lines = records(&project, ".spur/ledger/tasks/T1.jsonl");
    let mut done = lines[0].clone();
    done["seq"] = 1.into();
    done["from"] = "in-progress".into();
    done["to"] = "done".into();
    done["gate"] = serde_json::json!({"decision": "allow", "reason": "pass"});
    lines.push(done);
    let ledger = rechained(&lines, 2, "prev", "", false);
    let mut view = show(&project, "T1");
    let mut entry = view["history"][0].clone();
    entry["from"] = "in-progress".into();
    entry["to"] = "done".into();
    entry["via"] = serde_json::json!({"how": "done-gate-pass"});
    view = serde_json::json!({"wbs": "T1", "status": "done", "history": [view["history"][0].clone(), entry]});
    project
        .file("forged/T1.jsonl", &ledger)
        .file("forged/T1.json", view.to_string());

    let out = project
        .pipeline(REWRITE)
        .json()
        .env("USER", "ada")
        // Detection is the promise here: the step must be able to write the ledger.
        .env("SPUR_SANDBOX", "off")
        .run()
        .code(1)
        .stdout_json();
    // The unkeyed done is no proof: the gate is asked, not a noop, and denies (there is
    // no verdict at all).
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    assert_eq!(project.read(".spur/ledger/tasks/T1.jsonl"), ledger);
    let task = show(&project, "T1");
    assert_eq!(
        task["status"], "done",
        "it reads, as an older spur's ledger: {task}"
    );
    assert_eq!(task["certification"], "uncertified", "{task}");
    assert!(
        task["detail"].as_str().unwrap().contains(
            "seq 1) is unkeyed: written by a spur before keyed chains, or without the key"
        ),
        "{task}"
    );
    assert_eq!(task["ledger"]["unkeyed"], 2, "{task}");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("task T1 has an unkeyed task ledger: its 2 records are chained by plain sha256, and no sealed record follows them"),
        "{text}"
    );
}

#[test]
fn a_step_that_rewrites_the_audit_log_and_the_ledger_with_sha256_chains_is_caught() {
    let project = Spur::new();
    assert_eq!(
        update(
            &project,
            &["T1", "done", "--force-done", "--reason", "hand-checked"]
        ),
        0
    );
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    // The forger changes the reason of the override and re-chains both files as spur did
    // before keyed chains (audit format 1 with its own `hash`; ledger format 2), the
    // ledger's auditHash naming the new record: consistent, no key needed.
    let mut audit = records(&project, ".spur/audit.jsonl");
    audit[0]["reason"] = "approved by the lead".into();
    let audit_text = rechained(&audit, 1, "prevHash", &"0".repeat(64), true);
    let new_hash: Value = serde_json::from_str(audit_text.lines().next().unwrap()).unwrap();
    let mut ledger = records(&project, ".spur/ledger/tasks/T1.jsonl");
    ledger[0]["auditHash"] = new_hash["hash"].clone();
    ledger[0]["gate"]["forceReason"] = "approved by the lead".into();
    project.file(".spur/audit.jsonl", &audit_text).file(
        ".spur/ledger/tasks/T1.jsonl",
        rechained(&ledger, 2, "prev", "", false),
    );
    let mut view = show(&project, "T1");
    view["history"][0]["via"]["reason"] = "approved by the lead".into();
    view["history"][0]["via"]["auditHash"] = new_hash["hash"].clone();
    let view = serde_json::json!({"wbs": "T1", "status": "done", "history": view["history"]});
    project.file(".spur/tasks/T1.json", view.to_string());

    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "not verified: {text}");
    assert!(
        text.contains(
            "audit log [PROTECTED]/audit.jsonl is unkeyed: its 1 record is chained by plain sha256"
        ),
        "{text}"
    );
    assert!(
        text.contains("task T1 has an unkeyed task ledger"),
        "{text}"
    );
    assert!(text.contains("task T1 is uncertified"), "{text}");
    assert_eq!(show(&project, "T1")["certification"], "uncertified");
}

/// The guard of `work → done` passes only when `approved` is yes; the step kills spur.
const APPROVE: &str = r#"name: approve
initialState: work
terminalStates: [done, stopped]
vars:
  approved: "no"
states:
  - id: work
    onEnter:
      - kind: shell
        options: {command: 'kill -9 "$PPID"'}
  - id: done
    onEnter:
      - kind: shell
        options: {command: 'echo shipped > shipped.txt'}
  - id: stopped
transitions:
  - from: work
    to: done
    guard: {kind: shell, options: {command: 'test "$approved" = yes'}}
  - {from: work, to: stopped}
"#;

#[test]
fn a_step_that_rewrites_the_whole_journal_with_a_sha256_chain_is_refused() {
    let project = Spur::new();
    project.pipeline(APPROVE).run().killed();
    let runs: Vec<String> = std::fs::read_dir(project.join(".spur/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let run_id = runs[0].clone();
    let path = format!(".spur/runs/{run_id}/journal.jsonl");
    // What the step could have written before it killed spur: every record re-chained as
    // spur chained before keyed chains (format 1), and the step's action finished, having
    // set `approved` to yes. It fits the pipeline; only the key is missing.
    let mut lines = records(&project, &path);
    let started = lines
        .iter()
        .find(|r| r["event"] == "action-started")
        .unwrap()
        .clone();
    lines.push(serde_json::json!({
        "seq": lines.len() + 1, "at": started["at"], "event": "action-finished",
        "state": "work", "phase": "enter", "index": 0, "kind": "shell", "ok": true,
        "exitCode": 0, "durationMs": 1, "setVars": {"approved": "yes"}
    }));
    project.file(&path, rechained(&lines, 1, "prev", "", true));

    let out = project.args(["continue", &run_id]).run().code(4);
    assert!(
        out.stderr().contains("spur::journal::unkeyed"),
        "{}",
        out.stderr()
    );
    insta::assert_snapshot!(
        "journal_rewritten_with_sha256",
        out.stderr_redacted().replace(&run_id, "[RUN]")
    );
    assert!(!project.exists("shipped.txt"));
}

/// A project with sealed records of every kind: a ledger, the audit log, and a paused run.
fn sealed_project() -> (Spur, String) {
    let project = Spur::new();
    assert_eq!(update(&project, &["T1", "in-progress"]), 0);
    assert_eq!(
        update(
            &project,
            &["T2", "done", "--force-done", "--reason", "hand-checked"]
        ),
        0
    );
    let paused = project
        .pipeline(
            "name: hold\ninitialState: hold\nterminalStates: [end]\nstates:\n  - {id: hold, pause: true}\n  - {id: end}\ntransitions: [{from: hold, to: end}]\n",
        )
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = paused["runId"].as_str().unwrap().to_owned();
    (project, run_id)
}

#[test]
fn without_its_key_every_sealed_record_is_unverifiable_and_nothing_is_written() {
    let (project, run_id) = sealed_project();
    let key = project.key_path();
    let kept = std::fs::read(&key).unwrap();
    let ledger = project.read(".spur/ledger/tasks/T1.jsonl");
    std::fs::remove_file(&key).unwrap();

    // spur audit verify: exit 3, every kind named, none called tampered.
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    let key_id = records(&project, ".spur/audit.jsonl")[0]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    insta::assert_snapshot!(
        "audit_verify_without_the_key",
        text.replace(&key_id, "[KEY]")
    );
    assert!(!text.contains("tampered:"), "{text}");

    // spur task show: exit 0, unverifiable.
    let task = show(&project, "T1");
    assert_eq!(task["certification"], "unverifiable", "{task}");
    let out = project.args(["task", "show", "T1"]).run().success();
    insta::assert_snapshot!(
        "task_show_without_the_key",
        out.stdout_redacted().replace(&key_id, "[KEY]")
    );

    // A status change or done: exit 2, nothing appended, and no new key made.
    for args in [&["T1", "review"][..], &["T1", "done"]] {
        let out = project.args(["task", "update"]).args(args).run().code(2);
        assert!(
            out.stderr().contains("spur::task::ledger-unverifiable"),
            "{}",
            out.stderr()
        );
    }
    assert_eq!(project.read(".spur/ledger/tasks/T1.jsonl"), ledger);
    assert!(!key.exists(), "a missing key is never made again silently");

    // trace still shows the journal, saying it cannot be verified.
    let out = project.args(["trace", &run_id]).run().success();
    assert!(out.stdout().contains("run-started"), "{}", out.stdout());
    assert!(
        out.stderr()
            .contains("note: this journal cannot be verified from seq 1"),
        "{}",
        out.stderr()
    );

    // A resume: exit 4, refused before anything runs.
    let out = project.args(["continue", &run_id]).run().code(4);
    insta::assert_snapshot!(
        "continue_without_the_key",
        project
            .redact(&unwrapped(out.stderr()))
            .replace(&run_id, "[RUN]")
            .replace(&key_id, "[KEY]")
    );
    // A new run would seal a new journal: no key is made over the sealed records. (What
    // it reads first is the approval of the gate's policy, sealed too: unverifiable.)
    let out = project
        .file(
            "other.yaml",
            "name: n\ninitialState: a\nterminalStates: [b]\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
        )
        .args(["run", "other.yaml"])
        .run()
        .code(4);
    assert!(
        out.stderr().contains("spur::policy::approval-unverifiable")
            && unwrapped(out.stderr()).contains("and there is no key file"),
        "{}",
        out.stderr()
    );
    assert!(!key.exists());

    // Another key (made on purpose): the records are still unverifiable, now of another key.
    project.args(["key", "init"]).run().success();
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("and the key file holds key"), "{text}");

    // The key back: everything verifies, and the run goes on.
    std::fs::write(&key, kept).unwrap();
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert_eq!(show(&project, "T1")["certification"], "none");
    project.args(["continue", &run_id]).run().success();
}

#[test]
fn a_key_file_others_can_read_is_refused() {
    let project = Spur::new();
    assert_eq!(update(&project, &["T1", "in-progress"]), 0);
    let key = project.key_path();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = project
        .args(["task", "update", "T1", "review"])
        .run()
        .code(2);
    let key_id = records(&project, ".spur/ledger/tasks/T1.jsonl")[0]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    insta::assert_snapshot!(
        "key_file_mode_0644",
        project
            .redact(&unwrapped(out.stderr()))
            .replace(&key_id, "[KEY]")
    );
    assert_eq!(
        records(&project, ".spur/ledger/tasks/T1.jsonl").len(),
        1,
        "nothing was appended"
    );
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("has mode 0644"), "{text}");
    // A directory where the key should be is no key either.
    std::fs::remove_file(&key).unwrap();
    std::fs::create_dir(&key).unwrap();
    let out = project
        .args(["task", "update", "T1", "review"])
        .run()
        .code(2);
    let message = crate::common::unwrapped(out.stderr());
    assert!(message.contains("spur::key::refused"), "{message}");
    assert!(
        message.contains("is a directory, not a regular file"),
        "{message}"
    );
}

#[test]
fn a_new_user_gets_a_private_key_outside_the_project_at_the_first_write() {
    let project = Spur::new();
    let out = project.args(["key", "show", "--json"]).run().success();
    assert_eq!(out.stdout_json()["exists"], false);
    assert_eq!(update(&project, &["T1", "in-progress"]), 0);
    let key = project.key_path();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&key), 0o600);
    assert_eq!(mode(key.parent().unwrap()), 0o700);
    let shown = project
        .args(["key", "show", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(shown["exists"], true, "{shown}");
    assert_eq!(shown["path"], key.display().to_string());
    assert!(
        shown["described"]
            .as_str()
            .unwrap()
            .ends_with("(from XDG_STATE_HOME)"),
        "{shown}"
    );
    // The record names the key by its id, never by the key.
    let record = &records(&project, ".spur/ledger/tasks/T1.jsonl")[0];
    assert_eq!(record["key"], shown["keyId"]);
    assert!(!project
        .read(".spur/ledger/tasks/T1.jsonl")
        .contains(std::fs::read_to_string(&key).unwrap().trim()));
    // `spur key init` never replaces a key.
    let out = project.args(["key", "init"]).run().code(2);
    assert!(
        out.stderr().contains("spur::key::exists"),
        "{}",
        out.stderr()
    );

    // Without XDG_STATE_HOME: ~/.local/state/spur/key. With SPUR_KEY_FILE: that file.
    let other = Spur::new();
    other
        .args(["task", "update", "T1", "in-progress"])
        .env_remove("XDG_STATE_HOME")
        .run()
        .success();
    assert!(other.home().join(".local/state/spur/key").is_file());
    let third = Spur::new();
    let chosen = third.home().join("keys/spur.key");
    third
        .args(["task", "update", "T1", "in-progress"])
        .env("SPUR_KEY_FILE", &chosen)
        .run()
        .success();
    assert_eq!(mode(&chosen), 0o600);
    assert!(!third.key_path().exists());
}

#[test]
fn ledgers_audit_logs_and_journals_of_spur_before_keyed_chains_still_read() {
    // Written by spur at d15ad19 (before keyed chains): a run forced task 0592 done.
    let project = Spur::new().fixture("tests/fixtures/unkeyed", ".");
    let run_id = "20261202T100708Z-69b26c";
    // That spur kept them in .spur/: they are read once a person adopts them.
    assert_eq!(show(&project, "0592")["certification"], "uncertified");
    project
        .args(["state", "show"])
        .run()
        .success()
        .stdout_contains("`spur state adopt` moves it");
    project
        .args(["state", "adopt"])
        .run()
        .success()
        .stdout_contains("moved");
    assert!(!project.path().join(".spur/ledger").exists());
    let task = show(&project, "0592");
    assert_eq!(task["status"], "done", "{task}");
    assert_eq!(task["certification"], "uncertified", "{task}");
    assert_eq!(task["ledger"]["intact"], true, "{task}");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("is intact: 1 record"), "{text}");
    // trace shows the run, noting it is unkeyed; continue refuses it.
    let out = project.args(["trace", run_id]).run().success();
    assert!(out.stdout().contains("run-finished"), "{}", out.stdout());
    assert!(
        out.stderr().contains("not sealed with a key (format 1)"),
        "{}",
        out.stderr()
    );
    let out = project.args(["continue", run_id]).run().code(4);
    assert!(
        out.stderr().contains("spur::journal::unkeyed"),
        "{}",
        out.stderr()
    );
    // Adopting the task seals both chains: the old records are anchored, the task certified.
    project
        .args([
            "task",
            "certify",
            "0592",
            "--force-done",
            "--reason",
            "re-certified after the upgrade",
        ])
        .env("USER", "ada")
        .run()
        .success();
    let ledger = records(&project, ".spur/ledger/tasks/0592.jsonl");
    assert_eq!(ledger.len(), 2);
    assert_eq!(
        (ledger[0]["v"].as_u64(), ledger[1]["v"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(ledger[1]["from"], "done");
    assert_eq!(show(&project, "0592")["certification"], "certified");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("1 unkeyed record from before keyed chains, anchored"),
        "{text}"
    );
}

/// miette's message with its wrapped lines joined (a path cut at a `/` joined without a
/// space), so that the paths in it can be redacted whole.
fn unwrapped(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        match line.trim_start().strip_prefix("│ ") {
            Some(rest) if !out.is_empty() && !out.ends_with('\n') => {
                // spur's diagnostics wrap only at spaces (src/cli/failure.rs): a path
                // is never cut, however long the temporary directory's name.
                out.push(' ');
                out.push_str(rest.trim());
            }
            _ => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(line);
            }
        }
    }
    out.push('\n');
    out
}
