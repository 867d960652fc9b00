//! The TypeScript spur's own pipelines run natively (issue 20, "Must show"): each of the
//! eight meant to run start to end reaches a success terminal, and a failure (or
//! cancelled) terminal, through the real `spur` — every spur verb the pipelines' steps call
//! is the real one — with stand-in agents: spur's `stub` for the reference's slash commands
//! and `tests/fixtures/corpus/scripted-agent.sh` for the steps that must author a file.
//! The two lifecycles reach done through `spur task update` and `spur feature update`.
//!
//! The corpus is found as the CI finds it: `shared/corpus/spur-workflows` beside the
//! checkout (`../shared/corpus`, or higher up for a worktree), else the byte-identical copy
//! in `examples/corpus`. Which pipeline reached which terminal is listed in
//! `book/src/compatibility.md`.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{repo_path, Spur};

/// `<ancestor>/shared/corpus/spur-workflows`, nearest first; else `examples/corpus`.
fn corpus() -> PathBuf {
    let root = repo_path(".");
    for dir in root.ancestors() {
        let candidate = dir.join("shared/corpus/spur-workflows");
        if candidate.join("task-pipeline.yaml").is_file() {
            return candidate;
        }
    }
    repo_path("examples/corpus")
}

fn pipeline(name: &str) -> String {
    corpus().join(name).display().to_string()
}

const CONFIG: &str = "\
agents:
  stub: { preset: stub }
  omp: { preset: stub, command: \"sh .spur-agent.sh\" }
  auto: { preset: stub, command: \"sh .spur-agent.sh\" }
defaults:
  agent: stub
doneGate:
  externalVerdicts: allow
";

/// A git repository made by `spur init --agent stub`, its agents the stand-ins, the
/// corpus lifecycles installed where the reference loads them, all committed.
fn project() -> Spur {
    let p = Spur::new();
    p.git(&["init", "-q"]);
    p.args(["init", "--agent", "stub"]).run().success();
    p.file(".spur/config.yaml", CONFIG);
    p.fixture("tests/fixtures/corpus/scripted-agent.sh", ".spur-agent.sh");
    for lifecycle in [
        "task-lifecycle.yaml",
        "feature-lifecycle.yaml",
        "wayfinder-resolution.yaml",
    ] {
        let text = std::fs::read(corpus().join(lifecycle)).unwrap();
        p.file(&format!(".spur/workflows/{lifecycle}"), text);
    }
    p.git(&["add", "-A"]);
    p.git(&["commit", "-qm", "init"]);
    p
}

/// `spur run PIPELINE ARGS… --json`: (exit code, outcome).
fn run(p: &Spur, name: &str, args: &[&str]) -> (i32, Value) {
    let out = p.args(["run", &pipeline(name)]).args(args).json().run();
    let json: Value = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code().unwrap_or(-1), json)
}

fn answer(p: &Spur, run_id: &Value, answer: &str) -> (i32, Value) {
    let out = p
        .args(["continue", run_id.as_str().unwrap(), "--answer", answer])
        .json()
        .run();
    let json: Value = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code().unwrap_or(-1), json)
}

/// (state, terminal reason) of an outcome.
fn ended(json: &Value) -> (&str, &str) {
    (
        json["state"].as_str().unwrap_or("?"),
        json["terminalReason"].as_str().unwrap_or("?"),
    )
}

/// A task like `spur init`'s sample, numbered `wbs`, whose criterion runs `command`.
fn task(p: &Spur, wbs: &str, command: &str) {
    let sample = p.read("docs/tasks/0001_say-hello.md");
    let text = sample.replace("0001", wbs).replace(
        &format!("grep -q 'hello from task {wbs}' NOTES.md"),
        command,
    );
    p.file(&format!("docs/tasks/{wbs}_say-hello.md"), text);
}

/// Task 0700 (a file that passes `spur task check --as done`) of `feature`, done through
/// the gate by an audited override.
fn done_task(p: &Spur, feature: &str) {
    let text = std::fs::read_to_string(repo_path("tests/fixtures/lifecycle/0700_ship-it.md"))
        .unwrap()
        .replace("feature_id: F1", &format!("feature_id: {feature}"));
    p.file("docs/tasks/0700_ship-it.md", text);
    p.file("hello.txt", "hello\n");
    p.args([
        "task",
        "update",
        "0700",
        "done",
        "--no-lifecycle",
        "--force-done",
        "--reason",
        "corpus test",
    ])
    .run()
    .success();
}

