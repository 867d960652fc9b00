//! Secrets stay out of records (book: *Secrets*): a var listed under `secrets:` reaches
//! the steps as before, and its value appears nowhere spur records or prints — the state
//! directory (journal, action logs), `spur trace`, `spur runs`, `--json` output, stderr —
//! even when a step echoes it, fails with it, or a guard prints it.

use std::path::Path;

use crate::common::Spur;

const SECRET: &str = "s3cr3t-value";

/// The step writes the token it received to a file of the project (not spur's record),
/// echoes it to stdout and stderr, a note and a guard use it.
const PIPELINE: &str = r#"
name: secrets
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars: {token: "", other: "plain"}
secrets: [token]
states:
  - id: work
    onEnter:
      - {kind: shell, options: {command: "printf '%s' \"$token\" > received.txt; echo \"out ${vars.token}\"; echo \"err $token\" >&2"}}
      - {kind: note, options: {message: "the token is ${vars.token}"}}
  - {id: done}
  - {id: failed}
transitions:
  - from: work
    to: done
    guard: {kind: shell, options: {command: "echo \"guard $token\"; echo \"guard $token\" >&2; test -n \"$token\""}}
"#;

/// Every file of the project's state, recursively — `.spur/` and the protected state
/// outside the project: none may hold the secret.
fn assert_nowhere_in(p: &Spur) {
    let mut stack = vec![p.path().join(".spur"), p.protected()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(SECRET),
                "{} holds the secret:\n{}",
                path.display(),
                String::from_utf8_lossy(&bytes)
            );
        }
    }
    assert!(files >= 2, "the run wrote its journal and action logs");
}

fn assert_not_in(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} holds the secret:\n{text}");
}

