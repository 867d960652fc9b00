//! The per-task run lock.

use crate::common::Spur;

#[test]
fn a_second_run_of_the_same_task_is_refused_with_exit_4() {
    let p = Spur::new();
    p.file(
        "inner.yaml",
        "name: inner\ninitialState: a\nvars: {wbs: \"42\"}\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
    );
    // The outer run holds the lock of task 42 while its action starts a second run of 42.
    let out = p.pipeline(r#"
name: outer
initialState: a
terminalStates: [b]
vars: {wbs: "42"}
states:
  - id: a
    onEnter:
      - kind: shell
        options: {command: '"$SPUR_BIN" run inner.yaml --state-dir "$SPUR_STATE_DIR" 2> inner.err; echo $? > inner.code'}
  - {id: b}
transitions: [{from: a, to: b, guard: {kind: always}}]
"#).args(["--force-done", "--reason", "test"]).json().run().success().stdout_json();
    assert_eq!(out["state"], "b");
    assert_eq!(p.read("inner.code"), "4\n");
    assert!(
        p.read("inner.err").contains("spur::run::locked"),
        "{}",
        p.read("inner.err")
    );
    // Released when the run ends.
    p.args(["run", "inner.yaml", "--force-done", "--reason", "test"])
        .json()
        .run()
        .success();
}
