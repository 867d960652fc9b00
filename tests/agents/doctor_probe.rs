//! The `doctor.probe` action: the doctor's check of a run's agents, PASS/FAIL into a
//! `resultFile` under `.spur/run/` that the transitions read; the action itself succeeds
//! either way (a soft probe, as the reference's), and the reasons are in its log.

use serde_json::Value;

use super::{agent_cli, path};
use crate::common::{events, Spur};

const PIPELINE: &str = r#"
name: probe
initialState: precheck
terminalStates: [ready, failed]
failureStates: [failed]
vars: {agent: claude, implementAgent: claude, resultFile: .spur/run/precheck-doctor.status}
states:
  - id: precheck
    onEnter:
      - kind: doctor.probe
        options:
          resultFile: ${vars.resultFile}
          spurBin: spur
          agent: ${vars.agent}
          implementAgent: ${vars.implementAgent}
  - {id: ready}
  - {id: failed}
transitions:
  - from: precheck
    to: ready
    guard: {kind: shell, options: {command: 'test "$(cat .spur/run/precheck-doctor.status)" = PASS'}}
  - {from: precheck, to: failed, terminalReason: failed-check}
"#;

fn project() -> Spur {
    let p = Spur::new();
    p.file(
        ".spur/config.yaml",
        "agents:\n  claude: { preset: claude }\n  codex: { preset: codex }\n",
    );
    agent_cli(&p, "claude");
    p
}

/// Run the pipeline with `vars`; (exit code, outcome, the probe's log, its finished record).
fn run(p: &Spur, vars: &[(&str, &str)]) -> (i32, Value, String, Value) {
    let mut spur = p.pipeline(PIPELINE).env("PATH", path(p)).json();
    for (k, v) in vars {
        spur = spur.var(k, v);
    }
    let out = spur.run();
    let outcome = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    let records = p.newest_trace();
    let started = events(&records, "action-started")[0].clone();
    let finished = events(&records, "action-finished")[0].clone();
    let run_id = p.runs()[0]["runId"].as_str().unwrap().to_owned();
    // An action that fails before it checks anything writes no log.
    let log = std::fs::read_to_string(p.join(&format!(
        ".spur/runs/{run_id}/{}",
        started["log"].as_str().unwrap()
    )))
    .unwrap_or_default();
    (
        out.exit_code().unwrap_or(-1),
        outcome,
        p.redact(&log),
        finished,
    )
}

#[test]
fn a_usable_agent_writes_pass_and_the_run_goes_on() {
    let p = project();
    let (code, out, log, finished) = run(&p, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["state"], "ready");
    assert_eq!(p.read(".spur/run/precheck-doctor.status"), "PASS\n");
    assert_eq!(finished["ok"], true);
    insta::assert_snapshot!(log);
}

#[test]
fn an_unusable_agent_writes_fail_the_action_succeeds_and_the_run_ends_failed() {
    let p = project();
    // codex is configured but not installed; the implement agent diverges from `agent`.
    let (code, out, log, finished) = run(&p, &[("implementAgent", "codex")]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["state"], "failed");
    assert_eq!(p.read(".spur/run/precheck-doctor.status"), "FAIL\n");
    assert_eq!(finished["ok"], true);
    assert!(
        finished["message"]
            .as_str()
            .unwrap()
            .starts_with("FAIL: agent codex: `codex` is not on PATH"),
        "{finished}"
    );
    insta::assert_snapshot!(log);
}

#[test]
fn a_result_file_outside_the_run_directory_is_refused_and_nothing_is_written() {
    for (target, why) in [
        (".spur/config.yaml", "must be under"),
        (".spur/run/../config.yaml", "must not contain `..`"),
        (".spur/run-evil/x", "must be under"),
        (".spur/run/link/config.yaml", "goes through a symlink"),
    ] {
        let p = project();
        std::fs::create_dir_all(p.join(".spur/run")).unwrap();
        std::os::unix::fs::symlink(p.join(".spur"), p.join(".spur/run/link")).unwrap();
        let config = p.read(".spur/config.yaml");
        let (code, _, _, finished) = run(&p, &[("resultFile", target)]);
        assert_eq!(code, 1, "{target}");
        assert_eq!(finished["ok"], false, "{target}");
        let error = finished["error"].as_str().unwrap();
        assert!(
            error.starts_with(&format!("doctor.probe: resultFile {target:?} {why}")),
            "{target}: {error}"
        );
        assert_eq!(p.read(".spur/config.yaml"), config, "{target}");
        assert!(!p.exists(".spur/run-evil"));
    }
}

#[test]
fn spur_check_knows_the_options_and_warns_about_a_misspelt_one() {
    let p = Spur::new();
    p.file("p.yaml", PIPELINE)
        .args(["check", "p.yaml"])
        .run()
        .success()
        .stderr_is("p.yaml: ok\n");
    let misspelt = PIPELINE.replace("resultFile: ${vars.resultFile}", "resultFlie: x");
    let out = p.file("q.yaml", misspelt).args(["check", "q.yaml"]).run();
    let text = out.stderr_redacted();
    assert!(
        text.contains("unknown option `resultFlie`") && text.contains("did you mean `resultFile`?"),
        "{text}"
    );
}
