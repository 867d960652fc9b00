//! Item 8: the newer engine's built-in actions `file.exists`, `file.read`, `hitl.input`,
//! `event.emit`, `rule.check` and `response.validate` (`http.request`: `http_request.rs`).

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

/// Mirrors gobing-ai/spur `src/workflow/actions/rule-check.ts` (`preset` defaulting to
/// `recommended-pre-check`, `rule`, `failOn`; "rule.check failed: N finding(s) at/above
/// …") over spur's command rules in `.spur/rules/<preset>.yaml`.
#[test]
fn rule_check_fails_on_findings_at_or_above_fail_on() {
    let p = Spur::new();
    p.file(
        ".spur/rules/pre.yaml",
        r#"
rules:
  - {id: clean, command: "true"}
  - {id: warned, severity: warning, command: "echo a TODO is left >&2; exit 1"}
  - {id: broken, command: "echo src is broken; exit 3"}
  - {id: off, enabled: false, command: "exit 1"}
"#,
    );
    p.file(
        ".spur/rules/recommended-pre-check.yaml",
        "rules: [{id: here, command: 'pwd > where.txt'}]\n",
    );
    std::fs::create_dir(p.join("sub")).unwrap();
    let out = p
        .pipeline(
            r#"
name: rules
initialState: a
defaultOnError: continue
terminalStates: [b]
vars: {p: pre}
states:
  - id: a
    onEnter:
      - {kind: rule.check, options: {preset: pre}}
      - {kind: rule.check, options: {preset: pre, rule: clean}}
      - {kind: rule.check, options: {preset: pre, rule: warned}}
      - {kind: rule.check, options: {preset: pre, rule: warned, failOn: warning}}
      - {kind: rule.check, options: {preset: pre, rule: off}}
      - {kind: rule.check, options: {preset: "${vars.p}"}}
      - {kind: rule.check, options: {cwd: sub}}
      - {kind: rule.check, options: {preset: nothing-here}}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
        )
        .var("p", "../../etc/passwd")
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
    assert_eq!(oks, [false, true, true, false, false, false, true, false]);
    assert_eq!(
        finished[0]["error"],
        "rule.check failed: 1 finding(s) at/above error: broken (error): src is broken"
    );
    assert_eq!(
        finished[3]["error"],
        "rule.check failed: 1 finding(s) at/above warning: warned (warning): a TODO is left"
    );
    assert_eq!(
        finished[4]["error"],
        r#"rule.check failed: no enabled rule "off" in preset "pre""#
    );
    let hostile = finished[5]["error"].as_str().unwrap();
    assert!(hostile.contains("is not a preset name"), "{hostile}");
    assert!(hostile.contains("[spur::run::rule-config]"), "{hostile}");
    assert!(p.read("sub/where.txt").trim_end().ends_with("/sub"));
    let missing = finished[7]["error"].as_str().unwrap();
    assert!(missing.contains("no preset file"), "{missing}");
}

/// Mirrors gobing-ai/spur `src/workflow/actions/response-validate.ts` (`text` required; not
/// ok fails with the engine's reason), spur's engine being the answer lint's anchor check:
/// a cited file or line that does not exist fails the step.
#[test]
fn response_validate_fails_on_citations_that_do_not_exist() {
    let p = Spur::new();
    p.file("src/a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let out = p
        .pipeline(
            r#"
name: validate
initialState: a
defaultOnError: continue
terminalStates: [b]
vars: {answer: ""}
states:
  - id: a
    onEnter:
      - {kind: response.validate, options: {text: "b is at src/a.rs:2 and the rest at src/a.rs:1-3."}}
      - {kind: response.validate, options: {text: "see src/a.rs:9, src/gone.rs:1 and ../../etc/passwd:1"}}
      - {kind: response.validate, options: {text: "${vars.answer}"}}
      - {kind: response.validate}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
        )
        .var("answer", "$(touch pwned) `src/a.rs:3`")
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
    assert_eq!(oks, [true, false, true, false]);
    assert_eq!(
        finished[1]["error"],
        "response.validate: 3 of 3 reference(s) do not exist: src/a.rs:9 is past the end of \
         the file (3 lines); src/gone.rs does not exist; ../../etc/passwd is outside the project"
    );
    assert!(!p.exists("pwned"));
    assert!(finished[3]["error"]
        .as_str()
        .unwrap()
        .starts_with("response.validate: text is required"));
}
