//! Item 8 (part): the newer engine's built-in actions `file.exists`, `file.read`,
//! `hitl.input` and `event.emit`. (`rule.check`, `response.validate` and `http.request` are
//! not built in yet: they run as plugins.)

use crate::common::{events, Spur};

/// Mirrors gobing-ai/spur `src/workflow/actions/file-exists.ts` (`negate`) and
/// `file-read.ts` (`maxSize`, refused before reading), with spur's rules for reads.
#[test]
fn file_exists_and_file_read_check_and_read_files() {
    let p = Spur::new();
    p.file("present.txt", "twelve bytes");
    std::os::unix::fs::symlink("/etc/hostname", p.join("outside.txt")).unwrap();
    let out = p
        .pipeline(
            r#"
name: files
initialState: a
defaultOnError: continue
terminalStates: [b]
vars: {text: ""}
states:
  - id: a
    onEnter:
      - {kind: file.exists, options: {path: present.txt}}
      - {kind: file.exists, options: {path: missing.txt, negate: true}}
      - {kind: file.exists, options: {path: missing.txt}}
      - {kind: file.read, options: {path: present.txt, var: text}}
      - {kind: shell, options: {command: 'echo "$text" > seen.txt'}}
      - {kind: file.read, options: {path: present.txt, maxSize: 4}}
      - {kind: file.read, options: {path: outside.txt}}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
        )
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b");
    let records = p.newest_trace();
    let finished = events(&records, "action-finished");
    let oks: Vec<bool> = finished
        .iter()
        .map(|r| r["ok"].as_bool().unwrap())
        .collect();
    assert_eq!(oks, [true, true, false, true, true, false, false]);
    assert!(finished[2]["error"]
        .as_str()
        .unwrap()
        .starts_with("file.exists: "));
    assert_eq!(finished[3]["setVars"]["text"], "twelve bytes");
    assert_eq!(p.read("seen.txt"), "twelve bytes\n");
    assert_eq!(
        finished[5]["error"],
        "file.read: present.txt is larger than 4 bytes"
    );
    assert!(finished[6]["error"]
        .as_str()
        .unwrap()
        .contains("spur::run::read-outside-project"));
}

/// Mirrors gobing-ai/spur `src/workflow/actions/hitl-input.ts` (free text into `var`,
/// `__hitlInput` by default) with spur's non-interactive rule (the run pauses), and ts-libs
/// `src/host.ts` `EventEmitActionRunner` (`name` required; the payload recorded).
#[test]
fn hitl_input_takes_free_text_and_event_emit_is_recorded() {
    let p = Spur::new();
    let paused = p
        .pipeline(
            r#"
name: input
initialState: ask
terminalStates: [done]
vars: {title: ""}
states:
  - id: ask
    onEnter:
      - {kind: event.emit, options: {name: asking, payload: {state: "${state}", n: 1}}}
      - {kind: hitl.input, options: {prompt: "Title?", var: title}}
      - {kind: hitl.input, options: {prompt: "Notes?"}}
      - {kind: shell, options: {command: 'printf "%s|%s" "$title" "$__hitlInput" > got.txt'}}
  - {id: done}
transitions: [{from: ask, to: done}]
"#,
        )
        .json()
        .run()
        .code(3)
        .stdout_json();
    let run_id = paused["runId"].as_str().unwrap().to_owned();
    let again = p
        .args(["continue", &run_id, "--answer", "a title; $(touch pwned)"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    assert_eq!(again["state"], "ask");
    p.args(["continue", &run_id, "--answer", "some notes"])
        .json()
        .run()
        .success();
    assert_eq!(p.read("got.txt"), "a title; $(touch pwned)|some notes");
    assert!(!p.exists("pwned"));
    let records = p.trace(&run_id);
    let finished = events(&records, "action-finished");
    assert_eq!(
        finished[0]["message"],
        r#"event asking: {"n":1,"state":"ask"}"#
    );
}
