//! Item 6: lifecycles driven from outside. The corpus `task-lifecycle.yaml` and
//! `feature-lifecycle.yaml` are not run start to end: each entity has one long-lived
//! instance, and a request names the state it should move to; the pipeline's guards decide,
//! the done gate decides a task's `done`, every request is journaled.

use serde_json::Value;

use super::super::run::make_executable;
use crate::common::{events, fixture_verdict_through_spur, Spur};

/// Stands in for `spur task check` / `spur feature check` in the lifecycles' shell guards:
/// passes unless `fail-checks` exists. (Those verbs belong to the task-files issue.) It
/// writes nothing: the done gate holds a task to the tree it was verified at.
const FAKE_CHECKER: &str = "#!/bin/sh\ntest ! -f fail-checks\n";

fn project(pipeline: &str) -> Spur {
    let p = Spur::new().fixture(&format!("examples/corpus/{pipeline}"), pipeline);
    p.file("checker.sh", FAKE_CHECKER);
    make_executable(&p.join("checker.sh"));
    p
}

/// `spur lifecycle request PIPELINE --entity E --to S [extra…] --json`: (exit, answer).
fn request(p: &Spur, pipeline: &str, entity: &str, to: &str, extra: &[&str]) -> (i32, Value) {
    let out = p
        .args([
            "lifecycle",
            "request",
            pipeline,
            "--entity",
            entity,
            "--to",
            to,
        ])
        .args(["--var", "spurBin=./checker.sh"])
        .args(extra)
        .json()
        .run();
    let answer = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code().unwrap_or(-1), answer)
}

fn show(p: &Spur, pipeline: &str, entity: &str) -> Value {
    p.args(["lifecycle", "show", pipeline, "--entity", entity])
        .json()
        .run()
        .success()
        .stdout_json()
}

fn task_status(p: &Spur, wbs: &str) -> Value {
    p.args(["task", "show", wbs])
        .json()
        .run()
        .success()
        .stdout_json()
}

/// Mirrors gobing-ai/spur `src/workflow/lifecycle-adapter.ts` (create-or-attach the run
/// `task:<wbs>`, re-seed it from the task's status, `requestTransition`) and ts-libs
/// `src/service.ts` `requestTransition` (no such transition, guard failed, commit), with
/// spur's done gate on the transition into `done` and `cancelled` never gated.
#[test]
fn task_lifecycle_reaches_done_when_driven_from_outside() {
    let p = project("task-lifecycle.yaml");
    let lc = "task-lifecycle.yaml";
    let (code, a) = request(&p, lc, "task:0592", "todo", &[]);
    assert_eq!((code, &a["outcome"]), (0, &Value::from("allowed")));
    assert_eq!(
        (&a["from"], &a["state"]),
        (&"backlog".into(), &"todo".into())
    );
    let (code, a) = request(&p, lc, "task:0592", "wip", &[]);
    assert_eq!(
        (code, &a["state"], &a["taskStatus"]),
        (0, &"wip".into(), &"wip".into())
    );

    // No edge wip → done: refused, naming where wip does go.
    let (code, a) = request(&p, lc, "task:0592", "done", &[]);
    assert_eq!(code, 1);
    assert_eq!(a["denied"]["reason"], "no-such-transition");
    assert_eq!(
        a["denied"]["detail"],
        r#"task-lifecycle has no transition "wip" → "done"; from "wip" it goes to: testing, blocked, cancelled"#
    );
    // The guard of wip → testing says no: refused, naming the edge and the guard.
    p.file("fail-checks", "");
    let (code, a) = request(&p, lc, "task:0592", "testing", &[]);
    assert_eq!((code, &a["state"]), (1, &"wip".into()));
    assert_eq!(a["denied"]["reason"], "guard-failed");
    assert_eq!(
        a["denied"]["detail"],
        "the guard of \"wip\" → \"testing\" did not pass: transition 2 (shell guard `${vars.spurBin} task check ${vars.wbs}`: exited with code 1)"
    );
    // The human output says the same on stderr, with the stable code.
    p.args([
        "lifecycle",
        "request",
        lc,
        "--entity",
        "task:0592",
        "--to",
        "testing",
    ])
    .args(["--var", "spurBin=./checker.sh"])
    .run()
    .code(1)
    .stderr_contains("spur::lifecycle::denied")
    .stderr_contains("transition 2 (shell guard");
    std::fs::remove_file(p.join("fail-checks")).unwrap();
    let (code, a) = request(&p, lc, "task:0592", "testing", &[]);
    assert_eq!((code, &a["state"]), (0, &"testing".into()));

    // testing → done: the guard passes, the done gate has no verdict: refused.
    let (code, a) = request(&p, lc, "task:0592", "done", &[]);
    assert_eq!(code, 1);
    assert_eq!(a["denied"]["reason"], "done-gate-denied");
    assert_eq!(a["doneGate"]["decision"], "deny");
    assert_eq!(a["taskStatus"], "testing");
    // With spur's PASS verdict: allowed, and the task is certified done.
    fixture_verdict_through_spur(&p, "0592", "examples/verdicts/pass.json");
    let (code, a) = request(&p, lc, "task:0592", "done", &[]);
    assert_eq!((code, &a["state"]), (0, &"done".into()), "{a:#}");
    assert_eq!(a["doneGate"]["decision"], "allow");
    let status = task_status(&p, "0592");
    assert_eq!(
        (&status["status"], &status["certification"]),
        (&"done".into(), &"certified".into())
    );

    // done is re-enterable (reopen), then cancelled: terminal, never gated.
    let (code, a) = request(&p, lc, "task:0592", "wip", &[]);
    assert_eq!((code, &a["taskStatus"]), (0, &"wip".into()));
    let (code, a) = request(&p, lc, "task:0592", "cancelled", &[]);
    assert_eq!((code, &a["state"]), (0, &"cancelled".into()));
    assert!(a.get("doneGate").is_none(), "{a:#}");

    // Every request is in the instance's journal, its guards with it.
    let view = show(&p, lc, "task:0592");
    assert_eq!(view["state"], "cancelled");
    let records = view["records"].as_array().unwrap();
    assert_eq!(events(records, "transition-requested").len(), 10);
    assert_eq!(events(records, "transition-denied").len(), 4);
    assert_eq!(events(records, "done-gate").len(), 2);
    assert_eq!(events(records, "transition").len(), 6);
}

