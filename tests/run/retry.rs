//! `spur retry RUN`: a failed run goes on from where it failed, keeping what it did before;
//! the done gate and the journal's promises hold as for `spur continue`. And what a failed
//! run says: why, and what next.

use crate::common::{events, Spur};

/// Run ids in output, as `[RUN]`.
fn no_run_ids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, candidate) = rest.split_at(i);
        out.push_str(before);
        let id = candidate
            .get(..23)
            .filter(|c| spur_engine::run::RunId::parse(c).is_ok());
        match id {
            Some(_) => {
                out.push_str("[RUN]");
                rest = &candidate[23..];
            }
            None => {
                let mut chars = candidate.chars();
                out.extend(chars.next());
                rest = chars.as_str();
            }
        }
    }
    out.push_str(rest);
    out
}

/// Miette's wrapped lines as one.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ")
}

/// `implement` counts its visits; `test` fails until `fixed` exists.
const FLAKY: &str = r#"
name: flaky
initialState: implement
terminalStates: [done]
states:
  - id: implement
    onEnter: [{kind: shell, options: {command: "echo once >> implemented.txt"}}]
  - id: test
    description: The tests pass; a failure leaves its output in the action's log.
    onEnter:
      - kind: shell
        options: {command: 'echo "running 3 tests"; echo "test parse ... FAILED" >&2; test -f fixed'}
  - {id: done}
transitions:
  - {from: implement, to: test}
  - {from: test, to: done}
"#;

#[test]
fn a_failed_action_says_why_with_its_log_and_the_retry_command() {
    let p = Spur::new();
    let out = p.pipeline(FLAKY).run().code(1);
    insta::assert_snapshot!(no_run_ids(&out.stdout_redacted()), @r#"
    run [RUN]: failed at test — failed-check (action-failed, 1 transition)
      action 0 (shell) of "test" failed: shell command exited with code 1: test parse ... FAILED
      why (state test): The tests pass; a failure leaves its output in the action's log.
      action test onEnter[0] shell failed: shell command exited with code 1: test parse ... FAILED
        log: [PROTECTED]/runs/[RUN]/actions/0009-shell.log
        │ running 3 tests
        │ test parse ... FAILED
      next: fix the cause above, then `spur retry [RUN]` (goes on from test, running its onEnter again)
    "#);
    // The run id is said as the run starts, before anything runs.
    let first = out.stderr().lines().next().unwrap_or_default();
    assert_eq!(no_run_ids(first), "spur: running flaky (run [RUN])");
}

#[test]
fn a_failure_state_says_the_transitions_description_and_the_guards_that_did_not_pass() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: gated
initialState: precheck
terminalStates: [done, failed]
failureStates: [failed]
states:
  - id: precheck
    onEnter:
      - {kind: shell, onError: continue, options: {command: 'echo "no task file" >&2; exit 2'}}
  - {id: done}
  - {id: failed}
transitions:
  - {from: precheck, to: done, guard: {kind: file-exists, options: {path: task.md}}}
  - from: precheck
    to: failed
    description: No task file; write docs/tasks/<wbs>_*.md, then retry.
"#,
        )
        .json()
        .run()
        .code(1);
    let json = out.stdout_json();
    let why = &json["failure"];
    assert_eq!(why["state"], "precheck", "{json}");
    assert_eq!(why["retryFrom"], "precheck", "{json}");
    assert_eq!(
        why["descriptionOf"], "transition precheck → failed",
        "{json}"
    );
    assert_eq!(why["guards"][0]["to"], "done", "{json}");
    assert_eq!(why["guards"][0]["kind"], "file-exists", "{json}");
    assert_eq!(why["actions"][0]["exitCode"], 2, "{json}");
    assert_eq!(why["actions"][0]["tail"][0], "no task file", "{json}");
    let human = p.pipeline_run_again_human();
    insta::assert_snapshot!(no_run_ids(&p.redact(&human)), @r#"
    run [RUN]: failed at failed — failed-check (failure-state, 1 transition)
      reached failure state "failed"
      why (transition precheck → failed): No task file; write docs/tasks/<wbs>_*.md, then retry.
      guard precheck → done (file-exists) did not pass: [PROJECT]/task.md does not exist
      action precheck onEnter[0] shell failed: shell command exited with code 2: no task file
        log: [PROTECTED]/runs/[RUN]/actions/0003-shell.log
        │ no task file
      next: fix the cause above, then `spur retry [RUN]` (goes on from precheck, running its onEnter again)
    "#);
}

impl Spur {
    /// `spur run pipeline.yaml` once more, its stdout (human).
    fn pipeline_run_again_human(&self) -> String {
        self.args(["run", "pipeline.yaml"])
            .run()
            .code(1)
            .stdout()
            .to_owned()
    }
}