#[test]
fn a_secret_reaches_the_step_and_nothing_spur_records_or_prints() {
    let p = Spur::new();
    let run = p
        .pipeline(PIPELINE)
        .var("token", SECRET)
        .json()
        .run()
        .success();
    assert_eq!(
        p.read("received.txt"),
        SECRET,
        "the step got the real value"
    );
    assert_not_in("spur run --json stdout", run.stdout());
    assert_not_in("spur run stderr", run.stderr());
    let run_id = run.stdout_json()["runId"].as_str().unwrap().to_owned();

    assert_nowhere_in(&p);
    let journal = p.read(&format!(".spur/runs/{run_id}/journal.jsonl"));
    assert!(journal.contains(r#""token":"[redacted]""#), "{journal}");
    assert!(journal.contains("the token is [redacted]"), "{journal}");
    assert!(
        journal.contains(r#""other":"plain""#),
        "other vars are kept: {journal}"
    );

    for args in [
        vec!["trace", run_id.as_str()],
        vec!["trace", run_id.as_str(), "--json"],
        vec!["runs"],
        vec!["runs", "--json"],
    ] {
        let out = p.args(&args).run().success();
        assert_not_in(&format!("spur {}", args.join(" ")), out.stdout());
        assert_not_in(&format!("spur {} stderr", args.join(" ")), out.stderr());
    }
    // The human progress lines of a run without --json.
    let human = p.pipeline(PIPELINE).var("token", SECRET).run().success();
    assert_not_in("spur run stdout", human.stdout());
    assert_not_in("spur run stderr", human.stderr());
}

#[test]
fn a_step_that_fails_with_the_secret_in_its_message_does_not_show_it() {
    let p = Spur::new();
    let failing = PIPELINE.replace(
        "printf '%s' \\\"$token\\\" > received.txt;",
        "echo \\\"denied for $token\\\" >&2; exit 3;",
    );
    assert_ne!(failing, PIPELINE);
    let run = p
        .pipeline(&failing)
        .var("token", SECRET)
        .json()
        .run()
        .code(1);
    assert_not_in("spur run --json stdout", run.stdout());
    assert_not_in("spur run stderr", run.stderr());
    let human = p.pipeline(&failing).var("token", SECRET).run().code(1);
    assert!(
        human.stderr().contains("denied for [redacted]")
            || human.stdout().contains("denied for [redacted]"),
        "the failure still says what failed:\n{}\n{}",
        human.stdout(),
        human.stderr()
    );
    assert_not_in("spur run stdout", human.stdout());
    assert_not_in("spur run stderr", human.stderr());
    assert_nowhere_in(&p);
}

#[test]
fn a_secret_of_the_project_config_is_an_environment_variable_kept_out_too() {
    let p = Spur::new().file(".spur/config.yaml", "secrets: [API_KEY]\n");
    let pipeline = r#"
name: env-secret
initialState: work
terminalStates: [done]
states:
  - id: work
    onEnter:
      - {kind: shell, options: {command: "printf '%s' \"$API_KEY\" > received.txt; echo \"key=$API_KEY\""}}
  - {id: done}
transitions:
  - {from: work, to: done}
"#;
    let run = p
        .pipeline(pipeline)
        .env("API_KEY", SECRET)
        .json()
        .run()
        .success();
    assert_eq!(p.read("received.txt"), SECRET);
    assert_not_in("spur run --json", run.stdout());
    assert_nowhere_in(&p);
}

#[test]
fn a_resumed_run_needs_its_secret_again_and_gets_it_to_its_steps() {
    let p = Spur::new();
    let paused = r#"
name: paused-secret
initialState: wait
terminalStates: [done]
vars: {token: ""}
secrets: [token]
states:
  - {id: wait, pause: true}
  - id: work
    onEnter:
      - {kind: shell, options: {command: "printf '%s' \"$token\" > received.txt; echo \"$token\""}}
  - {id: done}
transitions:
  - {from: wait, to: work}
  - {from: work, to: done}
"#;
    let run = p.pipeline(paused).var("token", SECRET).json().run().code(3);
    let run_id = run.stdout_json()["runId"].as_str().unwrap().to_owned();
    p.args(["continue", &run_id])
        .run()
        .code(2)
        .stderr_contains("spur::run::secret-not-given");
    p.args(["continue", &run_id, "--var", "other=x"])
        .run()
        .code(2)
        .stderr_contains("spur::run::not-a-secret");
    let resumed = p
        .args([
            "continue",
            &run_id,
            "--var",
            &format!("token={SECRET}"),
            "--json",
        ])
        .run()
        .success();
    assert_eq!(
        p.read("received.txt"),
        SECRET,
        "the resumed step got the value"
    );
    assert_not_in("spur continue --json", resumed.stdout());
    assert_not_in("spur continue stderr", resumed.stderr());
    assert_nowhere_in(&p);
}

#[test]
fn check_refuses_a_secret_that_names_nothing_with_a_suggestion() {
    let p = Spur::new();
    let typo = PIPELINE.replace("secrets: [token]", "secrets: [tokne]");
    let checked = p
        .file("pipeline.yaml", &typo)
        .args(["check", "pipeline.yaml"])
        .run()
        .code(1);
    let text = format!("{}{}", checked.stdout(), checked.stderr());
    assert!(text.contains("spur::check::secret-unknown"), "{text}");
    assert!(text.contains("did you mean `token`"), "{text}");
}

#[test]
fn a_verify_gate_that_prints_the_secret_leaves_it_out_of_evidence_and_report() {
    let p = Spur::new().file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    leak:\n      command: 'echo \"gate saw $token\"; echo \"gate err $token\" >&2; exit 1'\n",
    );
    let pipeline = r#"
name: verify-secret
initialState: check
terminalStates: [done]
vars: {token: ""}
secrets: [token]
states:
  - id: check
    onEnter:
      - {kind: verify.run, options: {softFail: true}}
  - {id: done}
transitions:
  - {from: check, to: done}
"#;
    let run = p
        .pipeline(pipeline)
        .var("token", SECRET)
        .json()
        .run()
        .success();
    assert_not_in("spur run --json", run.stdout());
    assert_not_in("spur run stderr", run.stderr());
    let run_id = run.stdout_json()["runId"].as_str().unwrap().to_owned();
    let log = std::fs::read_dir(p.join(&format!(".spur/runs/{run_id}/actions")))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("leak"), "the gate ran: {log}");
    assert_nowhere_in(&p);
    let evidence = walk(&p.join(".spur"))
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("evidence"))
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect::<String>();
    assert!(
        evidence.contains("gate saw [redacted]"),
        "the evidence keeps the output, redacted:\n{evidence}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn the_task_id_cannot_be_secret() {
    let p = Spur::new();
    let task = PIPELINE
        .replace("secrets: [token]", "secrets: [wbs]")
        .replace(
            "vars: {token: \"\", other: \"plain\"}",
            "vars: {token: \"\", other: \"plain\", wbs: \"\"}",
        );
    assert_ne!(task, PIPELINE);
    let checked = p
        .file("pipeline.yaml", &task)
        .args(["check", "pipeline.yaml"])
        .run()
        .code(1);
    let text = format!("{}{}", checked.stdout(), checked.stderr());
    assert!(text.contains("spur::check::secret-task-id"), "{text}");
}

#[test]
fn a_log_left_unredacted_by_a_killed_spur_is_redacted_when_the_run_resumes() {
    let p = Spur::new();
    let pipeline = r#"
name: killed-secret
initialState: work
terminalStates: [done]
vars: {token: ""}
secrets: [token]
states:
  - id: work
    onEnter:
      - {kind: shell, options: {command: "echo \"out $token\""}}
  - {id: done}
transitions:
  - {from: work, to: done}
"#;
    // seq 5 is the action's `action-finished` (after `action-started` and
    // `action-process`): spur dies before it rewrites the log.
    p.pipeline(pipeline)
        .var("token", SECRET)
        .env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", "5")
        .run()
        .killed();
    let runs = walk(&p.join(".spur/runs"));
    let log = runs
        .iter()
        .find(|f| f.extension().is_some_and(|e| e == "log"))
        .expect("the action's log");
    assert!(
        std::fs::read_to_string(log).unwrap().contains(SECRET),
        "the kill left the log as the step wrote it"
    );
    let run_id = log
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    p.args(["continue", &run_id, "--var", &format!("token={SECRET}")])
        .run()
        .success();
    assert_nowhere_in(&p);
}

#[test]
fn a_var_argument_without_a_name_is_not_echoed() {
    let p = Spur::new();
    let out = p.pipeline(PIPELINE).args(["--var", SECRET]).run().code(2);
    assert_not_in("spur run --var VALUE stderr", out.stderr());
    out.stderr_contains("spur::usage::var-syntax");
    // A declared name without its value is still shown: that is the common slip.
    p.pipeline(PIPELINE)
        .args(["--var", "token"])
        .run()
        .code(2)
        .stderr_contains("--var \"token\" is not of the form name=value");
}
