//! The task ledger is the one record of a task's status (break 1 of issue 16): a step that
//! writes `.spur/tasks/<wbs>.json` changes a view, not the status. A view that says done
//! with no ledger record is uncertified; a view that disagrees with the ledger is tampered.

use serde_json::Value;

use crate::common::{unwrapped, Spur};

/// A run of task T1 whose one step forges the task's view, then goes to the success
/// terminal `done`.
const FORGE_VIEW: &str = r#"name: forge
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
            mkdir -p .spur/tasks
            printf '%s' '{"wbs":"T1","status":"done","history":[]}' > .spur/tasks/T1.json
  - id: done
  - id: failed
transitions:
  - from: work
    to: done
"#;

fn project() -> Spur {
    let project = Spur::new();
    std::fs::create_dir_all(project.join(".spur")).unwrap();
    project
}

fn show(project: &Spur, wbs: &str) -> Value {
    project
        .args(["task", "show", wbs, "--json"])
        .run()
        .success()
        .stdout_json()
}

/// `spur audit verify`: (exit code, stdout + stderr, redacted).
fn audit_verify(project: &Spur) -> (i32, String) {
    let out = project.args(["audit", "verify"]).run();
    let text = out.stdout_redacted() + &out.stderr_redacted();
    (out.exit_code().expect("exited"), text)
}

fn update(project: &Spur, args: &[&str]) -> (i32, Value) {
    let out = project
        .args(["task", "update"])
        .args(args)
        .json()
        .env("USER", "ada")
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

#[test]
fn a_step_that_writes_a_done_view_does_not_certify_the_task() {
    let project = project();
    let out = project
        .pipeline(FORGE_VIEW)
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    assert_eq!(out["doneGate"]["verdict"], "UNKNOWN", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("missing verify verdict artifact"),
        "{message}"
    );

    let task = show(&project, "T1");
    assert_eq!(task["certification"], "uncertified", "{task}");
    assert_eq!(task["status"], "todo", "the ledger's status: {task}");
    assert_eq!(task["view"]["status"], "done", "{task}");
    assert_eq!(task["ledger"]["records"], 0, "{task}");
    let text = project.args(["task", "show", "T1"]).run().success();
    assert!(text.stdout().contains("uncertified"), "{}", text.stdout());

    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("task T1 is uncertified"), "{text}");
    assert!(text.contains("not a failure"), "{text}");

    // Not a noop: the gate runs, and denies without a verdict.
    let (code, json) = update(&project, &["T1", "done"]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["decision"], "deny", "{json}");
    assert_eq!(json["verdict"], "UNKNOWN", "{json}");
}

#[test]
fn a_step_that_rewrites_the_view_of_a_ledgered_task_is_tampering() {
    let project = project();
    let (code, _) = update(&project, &["T1", "in-progress"]);
    assert_eq!(code, 0);
    assert_eq!(show(&project, "T1")["certification"], "none");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");

    let out = project
        .pipeline(FORGE_VIEW)
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");

    let task = show(&project, "T1");
    assert_eq!(task["certification"], "tampered", "{task}");
    assert_eq!(task["status"], "in-progress", "{task}");
    let detail = task["detail"].as_str().unwrap();
    assert!(detail.contains("says done"), "{detail}");
    assert!(detail.contains("in-progress"), "{detail}");

    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("task T1 is tampered"), "{text}");
    assert!(text.contains("says done"), "{text}");
}