/// Mirrors ts-libs `src/service.ts` `reseedRun` and the adapter's "file wins": a status
/// changed elsewhere (`spur task update`) moves the instance to it before the next request,
/// journaled as `reseeded`, never through a guard.
#[test]
fn the_instance_is_re_seeded_from_the_task_status() {
    let p = project("task-lifecycle.yaml");
    let lc = "task-lifecycle.yaml";
    request(&p, lc, "task:0592", "todo", &[]);
    p.args(["task", "update", "0592", "blocked"])
        .run()
        .success();
    let (code, a) = request(&p, lc, "task:0592", "wip", &[]);
    assert_eq!(code, 0, "{a:#}");
    assert_eq!(a["reseeded"], serde_json::json!(["todo", "blocked"]));
    assert_eq!(
        (&a["from"], &a["state"]),
        (&"blocked".into(), &"wip".into())
    );
    // A task's status is its ledger's: --from does not apply.
    p.args([
        "lifecycle",
        "request",
        lc,
        "--entity",
        "task:0592",
        "--to",
        "testing",
    ])
    .args(["--from", "testing"])
    .run()
    .code(2)
    .stderr_contains("spur::lifecycle::task-status");
}

/// Mirrors the adapter's `FEATURE_LIFECYCLE_PROFILE` (`feature:<id>`, guard var
/// `featureId`): the feature lifecycle from backlog to done, re-seeded from the feature
/// file's status given with `--from`. spur keeps no feature status, so no done gate.
#[test]
fn feature_lifecycle_reaches_done_when_driven_from_outside() {
    let p = project("feature-lifecycle.yaml");
    let lc = "feature-lifecycle.yaml";
    let (code, a) = request(&p, lc, "feature:F7", "active", &[]);
    assert_eq!((code, &a["state"]), (0, &"active".into()));
    p.file("fail-checks", "");
    let (code, a) = request(&p, lc, "feature:F7", "verifying", &[]);
    assert_eq!((code, &a["denied"]["reason"]), (1, &"guard-failed".into()));
    std::fs::remove_file(p.join("fail-checks")).unwrap();
    // The feature file went back to active by hand meanwhile... and says so: file wins.
    let (code, a) = request(&p, lc, "feature:F7", "verifying", &["--from", "active"]);
    assert_eq!((code, &a["state"]), (0, &"verifying".into()));
    assert!(a.get("reseeded").is_none());
    let (code, a) = request(&p, lc, "feature:F7", "done", &["--from", "verifying"]);
    assert_eq!((code, &a["state"]), (0, &"done".into()));
    assert!(a.get("doneGate").is_none() && a.get("taskStatus").is_none());
    // A state the pipeline does not have is a usage error, naming its states.
    p.args([
        "lifecycle",
        "request",
        lc,
        "--entity",
        "feature:F7",
        "--to",
        "shipped",
    ])
    .run()
    .code(2)
    .stderr_contains("spur::lifecycle::unknown-state")
    .stderr_contains("backlog, active, verifying, blocked, done, cancelled");
}

