//! Shell steps, agent steps and shell guards that set no `timeoutMs` get a default: built
//! in, or `defaults:` of `.spur/config.yaml`; the step's own `timeoutMs` wins over both.

use serde_json::Value;

use crate::common::{events, Spur};

/// A one-action pipeline: `action` on entering `a`, then `b` (or `other` when `guard` fails).
fn pipeline(action: &str, guard: &str) -> String {
    format!(
        r#"
name: timeouts
initialState: a
terminalStates: [b, other]
vars: {{agent: stub}}
states:
  - id: a
    onEnter:
      - {action}
  - {{id: b}}
  - {{id: other}}
transitions:
  - {{from: a, to: b, guard: {guard}}}
  - {{from: a, to: other}}
"#
    )
}

fn started(p: &Spur) -> Value {
    events(&p.newest_trace(), "action-started")[0].clone()
}

#[test]
fn a_hanging_shell_step_fails_at_the_configured_default() {
    let p = Spur::new().file(".spur/config.yaml", "defaults:\n  timeoutMs: 300\n");
    let run = p
        .pipeline(&pipeline(
            "{kind: shell, options: {command: 'sleep 1000'}}",
            "{kind: always}",
        ))
        .json()
        .run()
        .code(1);
    assert_eq!(run.stdout_json()["terminalReason"], "failed-timeout");
    assert_eq!(started(&p)["timeoutMs"], 300);
    let finished = events(&p.newest_trace(), "action-finished")[0].clone();
    assert_eq!(finished["timedOut"], true);
}

#[test]
fn the_steps_own_timeout_wins_over_the_config() {
    let p = Spur::new().file(
        ".spur/config.yaml",
        "defaults:\n  timeoutMs: 300\n  shell: {timeoutMs: 400}\n",
    );
    p.pipeline(&pipeline(
        "{kind: shell, options: {command: 'true', timeoutMs: 60000}}",
        "{kind: always}",
    ))
    .run()
    .success();
    assert_eq!(started(&p)["timeoutMs"], 60000);
    // And the other way: a short timeout of its own ends a step the config would let run.
    let p = Spur::new().file(".spur/config.yaml", "defaults:\n  timeoutMs: 600000\n");
    let run = p
        .pipeline(&pipeline(
            "{kind: shell, options: {command: 'sleep 1000', timeoutMs: 200}}",
            "{kind: always}",
        ))
        .json()
        .run()
        .code(1);
    assert_eq!(run.stdout_json()["terminalReason"], "failed-timeout");
}

#[test]
fn the_built_in_defaults_are_recorded_when_nothing_is_set() {
    let p = Spur::new();
    p.pipeline(&pipeline(
        "{kind: shell, options: {command: 'true'}}",
        "{kind: always}",
    ))
    .run()
    .success();
    assert_eq!(started(&p)["timeoutMs"], 600_000);
    let p = Spur::new().file(".spur/config.yaml", "agents:\n  stub: {command: 'true'}\n");
    p.pipeline(&pipeline(
        "{kind: agent.run, options: {agent: '${vars.agent}'}}",
        "{kind: always}",
    ))
    .run()
    .success();
    assert_eq!(started(&p)["timeoutMs"], 3_600_000);
    // A kind's own default beats the common one.
    let p = Spur::new().file(
        ".spur/config.yaml",
        "agents:\n  stub: {command: 'true'}\ndefaults:\n  timeoutMs: 1000\n  agent: {timeoutMs: 2000}\n",
    );
    p.pipeline(&pipeline(
        "{kind: agent.run, options: {agent: '${vars.agent}'}}",
        "{kind: always}",
    ))
    .run()
    .success();
    assert_eq!(started(&p)["timeoutMs"], 2000);
}

#[test]
fn a_hanging_shell_guard_fails_at_the_configured_guard_default() {
    let p = Spur::new().file(
        ".spur/config.yaml",
        "defaults:\n  guard: {timeoutMs: 300}\n",
    );
    let run = p
        .pipeline(&pipeline(
            "{kind: shell, options: {command: 'true'}}",
            "{kind: shell, options: {command: 'sleep 1000'}}",
        ))
        .json()
        .run()
        .success();
    assert_eq!(run.stdout_json()["state"], "other");
    let guard = events(&p.newest_trace(), "guard-evaluated")[0].clone();
    assert_eq!(guard["passed"], false);
    let detail = guard["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("timed out"), "{detail}");
}

#[test]
fn an_unknown_key_warns_and_a_bad_timeout_stops_the_run_before_it_starts() {
    let p = Spur::new().file(".spur/config.yaml", "defaults:\n  timeoutMS: 300\n");
    p.pipeline(&pipeline(
        "{kind: shell, options: {command: 'true'}}",
        "{kind: always}",
    ))
    .run()
    .success()
    .stderr_contains("spur::run::defaults-config")
    .stderr_contains("timeoutMs");
    let p = Spur::new().file(".spur/config.yaml", "defaults:\n  shell: {timeoutMs: 0}\n");
    p.pipeline(&pipeline(
        "{kind: shell, options: {command: 'touch ran'}}",
        "{kind: always}",
    ))
    .run()
    .code(2)
    .stderr_contains("spur::run::defaults-config")
    .stderr_contains("`defaults.shell.timeoutMs` must be 1 or more");
    assert!(!p.exists("ran"));
}
