//! `spur init`: the files it writes (the pipeline byte for byte the one spur ships), the
//! printed next command running the sample task to a terminal with the stub, and never
//! writing over anything.

use super::{agent_cli, path};
use crate::common::{repo_path, Spur};

/// An empty git repository.
fn git_repo() -> Spur {
    let p = Spur::new();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(p.path())
        .status()
        .expect("git is needed by these tests (install git)");
    assert!(status.success());
    p
}

/// The `created_at`/`updated_at` date, which changes every day.
fn undated(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once(": ") {
            Some((key @ ("created_at" | "updated_at"), _)) => format!("{key}: [now]"),
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn init_with_the_stub_scaffolds_a_project_whose_next_command_runs_the_sample_to_done() {
    let p = git_repo();
    let out = p.args(["init", "--agent", "stub"]).run().success();
    insta::assert_snapshot!(out.stdout());
    insta::assert_snapshot!("config", p.read(".spur/config.yaml"));
    insta::assert_snapshot!(
        "sample_task",
        undated(&p.read("docs/tasks/0001_say-hello.md"))
    );
    assert_eq!(
        p.read("pipelines/task-pipeline.yaml"),
        std::fs::read_to_string(repo_path("pipelines/task-pipeline.yaml")).unwrap()
    );
    p.args(["check", "pipelines/task-pipeline.yaml"])
        .run()
        .success();
    p.args(["agent", "doctor"]).run().success();
    // The sample is a well-formed task: `task check` passes it with one warning only (it
    // names no feature), so the first thing a new user checks does not look broken.
    let check = p
        .args(["task", "check", "0001", "--json"])
        .run()
        .success()
        .stdout_json();
    let codes: Vec<&str> = check[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(codes, ["L4.missing-feature-id"], "{check:#}");

    // The command init printed, as printed.
    let next = out
        .stdout()
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("spur run "))
        .unwrap()
        .to_owned();
    let args: Vec<&str> = next.split_whitespace().skip(1).collect();
    let run = p.args(args).json().run().success().stdout_json();
    assert_eq!(run["outcome"], "done");
    assert_eq!(run["state"], "done");
    assert_eq!(run["doneGate"]["decision"], "allow");
    assert_eq!(run["doneGate"]["verdict"], "PASS");
    assert_eq!(
        p.read("NOTES.md"),
        "hello from task 0001 (written by spur's stub agent for `/implement 0001`)\n"
    );
}

#[test]
fn the_stub_verifier_answers_fail_when_a_criterions_command_fails() {
    let p = git_repo();
    p.args(["init", "--agent", "stub"]).run().success();
    // A second task the stub cannot do: its criterion's command fails.
    p.file(
        "docs/tasks/0002_other.md",
        "---\nname: \"Other\"\ndescription: \"A task the stub cannot do\"\nstatus: todo\ntemplate: standard\ncreated_at: 2026-01-01\nupdated_at: 2026-01-01\npriority: P3\ntags: []\n---\n\n## 0002. Other\n\n### Background\n\nThe stub agent does not write other.txt.\n\n### Requirements\n- [ ] R1. **Other.** `other.txt` exists.\n\n### Acceptance Criteria\n\n```gherkin\nScenario: R1 — other.txt exists\n  Given the project\n  When the task is implemented\n  Then `test -f other.txt` passes\n```\n\n### Design\n\n### Plan\n\n### Solution\n\n### Testing\n",
    );
    let run = p
        .args(["run", "pipelines/task-pipeline.yaml", "--var", "wbs=0002"])
        .args([
            "--var",
            "agent=stub",
            "--var",
            "reviewAgent=stub",
            "--var",
            "verifyAgent=stub",
        ])
        .args(["--var", "profile=auto"])
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(run["state"], "record");
    assert_eq!(run["doneGate"]["decision"], "deny");
    insta::assert_snapshot!(p.read(".spur/run/0002-verify-answer.md"));
}

#[test]
fn init_refuses_to_write_over_existing_files_and_writes_nothing() {
    let p = git_repo();
    p.file(".spur/config.yaml", "agents: { mine: { command: ./a } }\n");
    p.file("docs/tasks/0001_say-hello.md", "mine\n");
    let out = p.args(["init", "--agent", "claude"]).run().code(2);
    insta::assert_snapshot!(out.stderr_redacted());
    assert_eq!(
        p.read(".spur/config.yaml"),
        "agents: { mine: { command: ./a } }\n"
    );
    assert_eq!(p.read("docs/tasks/0001_say-hello.md"), "mine\n");
    assert!(!p.exists("pipelines"));
}

#[test]
fn init_refuses_a_dangling_symlink_where_a_file_would_go() {
    let p = git_repo();
    std::fs::create_dir_all(p.join("pipelines")).unwrap();
    std::os::unix::fs::symlink(
        p.join("elsewhere.yaml"),
        p.join("pipelines/task-pipeline.yaml"),
    )
    .unwrap();
    p.args(["init", "--agent", "stub"])
        .run()
        .code(2)
        .stderr_contains("task-pipeline.yaml");
    assert!(!p.exists("elsewhere.yaml") && !p.exists(".spur/config.yaml"));
}

#[test]
fn init_without_an_agent_takes_the_first_cli_on_path_and_says_so_in_json() {
    let p = git_repo();
    agent_cli(&p, "codex");
    agent_cli(&p, "aider");
    let out = p
        .args(["init", "--json"])
        .env("PATH", path(&p))
        .run()
        .success();
    insta::assert_snapshot!(out.stdout());
    assert!(p
        .read(".spur/config.yaml")
        .contains("  codex: { preset: codex }\n"));
    p.args(["agent", "doctor"])
        .env("PATH", path(&p))
        .run()
        .success();
    let none = git_repo();
    none.args(["init"])
        .env("PATH", "/usr/bin:/bin")
        .run()
        .success()
        .stdout_contains("spur init: agent stub (spur's stand-in: no agent CLI found on PATH)");
}

#[test]
fn init_rejects_an_unknown_preset() {
    let p = git_repo();
    p.args(["init", "--agent", "copilot"])
        .run()
        .code(2)
        .stderr_contains(
            "not a preset: \"copilot\" (one of claude, codex, gemini, opencode, aider, stub)",
        );
    assert!(!p.exists(".spur"));
}
