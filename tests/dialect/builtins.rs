//! Item 3: the reference engine's runtime builtins in action options.

use crate::common::{events, Spur};

/// Mirrors ts-libs `tests/state-machine.test.ts` "resolves runtime builtin templates for
/// actions" (fields from `src/run-lifecycle.ts` `runtimeBuiltins`: `task` is the workflow
/// name, `node` the state, `run` the run id, `runtime` the dialect).
#[test]
fn resolves_runtime_builtin_templates_for_actions() {
    let p = Spur::new();
    let out = p
        .pipeline(
            r#"
name: builtin-wf
initialState: start
terminalStates: [done]
states:
  - id: start
    onEnter:
      - kind: note
        options:
          message: "${workflow}:${runId}:${task}:${state}:${node}:${iteration}:${run}:${runtime}"
      - kind: shell
        options:
          command: "echo ${task} ${node} ${runtime} > shell.txt"
  - {id: done}
transitions: [{from: start, to: done}]
"#,
        )
        .json()
        .run()
        .success()
        .stdout_json();
    let run_id = out["runId"].as_str().unwrap();
    let records = p.newest_trace();
    let finished = events(&records, "action-finished");
    assert_eq!(
        finished[0]["message"],
        format!("builtin-wf:{run_id}:builtin-wf:start:start:0:{run_id}:state-machine")
    );
    assert_eq!(p.read("shell.txt"), "builtin-wf start state-machine\n");
}

/// The builtins are bare names, as in the reference (whose resolver fails `${task.id}` at
/// run time): `spur check` says so at the placeholder.
#[test]
fn a_builtin_with_a_field_is_a_check_error_naming_the_bare_builtin() {
    let p = Spur::new().file(
        "p.yaml",
        r#"
name: fields
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{kind: note, options: {message: "task ${task.id}"}}]
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    let json = p
        .args(["check", "--format", "json", "p.yaml"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(json[0]["code"], "spur::check::template");
    assert_eq!(
        (json[0]["line"].as_u64(), json[0]["column"].as_u64()),
        (Some(7), Some(53))
    );
    assert_eq!(
        json[0]["help"],
        "`${task}` is a built-in value with no fields: write `${task}`"
    );
}