#[test]
fn task_certify_runs_the_gate_for_an_uncertified_task() {
    let project = project();
    project.file(
        ".spur/tasks/0592.json",
        r#"{"wbs":"0592","status":"done","history":[]}"#,
    );
    assert_eq!(show(&project, "0592")["certification"], "uncertified");

    // No verdict: denied, still uncertified.
    let out = project
        .args(["task", "certify", "0592", "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(show(&project, "0592")["certification"], "uncertified");

    // A PASS: certified, the view rewritten from the ledger.
    crate::common::fixture_verdict_through_spur(&project, "0592", "examples/verdicts/pass.json");
    let out = project
        .args(["task", "certify", "0592", "--json"])
        .env("USER", "ada")
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        (&out["decision"], &out["reason"], &out["status"]),
        (&"allow".into(), &"pass".into(), &"done".into()),
        "{out}"
    );
    let task = show(&project, "0592");
    assert_eq!(task["certification"], "certified", "{task}");
    assert_eq!(task["history"][0]["via"]["how"], "done-gate-pass");
    let ledger = project.read(".spur/ledger/tasks/0592.jsonl");
    let records: Vec<Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The artifact's write (verify's, then json.update's), then the status change.
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["verdict-written", "verdict-written", "status"]);
    let record = &records[2];
    assert_eq!(record["to"], "done");
    assert_eq!(record["gate"]["reason"], "pass");
    assert_eq!(record["verdictSha256"].as_str().unwrap().len(), 64);

    // Certified: a noop; and a noop puts a tampered view back.
    project.file(
        ".spur/tasks/0592.json",
        r#"{"wbs":"0592","status":"todo","history":[]}"#,
    );
    assert_eq!(show(&project, "0592")["certification"], "tampered");
    let out = project
        .args(["task", "certify", "0592", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["decision"], "noop", "{out}");
    assert_eq!(show(&project, "0592")["certification"], "certified");
    assert_eq!(audit_verify(&project).0, 0);
}

#[test]
fn task_certify_with_force_done_adopts_an_uncertified_task_audited() {
    let project = project();
    project.file(
        ".spur/tasks/0600.json",
        r#"{"wbs":"0600","status":"done","history":[]}"#,
    );
    project
        .args(["task", "certify", "0600", "--force-done"])
        .run()
        .code(2);
    let out = project
        .args([
            "task",
            "certify",
            "0600",
            "--force-done",
            "--reason",
            "done before spur had a ledger",
            "--json",
        ])
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["reason"], "forced", "{out}");
    let task = show(&project, "0600");
    assert_eq!(task["certification"], "certified", "{task}");
    let via = &task["history"][0]["via"];
    assert_eq!(via["how"], "forced-override");
    assert_eq!(via["reason"], "done before spur had a ledger");
    let audit: Value =
        serde_json::from_str(project.read(".spur/audit.jsonl").lines().next().unwrap()).unwrap();
    assert_eq!(via["auditHash"], audit["mac"]);
    assert_eq!(audit["v"], 2);
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_ledger_of_a_newer_format_is_a_clear_error() {
    let project = project();
    update(&project, &["T1", "in-progress"]);
    let path = ".spur/ledger/tasks/T1.jsonl";
    // The version is read before anything else of a record: nothing else needs to fit.
    let first = project.read(path);
    project.file(path, format!("{first}{{\"v\":4,\"new\":true}}\n"));
    let out = project
        .args(["task", "update", "T1", "review"])
        .run()
        .code(2);
    let message = unwrapped(out.stderr());
    assert!(
        message.contains("T1.jsonl cannot be read at seq 1"),
        "{message}"
    );
    assert!(
        message.contains("written by a newer spur (format 4); this spur reads format 3"),
        "{message}"
    );
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("task T1 is tampered"), "{text}");
    assert!(text.contains("newer spur (format 4)"), "{text}");
}

/// Two records `spur task update … --force-done` wrote before audit records carried a
/// format version.
const UNVERSIONED_AUDIT_LOG: &str = concat!(
    r#"{"time":"2026-12-01T20:24:36.223Z","user":"ada","wbs":"0600","runId":null,"reason":"verified by hand: CI is down","artifactPath":"/tmp/legacy/.spur/run/0600-verdict.json","artifactSha256":null,"storedVerdict":null,"recomputedVerdict":null,"effectiveVerdict":"UNKNOWN","denyMessage":"task 0600 cannot be marked done: missing verify verdict artifact /tmp/legacy/.spur/run/0600-verdict.json (verdict UNKNOWN). Re-verify the task to write a fresh artifact (spur verify --wbs 0600, or spur task verdict 0600 --from-answer FILE), or override with: spur task update 0600 done --force-done --reason \"why\" (recorded in the audit log)","prevHash":"0000000000000000000000000000000000000000000000000000000000000000","hash":"538035488865e511775fc5b699137c31c5c09dc2d1e2b0e030de508af26a6735"}"#,
    "\n",
    r#"{"time":"2026-12-01T20:24:36.279Z","user":"ada","wbs":"0601","runId":null,"reason":"second","artifactPath":"/tmp/legacy/.spur/run/0601-verdict.json","artifactSha256":null,"storedVerdict":null,"recomputedVerdict":null,"effectiveVerdict":"UNKNOWN","denyMessage":"task 0601 cannot be marked done: missing verify verdict artifact /tmp/legacy/.spur/run/0601-verdict.json (verdict UNKNOWN). Re-verify the task to write a fresh artifact (spur verify --wbs 0601, or spur task verdict 0601 --from-answer FILE), or override with: spur task update 0601 done --force-done --reason \"why\" (recorded in the audit log)","prevHash":"f4ef3bce0e25006b031fdf67be89e901257d5103efa3cc05fdb618d2530f42bb","hash":"069978facdd4b28acdbd1f026cc3c2329bf255c407e65dd50575237f8490e4c5"}"#,
    "\n",
);

