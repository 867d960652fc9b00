//! Shell templates, fail-closed, under dash and under bash as `sh`: each test runs spur with
//! a directory first on PATH whose `sh` is the shell under test. A template in shell text
//! either is refused by `spur check` and `spur run` (`spur::check::shell-template`), or the
//! step runs, nothing in the value runs (no marker file), and the value arrives literally.

use std::path::Path;

use serde_json::json;

use crate::common::Spur;

const SHELLS: [&str; 2] = ["dash", "bash"];

/// A project in which `sh` is `shell` (bash invoked as `sh` runs in POSIX mode).
fn with_sh(shell: &str) -> Spur {
    let exe = ["/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(shell))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("these tests run under both dash and bash as sh: apt-get install bash dash")
        });
    let project = Spur::new();
    let bin = project.join(".sh");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(exe, bin.join("sh")).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(&path));
    project.env("PATH", std::env::join_paths(dirs).unwrap())
}

/// YAML for a pipeline whose state `a` runs each of `commands` as a shell action and then
/// goes to `literal` if `guard` (a shell guard) passes, else to `mangled`.
fn pipeline(commands: &[&str], guard: &str) -> String {
    let actions: String = commands
        .iter()
        .map(|c| {
            format!(
                "      - {{kind: shell, options: {{command: {}}}}}\n",
                json!(c)
            )
        })
        .collect();
    format!(
        r#"name: shell-templates
initialState: a
terminalStates: [literal, mangled]
vars: {{x: ""}}
env: {{allow: [HOSTILE]}}
states:
  - id: a
    onEnter:
{actions}  - {{id: literal}}
  - {{id: mangled}}
transitions:
  - {{from: a, to: literal, guard: {{kind: shell, options: {{command: {guard}}}}}}}
  - {{from: a, to: mangled}}
"#,
        guard = json!(guard)
    )
}

/// Values that run code or break quoting if pasted, including the issue's.
const HOSTILE: &[&str] = &[
    "; touch pwned #",
    "\"; touch pwned #",
    "x; touch pwned",
    "'; touch pwned; '",
    "$(touch pwned)",
    "`touch pwned`",
    "a[$(touch pwned)]",
    "${IFS}touch${IFS}pwned",
    "\\\"$(touch pwned)\\",
    "a\nEOF\ntouch pwned\nEOF",
    "EOF",
    "line\n\ttouch pwned",
    "*",
    "-n",
    "'",
    "\"",
    "\\",
    "}",
    "$((1+1))",
    "",
];

/// Accepted positions: (shell text writing `name`, what `name` must then hold).
#[allow(clippy::type_complexity)]
const ACCEPTED: &[(&str, &str, fn(&str) -> String)] = &[
    ("unquoted", "printf '%s' ${vars.x} > unquoted", same),
    ("glued", "printf '%s' pre${vars.x}post > glued", |v| {
        format!("pre{v}post")
    }),
    ("double", "printf '%s' \"a ${vars.x} b\" > double", |v| {
        format!("a {v} b")
    }),
    ("single", "printf '%s' 'a ${vars.x} b' > single", |v| {
        format!("a {v} b")
    }),
    (
        "substitution",
        "printf '%s' \"$(printf '%s' ${vars.x})\" > substitution",
        trimmed,
    ),
    (
        "case-in-substitution",
        "printf '%s' \"$(case a in a) printf '%s' ${vars.x};; esac)\" > case-in-substitution",
        trimmed,
    ),
    (
        "case-pattern",
        "case ${vars.x} in ${vars.x}) printf yes;; *) printf no;; esac > case-pattern",
        |_| "yes".into(),
    ),
    ("here-doc", "cat > here-doc <<EOF\n<${vars.x}>\nEOF", |v| {
        format!("<{v}>\n")
    }),
    (
        "here-doc-tabs",
        "cat > here-doc-tabs <<-EOF\n\t${vars.x}\n\tEOF",
        |v| format!("{v}\n"),
    ),
    ("comment", "printf ok > comment # ${vars.x}", |_| {
        "ok".into()
    }),
    (
        "assignment",
        "y=${vars.x}; printf '%s' \"$y\" > assignment",
        same,
    ),
    (
        "export",
        "export Y=${vars.x}; printf '%s' \"$Y\" > export",
        same,
    ),
    ("subshell", "(printf '%s' ${vars.x}) > subshell", same),
    (
        "shadowed",
        "x=shadow; printf '%s' ${vars.x} > shadowed",
        same,
    ),
    ("env", "printf '%s' ${env.HOSTILE} > env", same),
];

