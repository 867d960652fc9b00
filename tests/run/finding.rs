//! Finding runs (issue 22, items 6 and 7): `spur runs --task --status` with a reason
//! column, `spur trace --follow`, a `--state-dir` before the subcommand, `--json` on `check`
//! and `graph`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::{bin, isolate, Spur};

const FAILS: &str = "name: f\ninitialState: a\nvars: {wbs: \"T1\"}\nstates:\n  - id: a\n    onEnter: [{kind: shell, options: {command: 'exit 1'}}]\n  - {id: b}\ntransitions: [{from: a, to: b}]\n";
const PAUSES: &str = "name: p\ninitialState: a\nstates: [{id: a, pause: true}, {id: b}]\ntransitions: [{from: a, to: b}]\n";

#[test]
fn runs_filters_by_task_and_status_and_says_what_stopped_each() {
    let p = Spur::new()
        .file("fails.yaml", FAILS)
        .file("pauses.yaml", PAUSES);
    p.args(["run", "fails.yaml"]).run().code(1);
    p.args(["run", "pauses.yaml"]).run().code(3);
    let out = p.args(["runs"]).run().success();
    let lines: Vec<String> = out
        .stdout()
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            // RUN … STARTED vary: keep the rest.
            cols.get(1..cols.len().saturating_sub(1))
                .unwrap_or_default()
                .join(" ")
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r"
    PIPELINE WBS OUTCOME STATE REASON COST
    p - paused a paused -
    f T1 failed a action-failed -
    ");
    let failed = p
        .args(["runs", "--status", "failed"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(failed.as_array().map(Vec::len), Some(1), "{failed}");
    assert_eq!(failed[0]["reason"], "action-failed", "{failed}");
    let task = p
        .args(["runs", "--task", "T1"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(task.as_array().map(Vec::len), Some(1), "{task}");
    assert_eq!(task[0]["pipeline"], "f", "{task}");
    p.args(["runs", "--task", "T2"])
        .run()
        .success()
        .stdout_contains("no such runs");
    p.args(["runs", "--status", "sideways"]).run().code(2);
}

#[test]
fn trace_follow_prints_records_as_the_run_writes_them_until_it_finishes() {
    let p = Spur::new().file("pauses.yaml", PAUSES);
    p.args(["run", "pauses.yaml"]).run().code(3);
    let mut follower = Command::new(bin());
    follower
        .current_dir(p.path())
        .args(["trace", "latest", "--follow"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped());
    isolate(&mut follower, p.home());
    let mut child = follower.spawn().expect("spawn spur trace --follow");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // The records so far, up to the pause: read before the run goes on.
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("a line");
        let paused = line.contains(" paused ");
        seen.push(line);
        if paused {
            break;
        }
    }
    p.args(["continue", "latest"]).run().success();
    // The follower prints the rest and exits at run-finished.
    seen.extend(lines.map(|l| l.expect("a line")));
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    let events: Vec<&str> = seen
        .iter()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(
        events,
        [
            "run-started",
            "state-entered",
            "paused",
            "resumed",
            "guard-evaluated",
            "transition",
            "state-entered",
            "run-finished"
        ],
        "{seen:#?}"
    );
}

#[test]
fn a_state_dir_before_the_subcommand_is_every_subcommands() {
    let p = Spur::new().file("pauses.yaml", PAUSES);
    p.args(["--state-dir", "elsewhere/.spur", "run", "pauses.yaml"])
        .run()
        .code(3);
    assert!(p
        .protected_of(&p.join("elsewhere/.spur"))
        .join("runs")
        .exists());
    assert!(!p.exists(".spur/runs"));
    let runs = p
        .args(["--state-dir=elsewhere/.spur", "runs", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    // SPUR_STATE_DIR says the same; the subcommand's own --state-dir wins over both.
    let none = p
        .args(["runs", "--json", "--state-dir", "nowhere"])
        .env("SPUR_STATE_DIR", "elsewhere/.spur")
        .run()
        .success()
        .stdout_json();
    assert_eq!(none, serde_json::json!([]));
    p.args(["continue", "latest"])
        .env("SPUR_STATE_DIR", "elsewhere/.spur")
        .run()
        .success();
}

#[test]
fn check_and_graph_take_json() {
    let p = Spur::new().file(
        "p.yaml",
        "name: p\ninitialState: a\nstates: [{id: a}, {id: b}, {id: lost}]\ntransitions: [{from: a, to: b}]\n",
    );
    let findings = p.args(["check", "p.yaml", "--json"]).run().stdout_json();
    assert!(
        findings.as_array().is_some_and(|f| f
            .iter()
            .any(|d| d["code"] == "spur::check::unreachable-state")),
        "{findings}"
    );
    let graph = p
        .args(["graph", "p.yaml", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(graph["initialState"], "a", "{graph}");
    p.args(["graph", "p.yaml", "--json", "--format", "dot"])
        .run()
        .code(2);
}

#[test]
fn key_init_and_schema_take_json_too() {
    let p = Spur::new();
    let made = p
        .args(["key", "init", "--json"])
        .run()
        .success()
        .stdout_json();
    let id = made["keyId"].as_str().unwrap_or_default();
    assert_eq!(id.len(), 16, "{made}");
    let shown = p
        .args(["key", "show", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(shown["keyId"], id, "{shown}");
    let schema = p.args(["schema", "--json"]).run().success().stdout_json();
    assert!(schema["$schema"].is_string(), "{schema}");
}
