//! Every guard kind, the combinators, plugin guards and the journal of evaluations.

use super::make_executable;
use crate::common::{events, Spur};

/// A pipeline whose only choice is `guard` → pass, else → other; returns the chosen state.
fn choose(p: &Spur, guard: &str, extra: &[&str]) -> String {
    let yaml = format!(
        r#"
name: guard
initialState: a
terminalStates: [pass, other]
vars: {{x: "1", path: marker.txt}}
states:
  - id: a
    onEnter: [{{kind: shell, options: {{command: "true"}}}}]
  - {{id: pass}}
  - {{id: other}}
transitions:
  - {{from: a, to: pass, guard: {guard}}}
  - {{from: a, to: other}}
"#
    );
    let run = p.pipeline(&yaml).args(extra).json().run();
    assert_eq!(run.exit_code(), Some(0), "{guard}: {}", run.stderr());
    run.stdout_json()["state"].as_str().unwrap().to_owned()
}

#[test]
fn guard_kinds_always_never_action_ok_shell() {
    let p = Spur::new();
    assert_eq!(choose(&p, "{kind: always}", &[]), "pass");
    assert_eq!(choose(&p, "{kind: never}", &[]), "other");
    assert_eq!(choose(&p, "{kind: action-ok}", &[]), "pass");
    assert_eq!(
        choose(
            &p,
            r#"{kind: shell, options: {command: 'test "$x" = 1'}}"#,
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: shell, options: {command: 'test "$x" = 1'}}"#,
            &["--var", "x=2"]
        ),
        "other"
    );
}

#[test]
fn guard_kind_jq_on_the_run_context_and_on_a_file() {
    let p = Spur::new();
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {expr: '$x == "1" and .vars.x == "1" and .state == "a"'}}"#,
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(&p, r#"{kind: jq, options: {expr: '.lastAction.ok'}}"#, &[]),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {expr: '$x == "1"'}}"#,
            &["--var", "x=2"]
        ),
        "other"
    );
    p.file("v.json", r#"{"verdict": "PASS"}"#);
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: v.json, expr: '.verdict == "PASS"'}}"#,
            &[]
        ),
        "pass"
    );
    // Non-boolean output, a missing file and malformed JSON fail closed.
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: v.json, expr: '.verdict'}}"#,
            &[]
        ),
        "other"
    );
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: missing.json, expr: 'true'}}"#,
            &[]
        ),
        "other"
    );
    p.file("bad.json", "{nope");
    assert_eq!(
        choose(
            &p,
            r#"{kind: jq, options: {file: bad.json, expr: 'true'}}"#,
            &[]
        ),
        "other"
    );
    let detail = events(&p.newest_trace(), "guard-evaluated")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("not valid JSON"), "{detail}");
}

#[test]
fn guard_kind_file_exists_with_a_templated_path() {
    let p = Spur::new();
    assert_eq!(
        choose(
            &p,
            "{kind: file-exists, options: {path: '${vars.path}'}}",
            &[]
        ),
        "other"
    );
    p.file("marker.txt", "");
    assert_eq!(
        choose(
            &p,
            "{kind: file-exists, options: {path: '${vars.path}'}}",
            &[]
        ),
        "pass"
    );
}

#[test]
fn guard_combinators_all_any_not() {
    let p = Spur::new();
    assert_eq!(
        choose(
            &p,
            "{kind: all, options: {guards: [{kind: always}, {kind: action-ok}]}}",
            &[]
        ),
        "pass"
    );
    assert_eq!(
        choose(
            &p,
            "{kind: all, options: {guards: [{kind: always}, {kind: never}]}}",
            &[]
        ),
        "other"
    );
    assert_eq!(choose(&p, "{kind: any, options: {guards: [{kind: never}, {kind: shell, options: {command: 'true'}}]}}", &[]), "pass");
    assert_eq!(
        choose(
            &p,
            "{kind: any, options: {guards: [{kind: never}, {kind: never}]}}",
            &[]
        ),
        "other"
    );
    assert_eq!(
        choose(&p, "{kind: not, options: {guards: [{kind: never}]}}", &[]),
        "pass"
    );
    assert_eq!(
        choose(&p, "{kind: not, options: {guards: [{kind: always}]}}", &[]),
        "other"
    );
}

#[test]
fn unknown_guard_kinds_run_a_plugin_from_path_or_fail_closed() {
    let p = Spur::new();
    assert_eq!(
        choose(&p, "{kind: approved, options: {who: ops}}", &[]),
        "other"
    );
    let detail = events(&p.newest_trace(), "guard-evaluated")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("spur-guard-approved"), "{detail}");
    p.file(
        "bin/spur-guard-approved",
        "#!/bin/sh\ngrep -q '\"who\":\"ops\"' && exit 0\nexit 1\n",
    );
    make_executable(&p.join("bin/spur-guard-approved"));
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let yaml = r#"
name: plugin
initialState: a
terminalStates: [pass, other]
states: [{id: a}, {id: pass}, {id: other}]
transitions:
  - {from: a, to: pass, guard: {kind: approved, options: {who: ops}}}
  - {from: a, to: other}
"#;
    let out = p
        .pipeline(yaml)
        .env("PATH", &path)
        .json()
        .run()
        .stdout_json();
    assert_eq!(out["state"], "pass");
}

#[test]
fn every_guard_evaluation_is_journaled_with_result_and_duration() {
    let p = Spur::new();
    choose(&p, "{kind: never}", &[]);
    let guards = events(&p.newest_trace(), "guard-evaluated")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(guards.len(), 2);
    assert_eq!(guards[0]["kind"], "never");
    assert_eq!(guards[0]["passed"], false);
    assert_eq!(guards[1]["kind"], "none");
    assert_eq!(guards[1]["passed"], true);
    assert!(guards[0]["durationUs"].is_u64());
}