fn same(v: &str) -> String {
    v.to_owned()
}

/// `$(…)` drops trailing newlines: that is the shell, not spur.
fn trimmed(v: &str) -> String {
    v.trim_end_matches('\n').to_owned()
}

/// The guard passes only when the value arrives literally in each quoting context.
const GUARD: &str =
    "test ${vars.x}x = \"$x\"x && test \"${vars.x}\" = \"$x\" && test '${vars.x}' = \"$x\"";

#[test]
fn hostile_values_arrive_literally_in_every_accepted_position_under_dash_and_bash() {
    let commands: Vec<&str> = ACCEPTED.iter().map(|(_, c, _)| *c).collect();
    let yaml = pipeline(&commands, GUARD);
    for shell in SHELLS {
        for value in HOSTILE {
            let project = with_sh(shell).env("HOSTILE", value);
            project.pipeline(&yaml);
            let vars = json!({ "x": value }).to_string();
            let out = project
                .args(["run", "pipeline.yaml", "--vars", &vars])
                .json()
                .run()
                .success();
            assert_eq!(
                out.stdout_json()["state"],
                "literal",
                "{shell}: the guard did not see {value:?} literally"
            );
            assert!(!project.exists("pwned"), "{shell}: {value:?} ran code");
            for (name, _, expect) in ACCEPTED {
                assert_eq!(
                    project.read(name),
                    expect(value),
                    "{shell}: {name} for {value:?}"
                );
            }
        }
    }
}

/// The issue's reproductions: each is either refused or runs nothing, under both shells, as
/// an action and as a guard.
#[test]
fn the_reported_vectors_are_refused_or_inert_under_dash_and_bash() {
    let refused = [
        ("echo \\${vars.x} > out", "; touch pwned #"),
        ("echo \"\\${vars.x}\" > out", "\"; touch pwned #"),
        ("echo $'${vars.x}' > out", "'; touch pwned #"),
    ];
    let inert = (
        "echo \"$(case a in a) echo ${vars.x};; esac)\" > out",
        "x; touch pwned",
    );
    for shell in SHELLS {
        for (command, value) in refused {
            for yaml in [pipeline(&[command], "true"), pipeline(&[], command)] {
                let project = with_sh(shell);
                project.pipeline(&yaml);
                let run = project.args(["run", "pipeline.yaml"]).var("x", value).run();
                assert!(
                    !project.exists("pwned"),
                    "{shell}: {command:?} ran the value"
                );
                run.code(2).stderr_contains("spur::check::shell-template");
                assert!(!project.exists("out"), "{shell}: {command:?} ran");
                project
                    .args(["check", "pipeline.yaml"])
                    .run()
                    .code(1)
                    .stderr_contains("spur::check::shell-template");
            }
        }
        let (command, value) = inert;
        let project = with_sh(shell);
        project.pipeline(&pipeline(
            &[command],
            &format!("{command} && test \"$(cat out)\" = \"$x\""),
        ));
        let out = project
            .args(["run", "pipeline.yaml"])
            .var("x", value)
            .json()
            .run()
            .success();
        assert_eq!(out.stdout_json()["state"], "literal", "{shell}");
        assert_eq!(project.read("out"), format!("{value}\n"), "{shell}");
        assert!(
            !project.exists("pwned"),
            "{shell}: the case vector ran code"
        );
    }
}

