//! Every action kind: shell, note, run.artifact, file.read.into-var, agent.run,
//! command.gate, proof.fingerprint, json.update and plugin actions.

use serde_json::Value;

use super::make_executable;
use crate::common::{events, Spur};

/// Run a one-state pipeline with `actions` as onEnter; (exit code, outcome, records).
fn with_actions(p: &Spur, actions: &str, extra: &[&str]) -> (i32, Value, Vec<Value>) {
    let yaml = format!(
        r#"
name: actions
initialState: a
terminalStates: [b]
vars: {{x: "1", out: "", agent: stub, choice: ""}}
states:
  - id: a
    onEnter:
{actions}
  - {{id: b}}
transitions: [{{from: a, to: b}}]
"#
    );
    let run = p.pipeline(&yaml).args(extra).json().run();
    let out = serde_json::from_str(run.stdout()).unwrap_or(Value::Null);
    (run.exit_code().unwrap_or(-1), out, p.newest_trace())
}

fn finished(records: &[Value]) -> Vec<Value> {
    events(records, "action-finished")
        .into_iter()
        .cloned()
        .collect()
}

#[test]
fn shell_action_runs_with_vars_in_env_cwd_env_and_a_log_file() {
    let p = Spur::new();
    std::fs::create_dir_all(p.join("sub")).unwrap();
    let (code, _, records) = with_actions(
        &p,
        r#"      - {kind: shell, options: {command: 'echo "$x $EXTRA $(basename "$PWD")" > out.txt; echo to-log', cwd: sub, env: {EXTRA: e}}}"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("sub/out.txt"), "1 e sub\n");
    let started = events(&records, "action-started")[0].clone();
    let log = started["log"].as_str().unwrap();
    let runs = p.runs();
    let dir = format!(".spur/runs/{}/{log}", runs[0]["runId"].as_str().unwrap());
    assert_eq!(p.read(&dir), "to-log\n");
}

#[test]
fn shell_action_timeout_fails_with_failed_timeout() {
    let p = Spur::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: shell, options: {command: 'sleep 30', timeoutMs: 100}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["terminalReason"], "failed-timeout");
    assert_eq!(finished(&records)[0]["timedOut"], true);
}

#[test]
fn a_timeout_kills_the_whole_process_group_including_grandchildren() {
    // The test needs the timeout to fire after the shell started its grandchild and wrote
    // its pid (renamed into place, so the file is whole once it exists). How long that
    // takes is up to the machine: a run whose timeout came first, leaving no pid file, is
    // repeated with a longer timeout, up to 10 s.
    for timeout_ms in [300, 1_000, 3_000, 10_000] {
        let p = Spur::new();
        let (code, _, _) = with_actions(
            &p,
            &format!(
                r#"      - {{kind: shell, options: {{command: 'sh -c "sleep 100 & echo \$! > grandchild.tmp; mv grandchild.tmp grandchild.pid; sleep 100"', timeoutMs: {timeout_ms}}}}}"#
            ),
            &[],
        );
        assert_eq!(code, 1);
        if !p.exists("grandchild.pid") {
            continue;
        }
        let pid = p.read("grandchild.pid").trim().to_owned();
        // Gone, a zombie waiting for init to reap it, or with its SIGKILL pending: not running.
        assert!(
            !crate::common::process_is_running(&pid),
            "grandchild {pid} still running"
        );
        return;
    }
    panic!("the shell never wrote grandchild.pid before its timeout, even given 10 s");
}

#[test]
fn note_and_run_artifact_are_recorded_in_the_run() {
    let p = Spur::new();
    p.file("report.json", "{}");
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: note, options: {message: 'hello ${vars.x}'}}\n      - {kind: run.artifact, options: {path: report.json, artifactKind: report}}",
        &[],
    );
    assert_eq!(code, 0);
    let f = finished(&records);
    assert_eq!(f[0]["message"], "hello 1");
    let runs = p.runs();
    let artifacts = p.read(&format!(
        ".spur/runs/{}/artifacts.jsonl",
        runs[0]["runId"].as_str().unwrap()
    ));
    let line: Value = serde_json::from_str(artifacts.trim()).unwrap();
    assert_eq!(line["path"], "report.json");
    assert_eq!(line["kind"], "report");
    assert_eq!(line["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn file_read_into_var_fails_on_a_missing_file() {
    let p = Spur::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: file.read.into-var, options: {path: missing.txt, var: out}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["reason"], "action-failed");
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("missing.txt"));
}

