//! Presets: the exact argv each agent CLI gets for a step's input (stand-ins of the same
//! names record it), slash commands written per CLI, a user's `command` and `args`, and
//! inputs that look like flags or shell.

use super::{agent_cli, argv, path};
use crate::common::Spur;

const PRESETS: [&str; 5] = ["claude", "codex", "gemini", "opencode", "aider"];

/// A project with every preset under its own name (plus `extra` entries), the stand-ins on
/// PATH, and a pipeline that runs one `agent.run` step per preset with `input`.
fn run_every_preset(input: &str, extra: &str) -> Spur {
    let p = Spur::new();
    let mut config = String::from("agents:\n");
    for name in PRESETS {
        config.push_str(&format!("  {name}: {{ preset: {name} }}\n"));
        agent_cli(&p, name);
    }
    config.push_str(extra);
    p.file(".spur/config.yaml", config);
    let steps: String = PRESETS
        .iter()
        .map(|a| {
            format!(
                "      - {{kind: agent.run, options: {{agent: {a}, input: '${{vars.input}}'}}}}\n"
            )
        })
        .collect();
    let yaml = format!(
        "name: presets\ninitialState: a\nvars: {{input: x}}\nstates:\n  - id: a\n    onEnter:\n{steps}  - {{id: b}}\ntransitions: [{{from: a, to: b}}]\n"
    );
    p.pipeline(&yaml)
        .var("input", input)
        .env("PATH", path(&p))
        .run()
        .success();
    p
}

/// Each preset's recorded argv, one line per CLI.
fn table(p: &Spur) -> String {
    PRESETS
        .iter()
        .map(|name| format!("{name} {:?}\n", argv(p, name)))
        .collect()
}

#[test]
fn each_preset_runs_its_cli_headless_with_the_slash_command_in_its_dialect() {
    let p = run_every_preset("/implement 0592", "");
    insta::assert_snapshot!(table(&p));
    for name in PRESETS {
        // No terminal and nothing on stdin: a CLI that reads stdin when it is not a TTY
        // (codex, opencode) gets EOF at once instead of waiting.
        assert_eq!(p.read(&format!("calls/{name}.stdin")), "", "{name}");
        assert_eq!(
            p.read(&format!("calls/{name}.cwd")).trim_end(),
            p.path().canonicalize().unwrap().display().to_string(),
            "{name}"
        );
    }
}

#[test]
fn a_namespaced_slash_command_and_plain_text_reach_each_cli_as_it_reads_them() {
    let p = run_every_preset("/sp:dev-run 0592 --auto", "");
    insta::assert_snapshot!("namespaced", table(&p));
    let plain = run_every_preset("Fix the typo in README.md", "");
    insta::assert_snapshot!("plain", table(&plain));
}

#[test]
fn an_input_that_looks_like_a_flag_or_shell_arrives_as_the_prompt_literally() {
    let input = "--help; $(touch pwned) \"q\" 'x'\nline two";
    let p = run_every_preset(input, "");
    assert_eq!(argv(&p, "claude").last().unwrap(), input);
    assert_eq!(argv(&p, "claude")[argv(&p, "claude").len() - 2], "--");
    assert_eq!(argv(&p, "codex").last().unwrap(), input);
    assert_eq!(argv(&p, "opencode").last().unwrap(), input);
    assert_eq!(
        argv(&p, "gemini").last().unwrap(),
        &format!("--prompt={input}")
    );
    assert_eq!(
        argv(&p, "aider").last().unwrap(),
        &format!("--message={input}")
    );
    assert!(!p.exists("pwned"));
}

#[test]
fn a_users_command_wins_over_the_preset_and_args_add_to_it() {
    let p = Spur::new();
    agent_cli(&p, "codex");
    agent_cli(&p, "claude");
    p.file(
        ".spur/config.yaml",
        "agents:\n  fast: { preset: codex, command: \"codex exec --full-auto\" }\n  opus: { preset: claude, args: [--model, opus] }\n",
    );
    let yaml = "name: own\ninitialState: a\nstates:\n  - id: a\n    onEnter:\n      - {kind: agent.run, options: {agent: fast, input: '/implement 7'}}\n      - {kind: agent.run, options: {agent: opus, input: '/implement 7'}}\n  - {id: b}\ntransitions: [{from: a, to: b}]\n";
    p.pipeline(yaml).env("PATH", path(&p)).run().success();
    // The command line, then the input written for the preset's CLI.
    assert_eq!(argv(&p, "codex"), ["exec", "--full-auto", "$implement 7"]);
    assert_eq!(
        argv(&p, "claude"),
        [
            "-p",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Write",
            "Edit",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "opus",
            "--",
            "/implement 7"
        ]
    );
}

#[test]
fn the_stub_preset_runs_spur_itself() {
    let p = Spur::new();
    p.file(".spur/config.yaml", "agents:\n  stub: { preset: stub }\n");
    let yaml = "name: stub\ninitialState: a\nstates:\n  - id: a\n    onEnter:\n      - {kind: agent.run, options: {agent: stub, input: '/implement 0042', requireDiff: true}}\n      - {kind: agent.run, options: {agent: stub, input: '-- /fix 0042'}}\n  - {id: b}\ntransitions: [{from: a, to: b}]\n";
    p.pipeline(yaml)
        .env("PATH", "/usr/bin:/bin")
        .run()
        .success();
    // Nothing but spur is on PATH: the stub is the running spur ($SPUR_BIN).
    assert_eq!(
        p.read("NOTES.md"),
        "hello from task 0042 (written by spur's stub agent for `/implement 0042`)\n"
    );
}