#[test]
fn an_audit_log_written_before_format_versions_still_verifies() {
    let project = project();
    project.file(".spur/audit.jsonl", UNVERSIONED_AUDIT_LOG);
    // It reads and its chain holds, but nothing shows it was not rewritten whole: exit 3.
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("is intact: 2 records"), "{text}");
    assert!(
        text.contains("is unkeyed: its 2 records are chained by plain sha256"),
        "{text}"
    );
    // A new override chains onto it, sealed ("v":2), and the whole log still verifies.
    update(
        &project,
        &["0602", "done", "--force-done", "--reason", "third"],
    );
    let log = project.read(".spur/audit.jsonl");
    assert!(
        log.lines().nth(2).unwrap().starts_with(r#"{"v":2,"#),
        "{log}"
    );
    // The sealed record anchors the two before it: verified.
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("is intact: 3 records"), "{text}");
    assert!(
        text.contains("2 unkeyed records from before keyed chains, anchored"),
        "{text}"
    );
}

/// A run of task T1 whose step appends a forged `done` record to the task's ledger, with a
/// `prev` that is not the previous line's hash.
const FORGE_LEDGER: &str = r#"name: forge-ledger
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
            printf '%s\n' '{"v":1,"seq":1,"wbs":"T1","from":"in-progress","to":"done","at":"2026-12-01T10:00:00.000Z","user":"eve","run":null,"gate":{"decision":"allow","reason":"pass"},"verdictSha256":null,"auditHash":null,"prev":"forged"}' >> "$SPUR_TEST_PROTECTED/ledger/tasks/T1.jsonl"
  - id: done
  - id: failed
transitions:
  - from: work
    to: done
"#;

#[test]
fn a_broken_ledger_fails_the_run_at_the_gate_even_with_a_pass() {
    let project = project();
    update(&project, &["T1", "in-progress"]);
    let pass = std::fs::read_to_string(crate::common::repo_path("examples/verdicts/pass.json"))
        .unwrap()
        .replace("\"0592\"", "\"T1\"");
    project.file(".spur/run/T1-verdict.json", pass);
    let out = project
        .pipeline(FORGE_LEDGER)
        .json()
        // Detection is the promise here: the step must be able to write the ledger.
        .env("SPUR_SANDBOX", "off")
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(message.contains("T1.jsonl is broken at seq 1"), "{message}");

    let task = show(&project, "T1");
    assert_eq!(task["certification"], "tampered", "{task}");
    assert_eq!(task["ledger"]["intact"], false, "{task}");
    let (code, text) = audit_verify(&project);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("task T1 is tampered"), "{text}");
    // Nothing is appended to it, not even by the gate's caller.
    project
        .args(["task", "update", "T1", "done"])
        .run()
        .code(2)
        .stderr_contains("spur::task::ledger-broken");
    assert_eq!(
        project.read(".spur/ledger/tasks/T1.jsonl").lines().count(),
        2
    );
}

/// A step that certifies its own task with a nested `spur task certify`: the run's state
/// directory is not the project's `.spur/`, and the nested call finds it through the run's
/// environment (`SPUR_STATE_DIR`), as `task update` does.
#[test]
fn a_nested_task_certify_from_a_step_uses_the_runs_state_dir() {
    let project = project().file("elsewhere/keep", "");
    // The pipeline file first, and the step's output in the state dir: verify binds the
    // task to the tree it ran at.
    let nested = project.pipeline(
        r#"
name: nested-certify
initialState: record
vars: { wbs: "0000" }
states:
  - id: record
    onEnter:
      - kind: shell
        onError: continue
        options:
          command: '"$SPUR_BIN" task certify "$wbs" --json > elsewhere/nested.json 2> elsewhere/nested.err; echo $? > elsewhere/nested.code'
  - id: done
transitions:
  - { from: record, to: done }
"#,
    );
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
    assert_eq!(
        project.read("elsewhere/nested.code").trim(),
        "0",
        "{}",
        project.read("elsewhere/nested.err")
    );
    let nested: Value = serde_json::from_str(&project.read("elsewhere/nested.json")).unwrap();
    assert_eq!(
        (&nested["decision"], &nested["reason"]),
        (&"allow".into(), &"pass".into())
    );
    assert_eq!(out.stdout_json()["doneGate"]["decision"], "noop");
    assert!(project
        .protected_of(&project.join("elsewhere"))
        .join("ledger/tasks/0592.jsonl")
        .exists());
    assert!(
        !project.exists(".spur/ledger"),
        "the nested call wrote the wrong state dir"
    );
}