#[test]
fn basic_reaches_done_and_failed() {
    let p = project();
    let (code, json) = run(&p, "basic.yaml", &["--var", "qualityGateCmd=true"]);
    assert_eq!((code, ended(&json)), (0, ("done", "done")), "{json}");
    let (code, json) = run(&p, "basic.yaml", &["--var", "qualityGateCmd=false"]);
    assert_eq!(
        (code, ended(&json)),
        (1, ("failed", "failed-check")),
        "{json}"
    );
}

#[test]
fn decision_routing_reaches_published_and_cancelled() {
    let p = project();
    let (code, paused) = run(&p, "decision-routing-example.yaml", &[]);
    assert_eq!(
        (code, paused["state"].as_str()),
        (3, Some("humanGate")),
        "{paused}"
    );
    let (code, json) = answer(&p, &paused["runId"], "yes");
    assert_eq!((code, ended(&json)), (0, ("published", "done")), "{json}");
    let (_, paused) = run(&p, "decision-routing-example.yaml", &[]);
    let (code, json) = answer(&p, &paused["runId"], "cancel");
    assert_eq!((code, ended(&json).1), (0, "cancelled"), "{json}");
    assert_eq!(json["state"], "cancelled");
}

#[test]
fn planning_reaches_handoff_and_its_cancel_edges_are_shadowed() {
    let p = project();
    let (code, json) = run(
        &p,
        "planning-pipeline.yaml",
        &["--var", "profile=auto", "--var", "design_approved=true"],
    );
    assert_eq!((code, ended(&json)), (0, ("handoff", "done")), "{json}");
    let (code, paused) = run(
        &p,
        "planning-pipeline.yaml",
        &["--var", "design_approved=false"],
    );
    assert_eq!(
        (code, paused["state"].as_str()),
        (3, Some("phasing")),
        "{paused}"
    );
    // Every edge into `cancelled` is shadowed by an earlier unconditional one (`spur
    // check` warns on both): an operator's cancel at phasing and at the design approval
    // still ends at handoff, as in the reference. No failure terminal is reachable.
    let (code, paused) = answer(&p, &paused["runId"], "cancel");
    assert_eq!(
        (code, paused["state"].as_str()),
        (3, Some("design-approval")),
        "{paused}"
    );
    let (_, json) = answer(&p, &paused["runId"], "cancel");
    assert_eq!(ended(&json), ("handoff", "done"), "{json}");
}

const TASK_PIPELINE_VARS: [&str; 8] = [
    "--var",
    "profile=auto",
    "--var",
    "gateProbeCmd=true",
    "--var",
    "formatCmd=true",
    "--var",
    "qualityGateMaxFixAttempts=1",
];