/// A project whose config maps the agent `stub` to `command`.
fn agent_project(command: &str) -> Spur {
    Spur::new().file(
        ".spur/config.yaml",
        format!("verify: {{ ignored: true }}\nagents:\n  stub:\n    command: {command}\n"),
    )
}

#[test]
fn agent_run_passes_input_as_argument_and_env_and_captures_the_answer() {
    // The input arrives as the command's last argument ("$@") and as $SPUR_AGENT_INPUT.
    let p = agent_project(r#"'sh -c ''printf "arg=%s env=%s\n" "$1" "$SPUR_AGENT_INPUT"'' agent'"#);
    let (code, _, _) = with_actions(
        &p,
        r#"      - {kind: agent.run, options: {agent: '${vars.agent}', input: 'do task ${vars.x}; $(echo no)', answerFile: answer.txt, timeoutMs: 5000}}"#,
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(
        p.read("answer.txt"),
        "arg=do task 1; $(echo no) env=do task 1; $(echo no)\n"
    );
}

#[test]
fn agent_run_with_no_mapping_fails_naming_the_agent_and_the_config_key() {
    let p = Spur::new();
    let (code, out, records) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: ghost, input: hi}}",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(out["terminalReason"], "failed-agent");
    let error = finished(&records)[0]["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("\"ghost\"") && error.contains("agents:") && error.contains("config.yaml"),
        "{error}"
    );
}

#[test]
fn agent_run_expect_file_and_require_diff() {
    let p = agent_project("'true'");
    let (code, out, _) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: stub, expectFile: made.txt}}",
        &[],
    );
    assert_eq!(
        (code, out["terminalReason"].as_str()),
        (1, Some("failed-agent"))
    );
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: agent.run, options: {agent: stub, requireDiff: true}}",
        &[],
    );
    assert_eq!(code, 1);
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("requireDiff"));

    let p = agent_project("'echo changed > made.txt'");
    let (code, _, _) = with_actions(&p, "      - {kind: agent.run, options: {agent: stub, expectFile: made.txt, requireDiff: true}}", &[]);
    assert_eq!(code, 0);
}

#[test]
fn command_gate_writes_pass_or_fail_and_soft_fail_does_not_fail_the_action() {
    let p = Spur::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: sh, args: ['-c', 'exit 0'], resultFile: .spur/run/g1.status}}\n      - {kind: command.gate, options: {executable: sh, args: ['-c', 'exit 1'], resultFile: .spur/run/g2.status, softFail: true}}",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read(".spur/run/g1.status"), "PASS\n");
    assert_eq!(p.read(".spur/run/g2.status"), "FAIL\n");
    let (code, _, _) = with_actions(&p, "      - {kind: command.gate, options: {executable: 'false', resultFile: .spur/run/g3.status}}", &[]);
    assert_eq!(code, 1);
    assert_eq!(p.read(".spur/run/g3.status"), "FAIL\n");
}

#[test]
fn command_gate_args_are_not_run_through_a_shell() {
    let p = Spur::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: touch, args: ['$(touch pwned)', '${vars.x}; touch pwned2']}}",
        &[],
    );
    assert_eq!(code, 0);
    assert!(p.join("$(touch pwned)").exists());
    assert!(p.join("1; touch pwned2").exists());
    assert!(!p.join("pwned").exists() && !p.join("pwned2").exists());
}

#[test]
fn command_gate_result_file_must_stay_under_the_run_directory() {
    let p = Spur::new();
    std::fs::create_dir_all(p.join(".spur/run")).unwrap();
    std::fs::create_dir_all(p.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(p.join("elsewhere"), p.join(".spur/run/link")).unwrap();
    for bad in [
        "status.txt",
        ".spur/run/../escape",
        ".spur/run/link/x.status",
    ] {
        let (code, _, records) = with_actions(&p, &format!("      - {{kind: command.gate, options: {{executable: 'true', resultFile: '{bad}'}}}}"), &[]);
        assert_eq!(code, 1, "{bad}");
        assert!(
            finished(&records)[0]["error"]
                .as_str()
                .unwrap()
                .contains("resultFile"),
            "{bad}"
        );
    }
    assert!(!p.join("elsewhere/x.status").exists());
}

#[test]
fn command_gate_retries_only_on_matching_output() {
    let p = Spur::new();
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: command.gate, options: {executable: sh, args: ['-c', 'echo try >> tries.txt; echo flaky; exit 1'], retry: {maxAttempts: 3, delayMs: 1, on: [flaky]}, softFail: true}}\n      - {kind: command.gate, options: {executable: sh, args: ['-c', 'echo try >> tries2.txt; echo broken; exit 1'], retry: {maxAttempts: 3, delayMs: 1, on: [flaky]}, softFail: true}}",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("tries.txt").lines().count(), 3);
    assert_eq!(p.read("tries2.txt").lines().count(), 1);
}

