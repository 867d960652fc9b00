//! `--dry-run`, `spur runs` and `spur trace`.

use crate::common::Spur;

#[test]
fn dry_run_runs_nothing_and_names_the_first_branch_point() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: dry
initialState: a
terminalStates: [done, failed]
failureStates: [failed]
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "touch ran.txt"}}]
  - id: b
    pause: true
  - id: check
  - {id: done}
  - {id: failed}
transitions:
  - {from: a, to: failed, guard: {kind: never}}
  - {from: a, to: b}
  - {from: b, to: check, guard: {kind: all, options: {guards: [{kind: always}]}}}
  - {from: check, to: done, description: passed, guard: {kind: shell, options: {command: "touch guard-ran.txt"}}}
  - {from: check, to: failed}
"#,
        )
        .arg("--dry-run")
        .run()
        .success();
    insta::assert_snapshot!(out.stdout(), @r"
    dry run of dry (no action or guard was run)
      a: shell
      b [pauses]
      check
    branch point at check: decided only by a real run, in this order:
      → done if shell guard passes — passed
      → failed (no guard: taken when no transition before it is)
    ");
    assert!(!p.join("ran.txt").exists() && !p.join("guard-ran.txt").exists());
    assert!(!p.join(".spur/runs").exists());
}

#[test]
fn runs_lists_newest_first_and_trace_shows_gap_free_seq() {
    let p = Spur::new();
    let yaml =
        "name: r\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n";
    let first = p.pipeline(yaml).json().run().stdout_json();
    let with_task = "name: r\ninitialState: a\nvars: {wbs: \"0000\"}\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n";
    let second = p
        .pipeline(with_task)
        .var("wbs", "0001")
        .json()
        .run()
        .stdout_json();
    let runs = p.runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["runId"], second["runId"]);
    assert_eq!(runs[1]["runId"], first["runId"]);
    let keys: Vec<&String> = runs[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "outcome",
            "pipeline",
            "reason",
            "runId",
            "startedAt",
            "state",
            "usage",
            "wbs"
        ]
    );
    assert_eq!(runs[1]["outcome"], "completed");
    assert_eq!(runs[0]["wbs"], "0001");
    let records = p.newest_trace();
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(records[0]["event"], "run-started");
    assert_eq!(records.last().unwrap()["event"], "run-finished");
    p.args(["trace", "20990101T000000Z-000000"])
        .json()
        .run()
        .code(2);
}

/// `spur trace`'s human lines with the time stamps and durations as `[T]`, the run id as
/// `[RUN]`.
fn trace_lines(text: &str, run_id: &str) -> String {
    text.replace(run_id, "[RUN]")
        .lines()
        .map(|l| {
            let mut parts = l.trim_start().splitn(3, ' ');
            let (seq, _at, rest) = (
                parts.next().unwrap_or_default(),
                parts.next(),
                parts.next().unwrap_or_default(),
            );
            let rest = match rest.find(" in ") {
                Some(i) => {
                    let after = &rest[i + 4..];
                    let end = after.find([':', ' ']).unwrap_or(after.len());
                    format!("{} in [T]{}", &rest[..i], &after[end..])
                }
                None => rest.to_owned(),
            };
            // A process group id differs on every run.
            let rest = match rest.split_once("process group ") {
                Some((before, _pgid)) => format!("{before}process group [PGID]"),
                None => rest,
            };
            format!("{seq:>4} [T] {rest}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn trace_shows_each_guards_reason_action_durations_and_log_paths() {
    let p = Spur::new();
    p.pipeline(
        r#"
name: traced
initialState: build
terminalStates: [done, failed]
failureStates: [failed]
states:
  - id: build
    onEnter:
      - {kind: shell, onError: continue, options: {command: "echo compiling; exit 3"}}
  - {id: done}
  - {id: failed}
transitions:
  - {from: build, to: done, guard: {kind: file-exists, options: {path: out.bin}}}
  - {from: build, to: failed}
"#,
    )
    .run()
    .code(1);
    let run_id = p.only_run_id();
    let out = p.args(["trace", "latest"]).run().success();
    insta::assert_snapshot!(trace_lines(&p.redact(out.stdout()), &run_id), @r"
       1 [T] run-started      traced
       2 [T] state-entered    build (iteration 0)
       3 [T] action-started   build[0] shell (log [PROTECTED]/runs/[RUN]/actions/0003-shell.log)
       4 [T] action-process   build[0] process group [PGID]
       5 [T] action-finished  build[0] shell failed in [T]: shell command exited with code 3
       6 [T] guard-evaluated  build → done file-exists did not pass: [PROJECT]/out.bin does not exist
       7 [T] guard-evaluated  build → failed none passed
       8 [T] transition       build → failed (#1)
       9 [T] state-entered    failed (iteration 1)
      10 [T] run-finished     failed at failed (failed-check, failure-state)
    ");
}