#[test]
fn task_pipeline_reaches_done_through_the_lifecycle_and_the_gate_and_failed() {
    let p = project();
    let mut args = TASK_PIPELINE_VARS.to_vec();
    // The quality gate is `spur verify`: the done gate wants the task's evidence at this tree.
    args.extend([
        "--var",
        "wbs=0001",
        "--var",
        "qualityGateCmd=$spurBin verify --wbs $wbs",
    ]);
    let (code, json) = run(&p, "task-pipeline.yaml", &args);
    assert_eq!((code, ended(&json)), (0, ("done", "done")), "{json}");
    assert_eq!(json["doneGate"]["decision"], "allow");
    let why = p
        .args(["task", "why", "0001", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(why["certification"], "certified");
    let shown = p
        .args([
            "lifecycle",
            "show",
            ".spur/workflows/task-lifecycle.yaml",
            "--entity",
            "task:0001",
        ])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        shown["state"], "done",
        "the task's lifecycle moved into done"
    );
    // A red quality gate: one fix attempt, then failed.
    task(&p, "0002", "grep -q 'hello from task 0002' NOTES.md");
    let mut args = TASK_PIPELINE_VARS.to_vec();
    args.extend(["--var", "wbs=0002", "--var", "qualityGateCmd=false"]);
    let (code, json) = run(&p, "task-pipeline.yaml", &args);
    assert_eq!(
        (code, json["state"].as_str()),
        (1, Some("failed")),
        "{json}"
    );
}

#[test]
fn feature_dev_reaches_done_and_failed() {
    let p = project();
    // Feature A, filled, with its one task done through the gate (forced: audited).
    p.args(["feature", "create", "Greeting"]).run().success();
    p.file("goal.md", "Greet.\n");
    p.file("scope.md", "- In: NOTES.md\n");
    p.args([
        "feature",
        "update",
        "A",
        "--section",
        "Goal",
        "--from-file",
        "goal.md",
    ])
    .run()
    .success();
    p.args([
        "feature",
        "update",
        "A",
        "--section",
        "Scope",
        "--from-file",
        "scope.md",
    ])
    .run()
    .success();
    done_task(&p, "A");
    p.args(["feature", "update", "A", "active"]).run().success();
    let (code, json) = run(
        &p,
        "feature-dev.yaml",
        &["--var", "featureId=A", "--var", "profile=auto"],
    );
    assert_eq!((code, ended(&json)), (0, ("done", "done")), "{json}");
    // Feature B, active with an empty Goal: `feature check --strict` fails.
    p.args(["feature", "create", "Empty"]).run().success();
    p.args(["feature", "update", "B", "active"]).run().success();
    let (code, json) = run(
        &p,
        "feature-dev.yaml",
        &["--var", "featureId=B", "--var", "profile=auto"],
    );
    assert_eq!(
        (code, json["state"].as_str()),
        (1, Some("failed")),
        "{json}"
    );
    // The feature lifecycle (the corpus file) reaches done through `spur feature update`.
    p.args(["feature", "update", "A", "verifying"])
        .run()
        .success();
    p.args(["feature", "update", "A", "done"]).run().success();
    assert!(p
        .read("docs/features/A_greeting.md")
        .contains("\nstatus: done\n"));
}

#[test]
fn idea_reaches_handoff_and_cancelled() {
    let p = project();
    let (code, json) = run(
        &p,
        "idea-pipeline.yaml",
        &[
            "--var",
            "idea=say hello",
            "--var",
            "profile=auto",
            "--var",
            "idea_approved=true",
            "--var",
            "design=skip",
        ],
    );
    assert_eq!((code, ended(&json)), (0, ("handoff", "done")), "{json}");
    // The batch it decomposed into exists as a task of the feature it created.
    let fid = p.read(".spur/run/idea-feature-id.txt").trim().to_owned();
    let list = p
        .args(["task", "list", "--json"])
        .run()
        .success()
        .stdout_json();
    assert!(list.to_string().contains(&fid), "{list}");
    // Without approval: the idea is evaluated and the operator cancels.
    let (code, paused) = run(&p, "idea-pipeline.yaml", &["--var", "idea=say goodbye"]);
    assert_eq!(code, 3, "{paused}");
    let (_, json) = answer(&p, &paused["runId"], "cancel");
    assert_eq!(json["state"], "cancelled", "{json}");
}

#[test]
fn wayfinder_reaches_done_and_failed() {
    let p = project();
    task(&p, "0003", "test -d docs");
    let auto = ["--var", "profile=auto", "--var", "approval=auto"];
    let mut args = auto.to_vec();
    args.extend(["--var", "wbs=0003"]);
    let (code, json) = run(&p, "wayfinder-resolution.yaml", &args);
    assert_eq!((code, ended(&json)), (0, ("done", "done")), "{json}");
    // The task lifecycle (the corpus file) reached done through `spur task update`.
    let why = p
        .args(["task", "why", "0003", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(why["done"], true);
    // A criterion that does not hold: verdict FAIL, the operator says no.
    task(&p, "0004", "test -f no-such-file");
    let mut args = auto.to_vec();
    args.extend(["--var", "wbs=0004"]);
    let (code, paused) = run(&p, "wayfinder-resolution.yaml", &args);
    assert_eq!(
        (code, paused["state"].as_str()),
        (3, Some("approve")),
        "{paused}"
    );
    let (code, json) = answer(&p, &paused["runId"], "no");
    assert_eq!(
        (code, json["state"].as_str()),
        (1, Some("failed")),
        "{json}"
    );
    assert_eq!(
        p.args(["task", "why", "0004"]).run().code(1).exit_code(),
        Some(1)
    );
}

#[test]
fn wrapup_reaches_done_and_skipped() {
    let p = project();
    done_task(&p, "F1");
    let (code, json) = run(
        &p,
        "wrapup-pipeline.yaml",
        &["--var", "tasks=[\"0700\"]", "--var", "mode=fast"],
    );
    assert_eq!((code, ended(&json)), (0, ("done", "done")), "{json}");
    let (code, json) = run(&p, "wrapup-pipeline.yaml", &["--var", "tasks=[]"]);
    assert_eq!(
        (code, json["state"].as_str()),
        (0, Some("skipped")),
        "{json}"
    );
    let (code, json) = run(&p, "wrapup-pipeline.yaml", &["--var", "tasks=not json"]);
    assert_eq!(
        (code, json["state"].as_str()),
        (1, Some("failed")),
        "{json}"
    );
}