/// The adversary writes the instance's journal (a step can write any file): a careful
/// forger — one who read the key file — seals its records exactly as spur does. A
/// transition no request asked for, or into a task's done without the gate, is refused
/// before anything is decided; the task's status was never the journal's anyway. A
/// lifecycle journal put under `.spur/runs/` is not resumed as a run.
#[test]
fn a_forged_lifecycle_journal_is_refused_and_never_certifies() {
    const FORGE: &str = r#"
j="$1"; k=$(cat "$2"); shift 2
seq=$(tail -n 1 "$j" | sed 's/.*"seq":\([0-9]*\).*/\1/')
for event in "$@"; do
  seq=$((seq + 1))
  last=$(tail -n 1 "$j" | tr -d '\n')
  prev=$(printf '%s' "$last" | sed 's/.*"mac":"\([0-9a-f]*\)".*/\1/')
  id=$(printf '%s' "$last" | sed 's/.*"key":"\([0-9a-f]*\)".*/\1/')
  body="{\"v\":2,\"seq\":$seq,\"at\":\"2026-01-01T00:00:00.000Z\",\"prev\":\"$prev\",$event,\"key\":\"$id\""
  mac=$(printf '%s' "$body" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$k" | sed 's/^.*= //')
  printf '%s,"mac":"%s"}\n' "$body" "$mac" >> "$j"
done
"#;
    let lc = "task-lifecycle.yaml";
    let journal = ".spur/lifecycles/task-lifecycle/task/0592/journal.jsonl";
    let setup = || {
        let p = project(lc);
        p.file("forge.sh", FORGE);
        for to in ["todo", "wip", "testing"] {
            assert_eq!(request(&p, lc, "task:0592", to, &[]).0, 0);
        }
        p
    };
    let forge = |p: &Spur, events: &[&str]| {
        let out = std::process::Command::new("sh")
            .arg(p.join("forge.sh"))
            .arg(p.join(journal))
            .arg(p.key_path())
            .args(events)
            .status()
            .unwrap();
        assert!(out.success());
    };
    // Into done with a request and a passing guard, but no done-gate record.
    let p = setup();
    forge(
        &p,
        &[
            r#""event":"transition-requested","state":"testing","to":"done""#,
            r#""event":"guard-evaluated","state":"testing","transition":3,"to":"done","kind":"shell","passed":true,"durationUs":1"#,
            r#""event":"transition","transition":3,"from":"testing","to":"done","iteration":4"#,
        ],
    );
    let out = p
        .args([
            "lifecycle",
            "request",
            lc,
            "--entity",
            "task:0592",
            "--to",
            "wip",
        ])
        .run()
        .code(4)
        .stderr_contains("spur::journal::record-does-not-fit");
    assert!(
        out.stderr().contains("no done-gate record"),
        "{}",
        out.stderr()
    );
    assert_eq!(task_status(&p, "0592")["status"], "testing");

    // A transition no pending request asked for.
    let p = setup();
    forge(
        &p,
        &[r#""event":"transition","transition":4,"from":"testing","to":"blocked","iteration":4"#],
    );
    let out = p
        .args(["lifecycle", "show", lc, "--entity", "task:0592"])
        .run()
        .code(4);
    // miette wraps the long path of the protected state: read the words.
    let words = out
        .stderr()
        .split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ");
    assert!(words.contains("no pending request asked for"), "{words}");

    // Copied under .spur/runs/: `spur continue` refuses it.
    let p = setup();
    let run = ".spur/runs/20260101T000000Z-abcdef/journal.jsonl";
    p.file(run, p.read(journal));
    p.args([
        "continue",
        "20260101T000000Z-abcdef",
        "--allow-changed-pipeline",
    ])
    .run()
    .code(4)
    .stderr_contains("lifecycle instance, not of a run");
}
