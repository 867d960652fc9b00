//! Item 5: what the reference engine's validation refuses and spur did not: an initial state
//! that is terminal, an undeclared var in an action's options (also with no `vars:` block),
//! and vars named like the runtime builtins. spur keeps its spans and did-you-mean.

use serde_json::Value;

use crate::common::Spur;

fn check(yaml: &str) -> (i32, Value) {
    let p = Spur::new().file("p.yaml", yaml);
    let out = p.args(["check", "--format", "json", "p.yaml"]).run();
    (out.exit_code().unwrap_or(-1), out.stdout_json())
}

fn codes(json: &Value) -> Vec<&str> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect()
}

/// Mirrors ts-libs `src/config.ts` `validateStateMachine`: "Initial state … must not be a
/// terminal state".
#[test]
fn rejects_an_initial_state_that_is_terminal() {
    let (code, json) = check(
        "name: w\ninitialState: a\nterminalStates: [b, a]\nstates: [{id: a}, {id: b}]\ntransitions: []\n",
    );
    assert_eq!(code, 1);
    assert_eq!(
        codes(&json),
        [
            "spur::check::initial-terminal",
            "spur::check::unreachable-state"
        ]
    );
    assert_eq!(
        (json[0]["line"].as_u64(), json[0]["column"].as_u64()),
        (Some(2), Some(15))
    );
    // A state with no way out is not "declared terminal": the single-node workflow of the
    // reference's "R4: single-node continue workflow with no edges terminates done".
    let (code, json) = check("name: w\ninitialState: a\nstates: [{id: a}]\ntransitions: []\n");
    assert_eq!((code, codes(&json)), (0, vec![]));
}

/// Mirrors ts-libs `tests/config.test.ts` "W1: rejects an unknown vars reference in action
/// options" — with no `vars:` block at all — and keeps the did-you-mean of a typo.
#[test]
fn w1_rejects_an_unknown_vars_reference_in_action_options() {
    let (code, json) = check(
        r#"name: w
initialState: a
states:
  - id: a
    onEnter: [{kind: note, options: {message: "Implementing ${vars.nope}"}}]
  - {id: b}
terminalStates: [b]
transitions: [{from: a, to: b}]
"#,
    );
    assert_eq!(code, 1);
    assert_eq!(codes(&json), ["spur::check::undefined-var"]);
    assert_eq!(json[0]["severity"], "error");
    assert_eq!(
        (json[0]["line"].as_u64(), json[0]["column"].as_u64()),
        (Some(5), Some(61))
    );
    assert_eq!(
        json[0]["help"],
        r#"declare it with a default: `vars: { nope: "" }`"#
    );

    let (_, json) = check(
        r#"name: w
initialState: a
vars: {wbs: "1"}
states:
  - id: a
    onEnter: [{kind: note, options: {message: "${vars.wsb}"}}]
  - {id: b}
terminalStates: [b]
transitions: [{from: a, to: b, guard: {kind: shell, options: {command: "test ${vars.given} = 1"}}}]
"#,
    );
    assert_eq!(
        codes(&json),
        ["spur::check::undefined-var", "spur::check::undeclared-var"]
    );
    assert_eq!(json[0]["help"], "did you mean `${vars.wbs}`?");
    // In a guard's options (the reference checks none) it stays a warning: `--var` may give it.
    assert_eq!(json[1]["severity"], "warning");
}

/// Mirrors ts-libs `tests/config.test.ts` "W2: rejects a reserved variable name"
/// (`src/schema.ts` `RESERVED_VAR_NAMES`).
#[test]
fn w2_rejects_a_reserved_variable_name() {
    let (code, json) = check(
        "name: w\ninitialState: a\nvars: {task: x, wbs: '1', runtime: y}\nstates: [{id: a}]\ntransitions: []\n",
    );
    assert_eq!(code, 1);
    assert_eq!(
        codes(&json),
        ["spur::check::reserved-var", "spur::check::reserved-var"]
    );
    assert_eq!(
        (json[0]["line"].as_u64(), json[0]["column"].as_u64()),
        (Some(3), Some(8))
    );
    assert_eq!(
        json[0]["message"],
        "var name `task` is reserved for the built-in `${task}`"
    );
}