#[test]
fn proof_fingerprint_sets_its_var_and_fails_when_expect_differs() {
    let p = Spur::new();
    p.file("src.txt", "one");
    p.file("task.md", "# task");
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: proof.fingerprint, options: {var: out, taskFile: task.md}}\n      - {kind: shell, options: {command: 'echo changed > src.txt'}}",
        &[],
    );
    assert_eq!(code, 0);
    let digest = finished(&records)[0]["setVars"]["out"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(digest.starts_with("sha256:"), "{digest}");
    let (code, _, records) = with_actions(
        &p,
        &format!("      - {{kind: proof.fingerprint, options: {{var: out, taskFile: task.md, expect: '{digest}'}}}}"),
        &[],
    );
    assert_eq!(code, 1);
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("changed"));
}

#[test]
fn json_update_rewrites_a_file_with_jq_atomically() {
    let p = Spur::new();
    p.file("data.json", r#"{"checks": []}"#);
    let (code, _, _) = with_actions(
        &p,
        r#"      - {kind: json.update, options: {path: data.json, expr: '.checks += [{name: "x", value: $x}]'}}"#,
        &[],
    );
    assert_eq!(code, 0);
    let data: Value = serde_json::from_str(&p.read("data.json")).unwrap();
    assert_eq!(
        data,
        serde_json::json!({"checks": [{"name": "x", "value": "1"}]})
    );
    let (code, _, records) = with_actions(
        &p,
        "      - {kind: json.update, options: {path: data.json, expr: '.checks | error(\"no\")'}}",
        &[],
    );
    assert_eq!(code, 1, "a jq error fails the action");
    assert!(finished(&records)[0]["error"]
        .as_str()
        .unwrap()
        .contains("json.update"));
    let data: Value = serde_json::from_str(&p.read("data.json")).unwrap();
    assert_eq!(
        data["checks"][0]["name"], "x",
        "the file is unchanged after a failed update"
    );
}

#[test]
fn plugin_actions_get_options_on_stdin_and_set_vars() {
    let p = Spur::new();
    p.file(
        "bin/spur-action-stamp",
        "#!/bin/sh\nread input\necho \"$input\" > plugin-input.json\necho '{\"ok\": true, \"setVars\": {\"out\": \"stamped\"}}'\n",
    );
    make_executable(&p.join("bin/spur-action-stamp"));
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let run = p
        .pipeline(
            r#"
name: plugin
initialState: a
terminalStates: [pass, other]
vars: {out: "", x: "1"}
states:
  - id: a
    onEnter: [{kind: stamp, options: {label: '${vars.x}'}}]
  - {id: pass}
  - {id: other}
transitions:
  - {from: a, to: pass, guard: {kind: shell, options: {command: 'test "$out" = stamped'}}}
  - {from: a, to: other}
"#,
        )
        .env("PATH", &path)
        .json()
        .run();
    assert_eq!(run.stdout_json()["state"], "pass", "{}", run.stderr());
    let input: Value = serde_json::from_str(&p.read("plugin-input.json")).unwrap();
    assert_eq!(input["label"], "1");
}

#[test]
fn an_unknown_action_kind_without_a_plugin_fails_clearly() {
    let p = Spur::new();
    let (code, _, records) = with_actions(&p, "      - {kind: teleport, options: {}}", &[]);
    assert_eq!(code, 1);
    let error = finished(&records)[0]["error"].as_str().unwrap().to_owned();
    assert!(error.contains("spur-action-teleport"), "{error}");
}

#[test]
fn shell_steps_get_jq_even_in_embedded_mode() {
    let p = Spur::new();
    p.file("v.json", r#"{"verdict":"PASS"}"#);
    let (code, _, _) = with_actions(
        &p,
        "      - {kind: shell, options: {command: 'jq -r .verdict v.json > verdict.txt'}}",
        &["--jq", "embedded"],
    );
    assert_eq!(code, 0);
    assert_eq!(p.read("verdict.txt"), "PASS\n");
}
