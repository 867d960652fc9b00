//! `spur agent doctor`: found, version, login; the reason and hint for each unusable agent;
//! exit 1 when one is unusable, 2 when `agents:` cannot be read.

use super::{agent_cli, path};
use crate::common::Spur;

/// A project whose config maps `agents` (YAML of the `agents:` mapping's entries).
fn project(agents: &str) -> Spur {
    let p = Spur::new();
    p.file(".spur/config.yaml", format!("agents:\n{agents}"));
    p
}

/// `spur agent doctor ARGS` with the stand-ins' PATH and no gemini credential variables.
fn doctor(p: &Spur, args: &[&str]) -> crate::common::Output {
    p.args(["agent", "doctor"])
        .args(args)
        .env("PATH", path(p))
        .env_remove("GEMINI_API_KEY")
        .env_remove("GOOGLE_API_KEY")
        .run()
}

#[test]
fn every_agent_found_answering_and_logged_in_is_usable() {
    let p = project(
        "  claude: { preset: claude }\n  codex: { preset: codex }\n  gemini: { preset: gemini }\n",
    );
    for cli in ["claude", "codex", "gemini"] {
        agent_cli(&p, cli);
    }
    let human = doctor(&p, &[]).success();
    insta::assert_snapshot!(human.stdout_redacted());
    let json = p
        .args(["agent", "doctor", "--json"])
        .env("PATH", path(&p))
        .env("GEMINI_API_KEY", "k")
        .env_remove("GOOGLE_API_KEY")
        .run()
        .success();
    insta::assert_snapshot!(json.stdout_redacted());
    let doc = json.stdout_json();
    assert_eq!(doc["agents"][0]["authenticated"], "authenticated");
    assert_eq!(doc["agents"][0]["probe"]["exitCode"], 0);
    // gemini has no status command: a credential variable it reads is the answer.
    assert_eq!(doc["agents"][2]["authenticated"], "authenticated");
    assert_eq!(doc["agents"][2]["probe"]["detail"], "GEMINI_API_KEY is set");
}

#[test]
fn a_missing_agent_is_not_usable_with_the_reason_and_a_hint() {
    let p = project("  claude: { preset: claude }\n  aider: { preset: aider }\n");
    agent_cli(&p, "claude");
    // A file of the right name that is not executable is not the program.
    p.file("bin/aider", "#!/bin/sh\necho should not run\n");
    let human = doctor(&p, &[]).code(1);
    insta::assert_snapshot!(human.stdout_redacted());
    let out = doctor(&p, &["--json"]).code(1);
    insta::assert_snapshot!(out.stdout_redacted());
    let json = out.stdout_json();
    assert_eq!(json["agents"][1]["installed"], false);
    assert_eq!(json["agents"][1]["usable"], false);
    // Naming only the usable one checks only it.
    doctor(&p, &["claude"]).success();
}

#[test]
fn an_agent_whose_login_probe_says_logged_out_is_not_usable() {
    let p = project("  codex: { preset: codex }\n  claude: { preset: claude }\n");
    agent_cli(&p, "codex");
    agent_cli(&p, "claude");
    p.file("bin/codex.login", "Not logged in\n");
    p.file("bin/codex.login-exit", "1\n");
    let human = doctor(&p, &[]).code(1);
    insta::assert_snapshot!(human.stdout_redacted());
    let out = doctor(&p, &["--json"]).code(1);
    insta::assert_snapshot!(out.stdout_redacted());
    let json = out.stdout_json();
    assert_eq!(json["agents"][0]["status"], "logged-out");
    assert_eq!(json["agents"][0]["authenticated"], "unauthenticated");
    assert_eq!(json["agents"][1]["usable"], true);
}

#[test]
fn a_status_command_that_fails_without_saying_logged_out_is_unknown_not_unusable() {
    // A CLI that renamed its status command must not stop every run.
    let p = project("  claude: { preset: claude }\n");
    agent_cli(&p, "claude");
    p.file("bin/claude.login", "error: unknown command 'auth'\n");
    p.file("bin/claude.login-exit", "2\n");
    let json = doctor(&p, &["--json"]).success().stdout_json();
    assert_eq!(json["agents"][0]["authenticated"], "unknown");
    assert_eq!(json["agents"][0]["probe"]["exitCode"], 2);
    assert_eq!(json["agents"][0]["usable"], true);
}

#[test]
fn an_agent_whose_version_fails_is_broken() {
    let p = project("  claude: { preset: claude }\n");
    agent_cli(&p, "claude");
    p.file("bin/claude.version-fails", "");
    let out = doctor(&p, &[]).code(1);
    let text = out.stdout_redacted();
    assert!(text.contains("✗  claude  broken"), "{text}");
    assert!(
        text.contains(
            "why:  `claude --version` exited with code 3: claude: cannot load its runtime"
        ),
        "{text}"
    );
}

#[test]
fn a_command_line_is_looked_up_and_never_run() {
    let p = project(
        "  mine: { command: \"./agent.sh --fast\" }\n  gone: { command: \"no-such-agent -p\" }\n  shell: { command: \"$(touch pwned) x\" }\n",
    );
    p.file("agent.sh", "#!/bin/sh\ntouch ran\n");
    crate::run::make_executable(&p.join("agent.sh"));
    let json = doctor(&p, &["--json"]).code(1).stdout_json();
    let status: Vec<&str> = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["usable", "missing", "unchecked"]);
    assert_eq!(json["agents"][0]["program"], "./agent.sh");
    assert!(!p.exists("ran") && !p.exists("pwned"));
}

#[test]
fn an_unconfigured_name_or_no_agents_is_exit_1_and_a_broken_config_exit_2() {
    let p = project("  claude: { preset: claude }\n");
    agent_cli(&p, "claude");
    let out = doctor(&p, &["codex"]).code(1);
    let text = out.stdout_redacted();
    assert!(text.contains("✗  codex  unconfigured"), "{text}");
    assert!(
        text.contains(
            "hint: add `agents: { codex: { preset: codex } }` to [PROJECT]/.spur/config.yaml"
        ),
        "{text}"
    );
    let empty = Spur::new();
    empty
        .args(["agent", "doctor"])
        .run()
        .code(1)
        .stdout_contains("no agents under `agents:`");
    let broken = project("  claude: { preset: cladue }\n");
    let err = broken.args(["agent", "doctor"]).run().code(2);
    insta::assert_snapshot!(err.stderr_redacted());
}
