//! Bounded reads through the binary: every file spur reads under the project or the state
//! directory may have been replaced by a step with a FIFO (an open or read that never
//! returns), a symbolic link to `/dev/zero` (endless bytes) or a directory. Each must end in
//! a clear error naming the file, never a hang or a huge read. Every command here runs
//! under a deadline, so a regression fails the test instead of stalling the suite.

use std::path::Path;
use std::time::Duration;

use crate::common::{events, Spur};

/// Far above what any of these commands takes; a hang is killed here and fails the test.
const DEADLINE: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn link_to_dev_zero(path: &Path) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// A one-state pipeline running `actions` on entry, then a choice: `guard` → pass, else
/// → other.
fn pipeline(actions: &str, guard: &str) -> String {
    format!(
        r#"
name: bounded
initialState: a
terminalStates: [pass, other]
vars: {{out: ""}}
states:
  - id: a
    onEnter:
{actions}
  - {{id: pass}}
  - {{id: other}}
transitions:
  - {{from: a, to: pass, guard: {guard}}}
  - {{from: a, to: other}}
"#
    )
}

const NOOP: &str = "      - {kind: shell, options: {command: 'true'}}";

/// The `detail` of the run's first guard evaluation.
fn guard_detail(project: &Spur) -> String {
    events(&project.newest_trace(), "guard-evaluated")[0]["detail"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The `error` (or message) of the run's first failed action.
fn failed_action(project: &Spur) -> String {
    let records = project.newest_trace();
    let failed = events(&records, "action-finished")
        .into_iter()
        .find(|r| r["ok"] == false)
        .unwrap_or_else(|| panic!("no failed action in {records:#?}"))
        .clone();
    failed.to_string()
}

// ---- guards -------------------------------------------------------------------------------

#[test]
fn a_jq_guard_whose_file_is_a_fifo_fails_closed_without_waiting() {
    let project = Spur::new();
    mkfifo(&project.join("in.json"));
    let yaml = pipeline(NOOP, "{kind: jq, options: {file: in.json, expr: 'true'}}");
    let out = project
        .pipeline(&yaml)
        .json()
        .within(DEADLINE)
        .run()
        .success();
    assert_eq!(out.stdout_json()["state"], "other");
    let detail = guard_detail(&project);
    assert!(
        detail.contains("in.json") && detail.contains("a FIFO"),
        "{detail}"
    );
}

#[test]
fn a_jq_guard_whose_file_links_to_dev_zero_is_refused_unread() {
    let project = Spur::new();
    link_to_dev_zero(&project.join("in.json"));
    let yaml = pipeline(NOOP, "{kind: jq, options: {file: in.json, expr: 'true'}}");
    let out = project
        .pipeline(&yaml)
        .json()
        .within(DEADLINE)
        .run()
        .success();
    assert_eq!(out.stdout_json()["state"], "other");
    let detail = guard_detail(&project);
    assert!(
        detail.contains("in.json") && detail.contains("a character device"),
        "{detail}"
    );
}

// ---- actions ------------------------------------------------------------------------------

#[test]
fn run_artifact_on_a_fifo_records_it_without_a_digest() {
    let project = Spur::new();
    mkfifo(&project.join("report.json"));
    let yaml = pipeline(
        "      - {kind: run.artifact, options: {path: report.json}}",
        "{kind: action-ok}",
    );
    project
        .pipeline(&yaml)
        .json()
        .within(DEADLINE)
        .run()
        .success();
    let run = project.only_run_id();
    let record = project.read(&format!(".spur/runs/{run}/artifacts.jsonl"));
    let record: serde_json::Value = serde_json::from_str(record.trim()).unwrap();
    assert_eq!(record["path"], "report.json");
    assert_eq!(record["sha256"], serde_json::Value::Null);
}

#[test]
fn run_artifact_fails_when_a_step_made_the_record_file_a_fifo() {
    let project = Spur::new();
    let yaml = pipeline(
        "      - {kind: shell, options: {command: 'mkfifo \"$(ls -d $SPUR_TEST_PROTECTED/runs/*/)artifacts.jsonl\"'}}\n      \
         - {kind: run.artifact, options: {path: pipeline.yaml}}",
        "{kind: action-ok}",
    );
    // The step writes the protected state: the sandbox off, as without Landlock.
    let out = project
        .pipeline(&yaml)
        .json()
        .env("SPUR_SANDBOX", "off")
        .within(DEADLINE)
        .run();
    assert!(out.exit_code().is_some());
    let failed = failed_action(&project);
    assert!(
        failed.contains("artifacts.jsonl") && failed.contains("a FIFO"),
        "{failed}"
    );
}

#[test]
fn file_read_into_var_refuses_a_link_to_dev_zero() {
    let project = Spur::new();
    link_to_dev_zero(&project.join("big.txt"));
    let yaml = pipeline(
        // `allowOutside` passes the project-root check, so the reader's own refusal shows.
        "      - {kind: file.read.into-var, options: {path: big.txt, var: out, allowOutside: true}}",
        "{kind: action-ok}",
    );
    project.pipeline(&yaml).json().within(DEADLINE).run();
    let failed = failed_action(&project);
    assert!(
        failed.contains("big.txt") && failed.contains("a character device"),
        "{failed}"
    );
}

#[test]
fn json_update_refuses_a_link_to_dev_zero() {
    let project = Spur::new();
    link_to_dev_zero(&project.join("data.json"));
    let yaml = pipeline(
        "      - {kind: json.update, options: {path: data.json, expr: '.'}}",
        "{kind: action-ok}",
    );
    project.pipeline(&yaml).json().within(DEADLINE).run();
    let failed = failed_action(&project);
    assert!(
        failed.contains("data.json") && failed.contains("a character device"),
        "{failed}"
    );
    assert!(std::fs::symlink_metadata(project.join("data.json"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn proof_fingerprint_hashes_a_fifo_and_a_link_to_dev_zero_without_opening_them() {
    let project = Spur::new();
    mkfifo(&project.join("tree/fifo"));
    link_to_dev_zero(&project.join("tree/zero"));
    let yaml = pipeline(
        "      - {kind: proof.fingerprint, options: {var: out}}",
        "{kind: action-ok}",
    );
    let out = project
        .pipeline(&yaml)
        .json()
        .within(DEADLINE)
        .run()
        .success();
    assert_eq!(out.stdout_json()["state"], "pass");
}

#[test]
fn a_step_that_makes_the_next_action_log_a_fifo_fails_that_action() {
    let project = Spur::new();
    // Every log name the next actions could get (`actions/<seq>-shell.log`).
    let yaml = pipeline(
        "      - {kind: shell, options: {command: 'd=$(ls -d $SPUR_TEST_PROTECTED/runs/*/)actions; for i in $(seq 1 40); do mkfifo \"$d/$(printf %04d $i)-shell.log\" 2>/dev/null; done; true'}}\n      \
         - {kind: shell, options: {command: 'true'}}",
        "{kind: action-ok}",
    );
    // The step writes the protected state: the sandbox off, as without Landlock.
    project
        .pipeline(&yaml)
        .json()
        .env("SPUR_SANDBOX", "off")
        .within(DEADLINE)
        .run();
    let failed = failed_action(&project);
    assert!(
        failed.contains(".log") && failed.contains("a FIFO"),
        "{failed}"
    );
}

#[test]
fn agent_run_require_diff_over_a_tree_with_a_fifo_and_a_link_to_dev_zero() {
    let project = Spur::new()
        .file(
            ".spur/config.yaml",
            "agents:\n  stub: {command: 'echo made > made.txt'}\n",
        )
        .clone();
    mkfifo(&project.join("tree/fifo"));
    link_to_dev_zero(&project.join("tree/zero"));
    let yaml = pipeline(
        "      - {kind: agent.run, options: {agent: stub, requireDiff: true}}",
        "{kind: action-ok}",
    );
    let out = project
        .pipeline(&yaml)
        .json()
        .within(DEADLINE)
        .run()
        .success();
    assert_eq!(out.stdout_json()["state"], "pass", "{}", out.stderr());
}

// ---- the state directory ------------------------------------------------------------------

#[test]
fn a_config_yaml_fifo_is_refused_by_verify_agent_run_and_the_gate() {
    let project = Spur::new();
    mkfifo(&project.join(".spur/config.yaml"));
    let verify = project.args(["verify"]).within(DEADLINE).run();
    assert_ne!(verify.exit_code(), Some(0));
    let text = verify.stdout().to_owned() + verify.stderr();
    assert!(
        text.contains("config.yaml") && text.contains("a FIFO"),
        "{text}"
    );

    let yaml = pipeline(
        "      - {kind: agent.run, options: {agent: stub}}",
        "{kind: action-ok}",
    );
    // `spur run` reads the config's `defaults:` and `secrets:` before it starts: a FIFO
    // there refuses the run (exit 2, nothing run) instead of hanging it.
    let run = project.pipeline(&yaml).json().within(DEADLINE).run();
    assert_eq!(run.exit_code(), Some(2), "{}", run.stderr());
    let text = run.stdout().to_owned() + run.stderr();
    assert!(
        text.contains("config.yaml") && text.contains("a FIFO"),
        "{text}"
    );
    assert!(!project.join(".spur/runs").exists(), "no run started");

    // The gate reads `doneGate:` once there is a PASS to judge.
    std::fs::remove_file(project.join(".spur/config.yaml")).unwrap();
    crate::common::fixture_verdict_through_spur(&project, "0592", "examples/verdicts/pass.json");
    mkfifo(&project.join(".spur/config.yaml"));
    let update = project
        .args(["task", "update", "0592", "done", "--json"])
        .within(DEADLINE)
        .run();
    assert_eq!(update.exit_code(), Some(1), "{}", update.stderr());
    let text = update.stdout().to_owned() + update.stderr();
    assert!(
        text.contains("config.yaml") && text.contains("a FIFO"),
        "{text}"
    );
}

#[test]
fn a_verdict_artifact_fifo_denies_done_without_waiting() {
    let project = Spur::new();
    mkfifo(&project.join(".spur/run/0592-verdict.json"));
    let update = project
        .args(["task", "update", "0592", "done", "--json"])
        .within(DEADLINE)
        .run()
        .code(1);
    let json = update.stdout_json();
    assert_eq!(json["decision"], "deny");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("0592-verdict.json"), "{message}");
}

#[test]
fn a_journal_fifo_is_refused_by_continue_trace_and_runs() {
    let project = Spur::new().fixture("examples/run/approve.yaml", "approve.yaml");
    let paused = project
        .args(["run", "approve.yaml"])
        .json()
        .within(DEADLINE)
        .run()
        .code(3)
        .stdout_json();
    let id = paused["runId"].as_str().unwrap().to_owned();
    mkfifo(&project.join(&format!(".spur/runs/{id}/journal.jsonl")));
    for args in [
        vec!["continue", id.as_str(), "--answer", "yes"],
        vec!["trace", id.as_str()],
    ] {
        let out = project.args(&args).within(DEADLINE).run();
        assert_ne!(out.exit_code(), Some(0), "{args:?}");
        let text = out.stdout().to_owned() + out.stderr();
        assert!(
            text.contains("journal.jsonl") && text.contains("a FIFO"),
            "{args:?}: {text}"
        );
    }
    // The listing skips what it cannot read rather than waiting on it.
    project.args(["runs"]).within(DEADLINE).run().success();
}

#[test]
fn lock_files_swapped_for_fifos_do_not_hang() {
    let project = Spur::new();
    mkfifo(&project.join(".spur/locks/data/0592.lock"));
    let out = project
        .args(["task", "update", "0592", "in-progress"])
        .within(DEADLINE)
        .run()
        .code(1)
        .stderr_contains("spur::task::data-lock");
    assert!(out.stderr().contains("a FIFO"), "{}", out.stderr());

    mkfifo(&project.join(".spur/locks/0593.lock"));
    let yaml = "name: p\ninitialState: a\nvars: {wbs: ''}\nstates: [{id: a}]\ntransitions: []\n";
    let out = project
        .pipeline(yaml)
        .var("wbs", "0593")
        .within(DEADLINE)
        .run()
        .stderr_contains("spur::run::lock-io");
    assert!(
        out.stderr().contains("0593.lock") && out.stderr().contains("a FIFO"),
        "{}",
        out.stderr()
    );
}

#[test]
fn a_task_ledger_or_view_fifo_is_refused() {
    let project = Spur::new();
    mkfifo(&project.join(".spur/ledger/tasks/0592.jsonl"));
    let out = project
        .args(["task", "update", "0592", "in-progress", "--json"])
        .within(DEADLINE)
        .run();
    assert_ne!(out.exit_code(), Some(0));
    let text = out.stdout().to_owned() + out.stderr();
    assert!(
        text.contains("0592.jsonl") && text.contains("a FIFO"),
        "{text}"
    );

    let project = Spur::new();
    mkfifo(&project.join(".spur/tasks/0592.json"));
    project
        .args(["task", "show", "0592"])
        .within(DEADLINE)
        .run()
        .success()
        .stdout_contains("0592.json is ignored: it cannot be read: it is a FIFO");
}

#[test]
fn an_audit_log_fifo_fails_a_forced_done_and_audit_verify() {
    let project = Spur::new();
    mkfifo(&project.join(".spur/audit.jsonl"));
    let out = project
        .args([
            "task",
            "update",
            "0592",
            "done",
            "--force-done",
            "--reason",
            "r",
            "--json",
        ])
        .env("USER", "ada")
        .within(DEADLINE)
        .run();
    assert_ne!(out.exit_code(), Some(0));
    let text = out.stdout().to_owned() + out.stderr();
    assert!(
        text.contains("audit.jsonl") && text.contains("a FIFO"),
        "{text}"
    );
    let out = project.args(["audit", "verify"]).within(DEADLINE).run();
    assert_ne!(out.exit_code(), Some(0));
    let text = out.stdout().to_owned() + out.stderr();
    assert!(
        text.contains("audit.jsonl") && text.contains("a FIFO"),
        "{text}"
    );
}

#[test]
fn a_pipeline_file_fifo_is_refused_by_run_and_check() {
    let project = Spur::new();
    mkfifo(&project.join("p.yaml"));
    for args in [["run", "p.yaml"], ["check", "p.yaml"]] {
        let out = project.args(args).within(DEADLINE).run();
        assert_ne!(out.exit_code(), Some(0));
        let text = out.stdout().to_owned() + out.stderr();
        assert!(
            text.contains("p.yaml") && text.contains("FIFO"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn answer_and_task_file_fifos_are_refused() {
    let project = Spur::new();
    mkfifo(&project.join("answer.md"));
    let out = project
        .args(["task", "verdict", "0592", "--from-answer", "answer.md"])
        .within(DEADLINE)
        .run();
    assert_ne!(out.exit_code(), Some(0));
    let text = out.stdout().to_owned() + out.stderr();
    assert!(
        text.contains("answer.md") && text.contains("FIFO"),
        "{text}"
    );

    std::fs::remove_file(project.join("answer.md")).unwrap();
    project.file("answer.md", "# Answer\n");
    mkfifo(&project.join("task.md"));
    project
        .args(["task", "verdict", "0592", "--from-answer", "answer.md"])
        .args(["--task", "task.md"])
        .within(DEADLINE)
        .run()
        .stderr_contains("spur::task-file::unreadable")
        .stderr_contains("task.md: it is a FIFO, not a regular file");
}

#[test]
fn a_verify_gate_that_makes_its_findings_file_a_fifo_is_refused() {
    let project = Spur::new().file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    g: {command: 'rm -f \"$SPUR_FINDINGS_FILE\"; mkfifo \"$SPUR_FINDINGS_FILE\"'}\n",
    );
    let out = project.args(["verify", "--json"]).within(DEADLINE).run();
    let gate = &out.stdout_json()["gates"][0];
    assert_eq!(
        (&gate["name"], &gate["status"]),
        (&"g".into(), &"WARN".into())
    );
    let finding = gate["findings"][0]["message"].as_str().unwrap();
    assert!(
        finding.contains("g.findings.jsonl") && finding.contains("a FIFO"),
        "{finding}"
    );
}