/// Every position spur refuses, each under both shells: `spur check` names it with the
/// code and the span, and `spur run` does not start.
#[test]
fn every_refused_position_is_a_check_error_and_never_runs() {
    let refused = [
        "echo \\${vars.x}",
        "echo \"\\${vars.x}\"",
        "echo $${vars.x}",
        "echo $'${vars.x}'",
        "echo $\"${vars.x}\"",
        "echo $((${vars.x} + 1))",
        "((n = ${vars.x}))",
        "echo $[${vars.x}]",
        "[[ ${vars.x} -eq 1 ]]",
        "echo `echo ${vars.x}`",
        "cat <<'EOF'\n${vars.x}\nEOF",
        "cat <<E${vars.x}\nx\nE",
        "a[${vars.x}]=1",
        "eval \"echo ${vars.x}\"",
        "trap 'echo ${vars.x}' EXIT",
        "sh -c \"echo ${vars.x}\"",
        "printf -v ${vars.x} %s 1",
        "test -v ${vars.x}",
        "read ${vars.x}",
        "export ${vars.x}=1",
        "cat <<EOF\n$(echo\nEOF\n)\nEOF\necho ${vars.x}",
        "echo $'a\\'b' ${vars.x}",
        "alias e=eval\ne ${vars.x}",
        "echo \"${vars.x}",
    ];
    for shell in SHELLS {
        for command in refused {
            let project = with_sh(shell);
            project.pipeline(&pipeline(&[&format!("{command} > out")], "true"));
            let out = project
                .args(["check", "--format", "json", "pipeline.yaml"])
                .run()
                .code(1);
            let findings = out.stdout_json();
            assert!(
                findings
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["code"] == "spur::check::shell-template"
                        && d["message"].as_str().unwrap().contains("${vars.x}")),
                "{command:?}: {findings}"
            );
            project
                .args(["run", "pipeline.yaml"])
                .var("x", "$(touch pwned)'; touch pwned #")
                .run()
                .code(2);
            assert!(
                !project.exists("pwned") && !project.exists("out"),
                "{shell}: {command:?}"
            );
        }
    }
}

#[test]
fn a_step_env_or_the_script_cannot_change_what_a_template_stands_for() {
    for shell in SHELLS {
        let project = with_sh(shell);
        project.pipeline(
            r#"
name: carriers
initialState: a
terminalStates: [b]
vars: {x: ""}
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: printf '%s|%s|%s|%s' ${vars.x} "${state}" '${iteration}' ${workflow} > out
          env: {x: from-env, SPUR_VAR_x: from-env}
  - {id: b}
transitions:
  - {from: a, to: b}
"#,
        );
        project
            .args(["run", "pipeline.yaml"])
            .var("x", "it's")
            .run()
            .success();
        assert_eq!(project.read("out"), "it's|a|0|carriers", "{shell}");
    }
}

#[test]
fn the_shells_under_test_are_the_ones_named() {
    for shell in SHELLS {
        let project = with_sh(shell);
        project.pipeline(&pipeline(
            &["if [ -n \"$BASH_VERSION\" ]; then echo bash; else echo dash; fi > which"],
            "true",
        ));
        project.args(["run", "pipeline.yaml"]).run().success();
        assert_eq!(project.read("which"), format!("{shell}\n"));
    }
}

#[test]
fn check_explains_a_refused_position_and_what_to_write_instead() {
    let project = Spur::new().fixture("examples/broken/shell-template.yaml", "p.yaml");
    let out = project.args(["check", "p.yaml"]).run().code(1);
    insta::assert_snapshot!(out.stderr());
    let json = project
        .args(["check", "--format", "json", "p.yaml"])
        .run()
        .code(1)
        .stdout_json();
    insta::assert_json_snapshot!(json);
}
