//! Item 7: options spur used to ignore silently — `decision:` on the hitl kinds, `capture`
//! and `mode` on `agent.run`, an `agent.run` without `agent:` — and the static checks of
//! kinds, options and agents.

use serde_json::Value;

use crate::common::{events, Spur};

/// Mirrors gobing-ai/spur `src/workflow/decision-hitl-responder.ts` (`resolveDecision`:
/// `never` delegates to the operator; `evidence` with no DecisionMaker defers — the answer
/// var cleared, the status var `deferred`), run on the corpus
/// `decision-routing-example.yaml` itself.
#[test]
fn decision_never_asks_the_operator_and_evidence_defers() {
    let p = Spur::new().fixture(
        "examples/corpus/decision-routing-example.yaml",
        "decision.yaml",
    );
    let paused = p
        .args(["run", "decision.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    // `decide` (evidence) deferred without asking; `humanGate` (never) waits for a person.
    assert_eq!(paused["state"], "humanGate");
    let records = p.newest_trace();
    let decide = events(&records, "action-finished")
        .into_iter()
        .find(|r| r["state"] == "decide")
        .cloned()
        .unwrap();
    assert_eq!(decide["ok"], true);
    assert_eq!(decide["setVars"]["recoveryChoice"], "");
    assert_eq!(decide["setVars"]["decisionStatus"], "deferred");
    assert!(events(&records, "paused")
        .iter()
        .any(|r| r["kind"] == "hitl"));
    let run_id = paused["runId"].as_str().unwrap();
    let out = p
        .args(["continue", run_id, "--answer", "yes"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "published");
}

/// What the reference refuses before asking anyone, `spur check` refuses at the option.
#[test]
fn a_decision_the_reference_would_refuse_is_a_check_error() {
    let p = Spur::new().file(
        "p.yaml",
        r#"
name: bad-decisions
initialState: a
terminalStates: [b]
vars: {status: "", pick: ""}
states:
  - id: a
    pause: true
    onEnter:
      - {kind: hitl.confirm, options: {prompt: "ok?", decision: {mode: nevr}}}
      - {kind: hitl.confirm, options: {prompt: "ok?", decision: {mode: never, statusVar: status}}}
      - {kind: hitl.select, options: {prompt: "?", options: [x, y], var: pick, decision: {mode: evidence, statusVar: pick, evidenceNodes: [a, a, zz]}}}
      - {kind: hitl.confirm, options: {prompt: "ok?", decision: never}}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    let json = p
        .args(["check", "--format", "json", "p.yaml"])
        .run()
        .code(1)
        .stdout_json();
    let found: Vec<(&str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            ("spur::check::decision", "unknown decision mode `nevr`"),
            (
                "spur::check::decision",
                "decision mode `never` takes no further options (got statusVar)"
            ),
            (
                "spur::check::decision",
                "decision mode `evidence` in state `a`, which pauses"
            ),
            (
                "spur::check::decision",
                "`statusVar` `pick` is the answer var"
            ),
            (
                "spur::check::decision",
                "producer state `a` is listed twice"
            ),
            (
                "spur::check::decision",
                "producer state `zz` is not a declared state"
            ),
            ("spur::check::decision", "`decision` must be a mapping"),
        ]
    );
    assert_eq!(json[0]["help"], "did you mean `never`?");
}

/// A project whose config maps `stub` to a script that prints what it was given.
fn agent_project(config_extra: &str) -> Spur {
    let p = Spur::new();
    p.file(
        "stub.sh",
        "#!/bin/sh\nprintf 'agent=%s mode=%s input=%s\\n' \"$SPUR_AGENT\" \"$SPUR_AGENT_MODE\" \"$1\"\n",
    );
    super::super::run::make_executable(&p.join("stub.sh"));
    p.file(
        ".spur/config.yaml",
        format!("agents:\n  stub: {{command: ./stub.sh}}\n{config_extra}"),
    )
}

fn agent_pipeline(options: &str) -> String {
    format!(
        r#"
name: agents
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter: [{{kind: agent.run, options: {options}}}]
  - {{id: b}}
transitions: [{{from: a, to: b, guard: {{kind: action-ok}}}}]
"#
    )
}

/// Mirrors gobing-ai/spur `src/workflow/actions/agent-run.ts`: `agent` "defaults to the
/// service's default" (here `defaults.agent`), `mode` is the output asked of the agent,
/// `capture` keeps the answer for later steps (here: the step's record).
#[test]
fn agent_run_defaults_the_agent_and_honours_capture_and_mode() {
    let p = agent_project("defaults: {agent: stub}\n");
    let out = p
        .pipeline(&agent_pipeline("{input: hello, capture: true, mode: json}"))
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b");
    let finished = events(&p.newest_trace(), "action-finished")[0].clone();
    assert_eq!(
        finished["message"],
        "answer: agent=stub mode=json input=hello"
    );

    // `defaults.agent` as a mapping with the agent timeout beside it.
    let p = agent_project("defaults: {agent: {name: stub, timeoutMs: 60000}}\n");
    p.pipeline(&agent_pipeline("{input: hi}")).run().success();

    // No agent and no default: the step fails naming the key to set.
    let p = agent_project("");
    let out = p
        .pipeline(&agent_pipeline("{input: hi}"))
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["terminalReason"], "failed-agent");
    let error = events(&p.newest_trace(), "action-finished")[0]["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("defaults: { agent: NAME }"), "{error}");

    // A mode the agent cannot be asked for fails the step.
    let p = agent_project("");
    p.pipeline(&agent_pipeline("{agent: stub, input: hi, mode: xml}"))
        .run()
        .code(1);
    let error = events(&p.newest_trace(), "action-finished")[0]["error"].clone();
    assert_eq!(
        error,
        "agent.run: option `mode` is \"xml\": it must be `text` or `json`"
    );
}

/// The issue's checks of agents against the project (gobing-ai/spur's `spur check` flags
/// an agent its config does not map): a typo, a var's default, no agent and no default.
#[test]
fn spur_check_flags_an_agent_the_config_does_not_map() {
    let p = agent_project("");
    p.file(
        "p.yaml",
        r#"
name: agents
initialState: a
terminalStates: [b]
vars: {agent: ghost, other: stub}
states:
  - id: a
    onEnter:
      - {kind: agent.run, options: {agent: stbu, input: x}}
      - {kind: agent.run, options: {agent: "${vars.agent}", input: x}}
      - {kind: agent.run, options: {agent: "${vars.other}", input: x}}
      - {kind: agent.run, options: {input: x}}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    let json = p
        .args(["check", "--format", "json", "p.yaml"])
        .run()
        .success()
        .stdout_json();
    let found: Vec<(&str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["message"].as_str().unwrap(), d["help"].as_str().unwrap()))
        .collect();
    assert_eq!(found.len(), 3, "{json:#}");
    assert!(found[0]
        .0
        .starts_with("agent `stbu` (as written) has no command in"));
    assert_eq!(found[0].1, "did you mean `stub`?");
    assert!(found[1]
        .0
        .starts_with("agent `ghost` (the default of its var)"));
    assert_eq!(
        found[2].0,
        "`agent.run` names no agent and the project sets no default"
    );
    assert!(json
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["code"] == "spur::check::unmapped-agent" && d["severity"] == "warning"));
}

/// The issue: an unknown option of a built-in kind is a warning with did-you-mean
/// (`answerfile` → `answerFile`); a misspelt kind with no plugin on PATH is an error with
/// did-you-mean; a kind whose plugin is on PATH is not reported.
#[test]
fn misspelt_options_and_kinds_are_flagged_and_plugins_on_path_are_not() {
    let p = Spur::new();
    p.file(
        "p.yaml",
        r##"
name: kinds
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - {kind: agent.run, options: {agent: x, input: y, answerfile: out.md}}
      - {kind: shel, options: {command: "true"}}
      - {kind: notify.slack, options: {channel: "#x"}}
  - {id: b}
transitions: [{from: a, to: b}]
"##,
    );
    let check = |p: &Spur| -> Value {
        p.args(["check", "--format", "json", "p.yaml"])
            .run()
            .code(1)
            .stdout_json()
    };
    let json = check(&p);
    let found: Vec<(&str, &str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap(),
                d["severity"].as_str().unwrap(),
                d["help"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found[0],
        (
            "spur::check::unknown-option",
            "warning",
            "did you mean `answerFile`?"
        )
    );
    assert_eq!(
        found[1],
        (
            "spur::check::unknown-action-kind",
            "error",
            "did you mean `shell`? (a plugin would be `spur-action-shel` on PATH)"
        )
    );
    assert_eq!(found[2].0, "spur::check::unknown-action-kind");
    assert_eq!(found[2].1, "warning");
    assert_eq!(found.len(), 3);

    // With `spur-action-notify.slack` on PATH, that kind is not reported.
    p.file(
        "bin/spur-action-notify.slack",
        "#!/bin/sh\necho '{\"ok\":true}'\n",
    );
    super::super::run::make_executable(&p.join("bin/spur-action-notify.slack"));
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let json = check(&p.env("PATH", path));
    let kinds: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "spur::check::unknown-option",
            "spur::check::unknown-action-kind"
        ]
    );
}
