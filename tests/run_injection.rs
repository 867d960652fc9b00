//! Shell safety: a var value substituted into shell text — unquoted, inside
//! "…" or inside '…', in a shell action or a shell guard — is always exactly one literal
//! string. Nothing in it runs; the value arrives byte for byte.

use crate::common::Spur;

const HOSTILE: &[&str] = &[
    "$(touch pwned)",
    "`touch pwned`",
    "`id`",
    "'; touch pwned; '",
    "\"; touch pwned; \"",
    "\"",
    "'",
    "a\nb\n; touch pwned",
    "\\\"$(touch pwned)\\",
    "${IFS}touch${IFS}pwned",
    "* ?",
    "",
];

/// Actions write the value as substituted in each quoting context; the guard compares each
/// context with `$x` (the same value from the environment) and passes only if all match.
const PIPELINE: &str = r#"
name: injection
initialState: a
terminalStates: [literal, mangled]
failureStates: [mangled]
vars: {x: ""}
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: "printf '%s' ${vars.x} > unquoted.txt"}}
      - {kind: shell, options: {command: "printf '%s' \"${vars.x}\" > double.txt"}}
      - {kind: shell, options: {command: "printf '%s' '${vars.x}' > single.txt"}}
      - {kind: shell, options: {command: "printf '%s' \"pre ${vars.x} post\" > embedded.txt"}}
  - {id: literal}
  - {id: mangled}
transitions:
  - from: a
    to: literal
    guard:
      kind: all
      options:
        guards:
          - {kind: shell, options: {command: "test ${vars.x}x = \"$x\"x"}}
          - {kind: shell, options: {command: "test \"${vars.x}\" = \"$x\""}}
          - {kind: shell, options: {command: "test '${vars.x}' = \"$x\""}}
  - {from: a, to: mangled}
"#;

/// Run `PIPELINE` with `x` set to `value` by `--var` (`how` = "var") or `--vars` JSON.
fn run_with(value: &str, how: &str) -> Spur {
    let run = Spur::new().pipeline(PIPELINE).json();
    let run = match how {
        "var" => run.var("x", value),
        _ => run.args(["--vars", &serde_json::json!({ "x": value }).to_string()]),
    };
    let out = run.run();
    let state = out.stdout_json()["state"].clone();
    assert_eq!(
        state,
        "literal",
        "value {value:?}: guards did not see the literal value; stderr: {}",
        out.stderr()
    );
    run
}

#[test]
fn hostile_values_arrive_literally_in_every_quoting_context_and_run_nothing() {
    for value in HOSTILE {
        for how in ["var", "vars-json"] {
            let p = run_with(value, how);
            for file in ["unquoted.txt", "double.txt", "single.txt"] {
                assert_eq!(&p.read(file), value, "{file} for {value:?}");
            }
            assert_eq!(p.read("embedded.txt"), format!("pre {value} post"));
            assert!(!p.join("pwned").exists(), "{value:?} ran code");
            let listing: Vec<String> = std::fs::read_dir(p.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert!(
                listing
                    .iter()
                    .all(|n| !n.contains("pwned") && !n.starts_with("uid=")),
                "{value:?}: {listing:?}"
            );
        }
    }
}

#[test]
fn values_from_files_read_into_vars_are_just_as_inert() {
    let p = Spur::new().file("evil.txt", "$(touch pwned)'\"; touch pwned2 #");
    p.pipeline(
        r#"
name: from-file
initialState: a
terminalStates: [c]
vars: {x: ""}
states:
  - id: a
    onEnter:
      - {kind: file.read.into-var, options: {path: evil.txt, var: x}}
  - id: b
    onEnter:
      - {kind: shell, options: {command: "printf '%s' '${vars.x}' ${vars.x} \"${vars.x}\" > out.txt"}}
  - {id: c}
transitions:
  - {from: a, to: b}
  - {from: b, to: c}
"#,
    )
    .run()
    .success();
    let v = "$(touch pwned)'\"; touch pwned2 #";
    assert_eq!(p.read("out.txt"), format!("{v}{v}{v}"));
    assert!(!p.join("pwned").exists() && !p.join("pwned2").exists());
}
