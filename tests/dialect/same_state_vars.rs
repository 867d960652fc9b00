//! Item 1: a var an action sets is visible to the next action of the same list, as
//! `${vars.x}` and as `$x` — and a resumed run replays it from the journal.

use crate::common::{assert_gap_free, Spur};

/// Mirrors ts-libs `tests/state-machine.test.ts` "setVars is visible to a later action in
/// the SAME state (Drop 1 regression)" (engine 0.4.35), with spur's three var-setting
/// kinds: `file.read.into-var`, `hitl.select` and `proof.fingerprint`.
#[test]
fn set_vars_is_visible_to_a_later_action_in_the_same_state() {
    let p = Spur::new();
    p.file("value.txt", "new\n");
    let out = p
        .pipeline(
            r#"
name: merge
initialState: a
terminalStates: [seen-new, seen-old]
vars: {v: old, pick: "", fp: ""}
states:
  - id: a
    onEnter:
      - {kind: file.read.into-var, options: {path: value.txt, var: v}}
      - {kind: shell, options: {command: "echo ${vars.v} $v > during.txt"}}
      - {kind: proof.fingerprint, options: {var: fp}}
      - {kind: shell, options: {command: "echo ${vars.fp} > fp.txt"}}
    onExit:
      - {kind: file.read.into-var, options: {path: value.txt, var: pick}}
      - {kind: shell, options: {command: "echo exit ${vars.pick} >> during.txt"}}
  - {id: seen-new}
  - {id: seen-old}
transitions:
  - {from: a, to: seen-new, guard: {kind: shell, options: {command: 'test "$v" = new'}}}
  - {from: a, to: seen-old}
"#,
        )
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(p.read("during.txt"), "new new\nexit new\n");
    let fp = p.read("fp.txt");
    assert!(
        fp.trim().starts_with("sha256:"),
        "the fingerprint, not the empty default: {fp:?}"
    );
    assert_eq!(out["state"], "seen-new");
}

/// A run killed right after any journal record and resumed sees, in the actions after a
/// var-setting one, the value that action recorded — never a value read again after the
/// crash (the file is changed before each resume), never the default. Adversarial: the
/// journal's `setVars` edited by hand refuses the resume.
#[test]
fn same_state_vars_are_replayed_from_the_journal_after_a_crash() {
    const YAML: &str = r#"
name: crash-vars
initialState: a
terminalStates: [done]
vars: {v: default}
states:
  - id: a
    onEnter:
      - {kind: file.read.into-var, options: {path: value.txt, var: v}}
      - {kind: shell, options: {command: "echo ${vars.v} $v >> seen.txt"}}
      - {kind: shell, options: {command: "echo second ${vars.v} >> seen.txt"}}
  - {id: done}
transitions: [{from: a, to: done}]
"#;
    let reference = Spur::new();
    reference.file("value.txt", "first\n");
    reference.file("p.yaml", YAML);
    reference.args(["run", "p.yaml"]).run().success();
    let total = reference.newest_trace().len() as u64;
    assert_eq!(reference.read("seen.txt"), "first first\nsecond first\n");

    for kill_after in 1..total {
        let p = Spur::new();
        p.file("value.txt", "first\n");
        p.file("p.yaml", YAML);
        p.env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", kill_after.to_string())
            .args(["run", "p.yaml"])
            .run()
            .killed();
        let run_id = p.only_run_id();
        let records = p.trace(&run_id);
        // What the read recorded, when its finish reached the journal before the kill.
        let recorded = records
            .iter()
            .find(|r| r["event"] == "action-finished" && r["index"] == 0)
            .map(|r| r["setVars"]["v"].as_str().unwrap().to_owned());
        assert!(
            recorded.as_deref().is_none_or(|v| v == "first"),
            "{recorded:?}"
        );
        p.file("value.txt", "changed-after-the-crash\n");
        let out = p.args(["continue", &run_id]).json().run();
        let out = if out.stderr().contains("spur::run::ambiguous-action") {
            p.args(["continue", &run_id, "--rerun-ambiguous"])
                .json()
                .run()
        } else {
            out
        };
        let out = out.success().stdout_json();
        assert_eq!(out["state"], "done", "seq {kill_after}");
        let seen = if p.exists("seen.txt") {
            p.read("seen.txt")
        } else {
            String::new()
        };
        let lines: Vec<&str> = seen.lines().collect();
        let value = match &recorded {
            Some(v) => v.trim().to_owned(),
            // Not recorded: the read ran again after the crash.
            None => "changed-after-the-crash".to_owned(),
        };
        // Every line the resumed run wrote uses the recorded value.
        let last = lines.last().copied().unwrap_or_default();
        assert_eq!(last, format!("second {value}"), "seq {kill_after}: {seen}");
        if recorded.is_some() {
            assert!(
                lines.iter().all(|l| l.ends_with("first")),
                "seq {kill_after}: a line does not use the journaled value: {seen}"
            );
        }
        assert_gap_free(&p.trace(&run_id));
    }

    // The adversary edits the recorded value: the chain refuses the resume, nothing runs.
    let p = Spur::new();
    p.file("value.txt", "first\n");
    p.file("p.yaml", YAML);
    let finish_of_read = reference
        .newest_trace()
        .iter()
        .position(|r| r["event"] == "action-finished" && r["index"] == 0)
        .unwrap() as u64
        + 1;
    p.env(
        "SPUR_TEST_KILL_AFTER_JOURNAL_SEQ",
        finish_of_read.to_string(),
    )
    .args(["run", "p.yaml"])
    .run()
    .killed();
    let run_id = p.only_run_id();
    let journal = format!(".spur/runs/{run_id}/journal.jsonl");
    let text = p.read(&journal);
    assert!(text.contains(r#""setVars":{"v":"first"}"#), "{text}");
    p.file(
        &journal,
        text.replace(
            r#""setVars":{"v":"first"}"#,
            r#""setVars":{"v":"$(touch pwned)"}"#,
        ),
    );
    p.args(["continue", &run_id])
        .run()
        .code(4)
        .stderr_contains("spur::journal::chain-broken");
    assert!(!p.exists("seen.txt") && !p.exists("pwned"));
    assert!(!p.read(&journal).contains(r#""event":"resumed""#));
}