#[test]
fn retry_goes_on_from_the_failed_state_and_keeps_what_came_before() {
    let p = Spur::new();
    p.pipeline(FLAKY).run().code(1);
    let run_id = p.only_run_id();
    p.file("fixed", "");
    // By a unique prefix of its id.
    let out = p.args(["retry", &run_id[..20]]).json().run().success();
    let progress: Vec<String> = no_run_ids(out.stderr())
        .lines()
        .map(|l| match l.rfind(" (") {
            Some(i) if l.ends_with("s)") => format!("{} ([T])", &l[..i]),
            _ => l.to_owned(),
        })
        .collect();
    insta::assert_snapshot!(progress.join("\n"), @r"
    spur: retrying run [RUN] from test
    ● test (iteration 1)
      ✓ shell ([T])
      → test → done
    ● done (iteration 2)
    ");
    let out = out.stdout_json();
    assert_eq!(out["outcome"], "completed", "{out}");
    assert_eq!(out["runId"], run_id.as_str());
    // implement ran once: the retry re-entered test, not the start.
    assert_eq!(p.read("implemented.txt"), "once\n");
    let records = p.trace(&run_id);
    crate::common::assert_gap_free(&records);
    let retried = events(&records, "retried");
    assert_eq!(retried.len(), 1, "{records:?}");
    assert_eq!(retried[0]["state"], "test");
    assert_eq!(retried[0]["iteration"], 1);
    assert_eq!(events(&records, "run-finished").len(), 2);
    let runs = p.runs();
    assert_eq!(runs[0]["outcome"], "completed", "{runs:?}");
    // A finished run is not retried again.
    p.args(["retry", "latest"])
        .run()
        .code(4)
        .stderr_contains("spur::run::not-retryable");
}

#[test]
fn retry_after_a_failure_state_reenters_the_state_it_left_with_a_fresh_iteration_bound() {
    let p = Spur::new();
    // a counts its visits; it loops on itself until the fifth, which may leave for done.
    // The bound (3) stops the first attempt at a; the retry has a bound of its own.
    p.pipeline(
        r#"
name: loop
initialState: a
terminalStates: [done]
iterationBound: 3
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "echo x >> n"}}]
  - {id: done}
transitions:
  - {from: a, to: done, guard: {kind: shell, options: {command: 'test "$(wc -l < n)" -ge 5'}}}
  - {from: a, to: a}
"#,
    )
    .run()
    .code(1)
    .stdout_contains("iteration-bound-exceeded");
    let out = p
        .args(["retry", "latest"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "completed", "{out}");
    assert_eq!(out["iterations"], 4, "{out}");
    assert_eq!(p.read("n").lines().count(), 5);
}

/// `work` fails until `fixed` exists; `done` certifies task T9.
const TASK: &str = r#"
name: task
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars: {wbs: "T9"}
states:
  - id: work
    onEnter: [{kind: shell, options: {command: "test -f fixed"}}]
  - {id: done}
  - {id: failed}
transitions:
  - {from: work, to: done}
"#;

#[test]
fn a_retry_cannot_reach_done_without_the_gate() {
    let p = Spur::new();
    p.pipeline(TASK).run().code(1);
    p.file("fixed", "");
    // No verdict: the retry's way into done is the gate's, which denies.
    let out = p
        .args(["retry", "latest"])
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    let show = p.args(["task", "show", "T9", "--json"]).run();
    assert!(!show.stdout().contains("\"done\""), "{}", show.stdout());
}

#[test]
fn a_forged_retry_into_another_state_or_a_tampered_journal_is_refused() {
    // A retry record a forger sealed with the key, re-entering a state the run never
    // failed in: refused, naming the record.
    let p = Spur::new();
    p.pipeline(
        r#"
name: two
initialState: a
terminalStates: [done]
vars: {wbs: "T8"}
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "test -f fixed"}}]
  - id: b
  - {id: done}
transitions:
  - {from: a, to: b}
  - {from: b, to: done}
"#,
    )
    .run()
    .code(1);
    let run_id = p.only_run_id();
    let path = format!(".spur/runs/{run_id}/journal.jsonl");
    let journal = p.read(&path);
    let last = journal.lines().last().unwrap();
    let seq = journal.lines().count() + 1;
    let prev = spur_engine::store::seal::chain_value(last.as_bytes());
    let forged = p.sealed_by_forger(&format!(
        r#"{{"v":2,"seq":{seq},"at":"2026-01-01T00:00:00.000Z","prev":"{prev}","event":"retried","state":"b","iteration":0"#
    ));
    p.file(&path, format!("{journal}{forged}\n"));
    p.file("fixed", "");
    let out = p.args(["retry", &run_id]).run().code(4);
    let said = one_line(out.stderr());
    assert!(
        said.contains("spur::journal::record-does-not-fit")
            && said.contains(r#"it re-enters "b", but a retry of this run goes on from "a""#),
        "{said}"
    );
    // An edited record: the seal catches it.
    p.file(&path, journal.replace("\"state\":\"a\"", "\"state\":\"b\""));
    let out = p.args(["retry", &run_id]).run().code(4);
    assert!(out.stderr().contains("spur::journal"), "{}", out.stderr());
    assert!(!p.exists(".spur/tasks/T8.json"));
}

#[test]
fn a_paused_or_unknown_run_is_not_retried() {
    let p = Spur::new();
    p.pipeline("name: p\ninitialState: a\nstates: [{id: a, pause: true}, {id: b}]\ntransitions: [{from: a, to: b}]\n")
        .run()
        .code(3)
        .stdout_contains("resume with: spur continue");
    let out = p.args(["retry", "latest"]).run().code(4);
    let said = one_line(out.stderr());
    assert!(
        said.contains("spur::run::not-retryable")
            && said.contains("it is paused: `spur continue` resumes it"),
        "{said}"
    );
    p.args(["retry", "2099"])
        .run()
        .code(2)
        .stderr_contains("spur::run::ref-unknown");
}

#[test]
fn continue_of_a_failed_run_points_at_retry() {
    let p = Spur::new();
    p.pipeline(FLAKY).run().code(1);
    let run_id = p.only_run_id();
    let out = p.args(["continue", "latest"]).run().code(4);
    let said = one_line(out.stderr());
    assert!(
        said.contains("spur::run::finished")
            && said.contains(&format!(
                "`spur retry {run_id}` goes on from where it failed"
            )),
        "{said}"
    );
}
