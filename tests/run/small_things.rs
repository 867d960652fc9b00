//! Small things a new user met, each reproduced first (issue 22, item 8): one test each.

use crate::common::Spur;

fn one_line(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ")
}

const CONFIRM: &str = r#"
name: ask
initialState: a
terminalStates: [yes, no]
states:
  - id: a
    onEnter: [{kind: hitl.confirm, options: {prompt: "Ship it?"}}]
  - {id: yes}
  - {id: no}
transitions:
  - {from: a, to: yes, guard: {kind: jq, options: {expr: '.vars.__hitlAnswer == "yes"'}}}
  - {from: a, to: no}
"#;

#[test]
fn hitl_accepts_y_and_n_and_the_resume_hint_shows_answer_as_required() {
    let p = Spur::new();
    let paused = p.pipeline(CONFIRM).run().code(3);
    let run_id = p.only_run_id();
    assert!(
        paused.stdout().contains(&format!(
            "resume with: spur continue {run_id} --answer <yes|no|cancel>"
        )),
        "{}",
        paused.stdout()
    );
    let out = p
        .args(["continue", "latest", "--answer", "y"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "yes", "{out}");
    // --json carries the question and its choices of a paused run.
    let q = Spur::new();
    let paused = q.pipeline(CONFIRM).json().run().code(3).stdout_json();
    assert_eq!(paused["question"]["prompt"], "Ship it?", "{paused}");
    assert_eq!(paused["question"]["choices"][0], "yes", "{paused}");
    q.args(["continue", "latest", "--answer", "n"])
        .run()
        .success()
        .stdout_contains("completed at no");
}

#[test]
fn verify_without_a_state_directory_says_so_and_creates_nothing() {
    let p = Spur::new();
    let out = p.args(["verify"]).run().code(2);
    let said = one_line(out.stderr());
    assert!(
        said.contains("spur::usage::no-state-dir") && said.contains("spur init"),
        "{said}"
    );
    assert!(!p.exists(".spur"));
}

#[test]
fn every_config_error_is_reported_at_once() {
    let p = Spur::new().file(
        ".spur/config.yaml",
        "defaults:\n  shell: {timeoutMs: -5}\nverify:\n  gates:\n    b: {comand: 'true'}\nagents:\n  x: {preset: nope}\n",
    );
    let out = p
        .pipeline("name: p\ninitialState: a\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n")
        .run()
        .code(2);
    let said = one_line(out.stderr());
    for part in [
        "errors in 3 sections",
        "spur::run::defaults-config",
        "unknown key `comand` in gate `b`",
        "spur::run::agent-config",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
}

#[test]
fn an_action_error_is_not_prefixed_twice() {
    let p = Spur::new().file(".spur/config.yaml", "agents: {}\n");
    let out = p
        .pipeline(
            "name: p\ninitialState: a\nstates:\n  - id: a\n    onEnter: [{kind: agent.run, options: {agent: ghost, input: hi}}]\n  - {id: b}\ntransitions: [{from: a, to: b}]\n",
        )
        .run()
        .code(1);
    let all = format!("{}{}", out.stdout(), out.stderr());
    assert!(all.contains("no agent \"ghost\""), "{all}");
    assert!(!all.contains("agent.run: agent.run:"), "{all}");
}

#[test]
fn an_empty_task_var_that_steps_use_is_refused_before_anything_runs() {
    let p = Spur::new();
    let out = p
        .pipeline(
            "name: p\ninitialState: a\nvars: {wbs: \"0001\"}\nstates:\n  - id: a\n    onEnter: [{kind: shell, options: {command: 'echo \"task ${vars.wbs}:\" > said.txt'}}]\n  - {id: b}\ntransitions: [{from: a, to: b}]\n",
        )
        .var("wbs", "")
        .run()
        .code(2);
    assert!(
        one_line(out.stderr()).contains("spur::run::empty-task"),
        "{}",
        out.stderr()
    );
    assert!(!p.exists("said.txt"));
}
