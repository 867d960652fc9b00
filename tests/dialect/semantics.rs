//! Items 2, 4 and 10: the last action result carries into a state with no actions, a
//! `pause: true` terminal pauses, and a run makes `.spur/run/` before its first step.

use crate::common::Spur;

/// Mirrors ts-libs `tests/state-machine.test.ts` "continued onExit failure remains visible
/// to the next state guard": `middle` runs no action, so `action-ok` there reads the failed
/// onExit of `start` — also after a pause and `spur continue` (the journal carries it).
#[test]
fn continued_on_exit_failure_remains_visible_to_the_next_state_guard() {
    let yaml = |exit: &str, pause: bool| {
        format!(
            r#"
name: exit-continue
initialState: start
terminalStates: [done, failed-before]
defaultOnError: continue
states:
  - id: start
    onExit: [{{kind: shell, options: {{command: "{exit}"}}}}]
  - {{id: middle, pause: {pause}}}
  - {{id: done}}
  - {{id: failed-before}}
transitions:
  - {{from: start, to: middle}}
  - {{from: middle, to: done, guard: {{kind: action-ok}}}}
  - {{from: middle, to: failed-before}}
"#
        )
    };
    let p = Spur::new();
    let out = p
        .pipeline(&yaml("exit 3", false))
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "failed-before");
    let p = Spur::new();
    let out = p
        .pipeline(&yaml("true", false))
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "done");

    for (exit, end) in [("exit 3", "failed-before"), ("true", "done")] {
        let p = Spur::new();
        let paused = p
            .pipeline(&yaml(exit, true))
            .json()
            .run()
            .code(3)
            .stdout_json();
        assert_eq!(paused["state"], "middle");
        let run_id = paused["runId"].as_str().unwrap();
        let out = p
            .args(["continue", run_id])
            .json()
            .run()
            .success()
            .stdout_json();
        assert_eq!(out["state"], end, "the resumed run lost the carried result");
    }
}

/// Mirrors ts-libs `src/state-machine.ts` (the loop checks `pause` right after onEnter,
/// before the terminal check) and `tests/pause-resume.test.ts` "pauses at a state with
/// pause: true": a terminal with `pause: true` pauses there; `spur continue` ends the run.
#[test]
fn pauses_at_a_terminal_state_with_pause_true() {
    let p = Spur::new();
    let paused = p
        .pipeline(
            r#"
name: pause-terminal
initialState: a
terminalStates: [end]
states:
  - {id: a}
  - id: end
    pause: true
    onEnter: [{kind: shell, options: {command: "echo entered >> trail.txt"}}]
transitions: [{from: a, to: end}]
"#,
        )
        .json()
        .run()
        .code(3)
        .stdout_json();
    assert_eq!(paused["outcome"], "paused");
    assert_eq!(paused["state"], "end");
    let run_id = paused["runId"].as_str().unwrap();
    let out = p
        .args(["continue", run_id])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "completed");
    assert_eq!(out["state"], "end");
    assert_eq!(p.read("trail.txt"), "entered\n", "onEnter runs once");
}

/// Mirrors the corpus `pr-review.yaml`, whose first step writes under `.spur/run/` before
/// any spur step has made it: a run makes the directory before its first step.
#[test]
fn a_run_creates_spur_run_before_its_first_step() {
    let p = Spur::new();
    p.pipeline(
        r#"
name: writes-early
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{kind: shell, options: {command: "echo early > .spur/run/early.txt"}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    )
    .run()
    .success();
    assert_eq!(p.read(".spur/run/early.txt"), "early\n");
}
