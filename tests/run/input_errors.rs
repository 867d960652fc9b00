//! Inputs a step cannot use end in a clear, coded error naming what is wrong: a var too
//! large to export, a file outside the project or not UTF-8 for `file.read.into-var`, a
//! `cwd` that is not there.

use serde_json::Value;

use crate::common::{events, Spur};

/// Run `actions` on entering `a`, then `b` when `guard` passes (else `other`); `b` runs
/// `then` on entering (vars an action sets apply from the next state on).
fn run(p: &Spur, actions: &str, guard: &str) -> (i32, Vec<Value>) {
    run_then(p, actions, guard, "[]")
}

fn run_then(p: &Spur, actions: &str, guard: &str, then: &str) -> (i32, Vec<Value>) {
    let yaml = format!(
        r#"
name: inputs
initialState: a
terminalStates: [b, other]
vars: {{big: "", out: ""}}
states:
  - id: a
    onEnter:
{actions}
  - {{id: b, onEnter: {then}}}
  - {{id: other}}
transitions:
  - {{from: a, to: b, guard: {guard}}}
  - {{from: a, to: other}}
"#
    );
    let run = p.pipeline(&yaml).json().run();
    (run.exit_code().unwrap_or(-1), p.newest_trace())
}

fn error_of(records: &[Value]) -> String {
    events(records, "action-finished")
        .iter()
        .find_map(|r| r["error"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_var_too_large_to_export_fails_the_next_process_step_by_name() {
    let p = Spur::new().file("big.txt", "a".repeat(200_000));
    let (code, records) = run_then(
        &p,
        "      - {kind: file.read.into-var, options: {path: big.txt, var: big}}",
        "{kind: always}",
        "[{kind: shell, options: {command: 'touch ran'}}]",
    );
    assert_eq!(code, 1);
    let error = error_of(&records);
    assert!(
        error.contains("var `big` is 200000 bytes, too large to export")
            && error.contains("write the value to a file")
            && error.contains("[spur::run::var-too-large]"),
        "{error}"
    );
    assert!(!p.exists("ran"));
}

#[test]
fn a_shell_guard_with_a_var_too_large_to_export_fails_closed_by_name() {
    let p = Spur::new().file("big.txt", "a".repeat(200_000));
    let (code, records) = run(
        &p,
        "      - {kind: file.read.into-var, options: {path: big.txt, var: big}}",
        "{kind: shell, options: {command: 'true'}}",
    );
    assert_eq!(code, 0);
    let guard = events(&records, "guard-evaluated")[0].clone();
    assert_eq!(guard["passed"], false);
    let detail = guard["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("var `big`") && detail.contains("spur::run::var-too-large"),
        "{detail}"
    );
}

#[cfg(unix)]
#[test]
fn file_read_refuses_a_path_outside_the_project_unless_allowed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
    let secret = outside.path().join("secret.txt");
    let p = Spur::new();
    // The adversary's way: a link inside the project to a file outside it.
    std::os::unix::fs::symlink(&secret, p.join("link.txt")).unwrap();
    for path in [secret.display().to_string(), "link.txt".to_owned()] {
        let (code, records) = run(
            &p,
            &format!("      - {{kind: file.read.into-var, options: {{path: '{path}', var: out}}}}"),
            "{kind: always}",
        );
        assert_eq!(code, 1, "{path}");
        let error = error_of(&records);
        assert!(
            error.contains("outside the project root")
                && error.contains("allowOutside: true")
                && error.contains("[spur::run::read-outside-project]"),
            "{error}"
        );
    }
    let (code, records) = run(
        &p,
        "      - {kind: file.read.into-var, options: {path: link.txt, var: out, allowOutside: true}}",
        "{kind: always}",
    );
    assert_eq!(code, 0, "{records:?}");
    let finished = events(&records, "action-finished")[0].clone();
    assert_eq!(finished["setVars"]["out"], "outside");
    // Inside the project, a link is fine.
    p.file("in.txt", "inside\n");
    std::os::unix::fs::symlink(p.join("in.txt"), p.join("in-link.txt")).unwrap();
    let (code, records) = run(
        &p,
        "      - {kind: file.read.into-var, options: {path: in-link.txt, var: out}}",
        "{kind: always}",
    );
    assert_eq!(code, 0, "{records:?}");
}

#[test]
fn file_read_refuses_invalid_utf8_with_the_byte_offset() {
    let p = Spur::new().file("latin1.txt", b"caf\xe9 au lait\n");
    let (code, records) = run(
        &p,
        "      - {kind: file.read.into-var, options: {path: latin1.txt, var: out}}",
        "{kind: always}",
    );
    assert_eq!(code, 1);
    let error = error_of(&records);
    assert!(
        error.contains("latin1.txt is not UTF-8")
            && error.contains("offset 3")
            && error.contains("[spur::run::read-not-utf8]"),
        "{error}"
    );
}

#[test]
fn a_missing_cwd_is_named_for_a_shell_step_and_a_shell_guard() {
    let p = Spur::new();
    let (code, records) = run(
        &p,
        "      - {kind: shell, options: {command: 'true', cwd: no/such/dir}}",
        "{kind: always}",
    );
    assert_eq!(code, 1);
    let error = error_of(&records);
    assert!(
        error.contains("cwd \"no/such/dir\"")
            && error.contains("does not exist")
            && error.contains("[spur::run::cwd-missing]"),
        "{error}"
    );
    let (code, records) = run(
        &p,
        "      - {kind: shell, options: {command: 'true'}}",
        "{kind: shell, options: {command: 'true', cwd: gone}}",
    );
    assert_eq!(code, 0);
    let guard = events(&records, "guard-evaluated")[0].clone();
    let detail = guard["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("cwd \"gone\"") && detail.contains("spur::run::cwd-missing"),
        "{detail}"
    );
}
