//! Item 9: the `transition-flow` dialect — nodes with one action each, edges with a
//! condition, `initialNode`, `terminalNodes` — loads into spur's model (spans kept), is
//! checked, drawn and run with the reference driver's semantics.

use crate::common::{events, Spur};

const FLOW: &str = r#"
kind: transition-flow
name: review-flow
initialNode: draft
terminalNodes: [published]
vars: {verdict: "yes"}
nodes:
  - id: draft
    type: action
    action: {kind: shell, options: {command: 'echo drafted >> seen.txt'}}
  - id: review
    type: decision
    pause: true
  - id: relay
  - id: published
    action: {kind: note, options: {message: "published ${vars.verdict}"}}
  - id: rejected
edges:
  - {from: draft, to: review}
  - from: review
    to: relay
    condition: {kind: shell, options: {command: 'test "$verdict" = yes'}}
  - {from: review, to: rejected, description: otherwise}
  - {from: relay, to: published}
"#;

/// Mirrors ts-libs `packages/dual-workflow-engine/tests/transition-flow.test.ts`: "runs a
/// simple flow to completion", "node without action still transitions", "stops at terminal
/// node", "fails when no edge condition passes", "fails when action returns ok: false", and
/// `src/transition-flow.ts`'s order (action, pause, terminal, first passing edge; a resumed
/// node's action is not run again).
#[test]
fn transition_flow_runs_as_the_reference_driver_does() {
    let p = Spur::new();
    let paused = p.pipeline(FLOW).json().run().code(3).stdout_json();
    assert_eq!(paused["state"], "review");
    let run_id = paused["runId"].as_str().unwrap().to_owned();
    let done = p
        .args(["continue", &run_id])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(done["outcome"], "completed");
    assert_eq!(done["state"], "published");
    assert_eq!(done["iterations"], 3);
    assert_eq!(p.read("seen.txt"), "drafted\n");
    let records = p.trace(&run_id);
    let finished = events(&records, "action-finished");
    assert_eq!(finished.last().unwrap()["message"], "published yes");

    // A hostile value in a condition's shell text is one word, and routes to the other edge.
    let q = Spur::new();
    let paused = q
        .pipeline(FLOW)
        .var("verdict", "yes\" = yes -o \"$(touch pwned)")
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = paused["runId"].as_str().unwrap().to_owned();
    let out = q
        .args(["continue", &run_id])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "rejected");
    assert!(!q.exists("pwned"));

    // "stops at terminal node": one node, no edge, is done where it starts.
    let one = Spur::new();
    let out = one
        .pipeline(
            "kind: transition-flow\nname: t\ninitialNode: only\nnodes: [{id: only}]\nedges: []\n",
        )
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        (out["state"].as_str(), out["iterations"].as_u64()),
        (Some("only"), Some(0))
    );

    // "fails when no edge condition passes".
    let dead = Spur::new();
    let out = dead
        .pipeline(
            "kind: transition-flow\nname: d\ninitialNode: start\nnodes: [{id: start, action: {kind: note}}, {id: end}]\nedges: [{from: start, to: end, condition: {kind: never}}]\n",
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(
        (out["outcome"].as_str(), out["reason"].as_str()),
        (Some("failed"), Some("no-passing-transition"))
    );

    // "fails when action returns ok: false".
    let failing = Spur::new();
    let out = failing
        .pipeline(
            "kind: transition-flow\nname: f\ninitialNode: start\nnodes: [{id: start, action: {kind: shell, options: {command: 'exit 4'}}}, {id: next}]\nedges: [{from: start, to: next}]\n",
        )
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(
        (out["state"].as_str(), out["reason"].as_str()),
        (Some("start"), Some("action-failed"))
    );
}

/// Mirrors ts-libs `src/config.ts` `validateTransitionFlow` ("Edge target … is not
/// declared"), with spur's spans and did-you-mean, and `spur graph` of a flow.
#[test]
fn transition_flow_is_checked_with_spans_and_drawn() {
    let p = Spur::new();
    p.file(
        "bad.yaml",
        "kind: transition-flow\nname: b\ninitialNode: start\nnodes: [{id: start}, {id: end}]\nedges: [{from: start, to: ned}]\n",
    );
    let out = p
        .args(["check", "--format", "json", "bad.yaml"])
        .run()
        .code(1)
        .stdout_json();
    let finding = out
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "spur::check::unknown-state")
        .expect("the unknown edge target is found");
    assert_eq!(finding["help"], "did you mean `end`?");
    assert_eq!(
        (finding["line"].as_u64(), finding["column"].as_u64()),
        (Some(5), Some(27))
    );

    p.file("flow.yaml", FLOW);
    let drawn = p
        .args(["graph", "flow.yaml", "--format", "mermaid"])
        .run()
        .success();
    let mermaid = drawn.stdout();
    for line in [
        "state \"review (pause)\" as s1",
        "s0 --> s1",
        "s1 --> s2 : 1. shell#58;",
        "s1 --> s4 : 2. otherwise",
        "s3 --> [*]",
    ] {
        assert!(mermaid.contains(line), "{line} in {mermaid}");
    }
}
