//! `spur verify`: gates from `.spur/config.yaml`, run through the binary in a temp project.
//! Gates are small `sh -c` commands; nothing here waits on time except bounded handshakes
//! between gates that only complete if the gates really run concurrently.

use std::path::Path;

use crate::common::Spur;
use serde_json::Value;

fn project_with(config: &str) -> Spur {
    Spur::new().file(".spur/config.yaml", config)
}

fn gate<'a>(outcome: &'a Value, name: &str) -> &'a Value {
    outcome["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no gate {name} in {outcome}"))
}

fn evidence(project: &Spur, scope: &str, gate: &str) -> Value {
    let text = project.read(&format!(".spur/run/{scope}-evidence/{gate}.json"));
    serde_json::from_str(&text).unwrap()
}

/// Run ids, wall-clock times and durations change between runs.
macro_rules! assert_redacted_snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"verify-\d{8}T\d{9}Z-\d+", "[RUN]"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "[TIME]"),
            (r#""durationMs": \d+"#, r#""durationMs": "[MS]""#),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

const SIX_GATES: &str = r#"verify:
  gates:
    spec: {command: 'echo "start spec" >> order.log; echo "end spec" >> order.log'}
    semantic: {command: 'echo "start semantic" >> order.log; echo "end semantic" >> order.log'}
    wiring: {command: 'echo "start wiring" >> order.log; echo "end wiring" >> order.log'}
    security: {command: 'echo "start security" >> order.log; echo "end security" >> order.log'}
    tests: {command: 'echo "start tests" >> order.log; echo "end tests" >> order.log'}
    build: {command: 'echo "start build" >> order.log; echo "end build" >> order.log; exit 1'}
"#;

#[test]
fn standard_gates_run_in_dependency_order() {
    let project = project_with(SIX_GATES);
    project.args(["verify"]).run().code(1);
    let log = project.read("order.log");
    let position = |line: &str| {
        log.lines()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("{line:?} missing from {log}"))
    };
    for (gate, needs) in [
        ("tests", &["build"][..]),
        ("security", &["tests"]),
        ("wiring", &["tests"]),
        ("semantic", &["security", "wiring"]),
        ("spec", &["semantic"]),
    ] {
        for need in needs {
            assert!(
                position(&format!("end {need}")) < position(&format!("start {gate}")),
                "{gate} started before {need} ended:\n{log}"
            );
        }
    }
}

#[test]
fn a_failing_build_still_lets_every_later_gate_run_and_report() {
    let project = project_with(SIX_GATES);
    let run = project.args(["verify"]).run().code(1);
    assert_redacted_snapshot!("failing_build_report", &run.stdout_redacted());
    let run = project.args(["verify", "--json"]).run();
    let outcome = run.stdout_json();
    let statuses: Vec<(String, String)> = outcome["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_owned(),
                g["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("build", "FAIL"),
            ("tests", "PASS"),
            ("security", "PASS"),
            ("wiring", "PASS"),
            ("semantic", "PASS"),
            ("spec", "PASS")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert_eq!(outcome["passed"], false);
    // The report is also written to a file.
    assert!(project
        .read(".spur/run/_project-verify-report.md")
        .contains("| build | FAIL (unactionable) | 0/0/0 |"));
}

#[test]
fn read_only_gates_overlap_in_time() {
    // Each gate announces itself, then waits (bounded) for the other: both can only pass
    // if they ran at the same time.
    let wait_for = |me: &str, other: &str| {
        format!(
            "touch {me}.started; i=0; while [ ! -e {other}.started ]; do i=$((i+1)); [ $i -gt 2000 ] && exit 7; sleep 0.01; done"
        )
    };
    let config = format!(
        "verify:\n  parallelism: 2\n  gates:\n    left: {{readOnly: true, command: '{}'}}\n    right: {{readOnly: true, command: '{}'}}\n",
        wait_for("left", "right"),
        wait_for("right", "left")
    );
    let project = project_with(&config);
    project.args(["verify", "--json"]).run().success();
    let left = evidence(&project, "_project", "left");
    let right = evidence(&project, "_project", "right");
    let interval = |e: &Value| {
        let a = &e["attempts"][0];
        (
            a["startedMs"].as_u64().unwrap(),
            a["finishedMs"].as_u64().unwrap(),
        )
    };
    let (l0, l1) = interval(&left);
    let (r0, r1) = interval(&right);
    assert!(
        l0 <= r1 && r0 <= l1,
        "intervals do not overlap: left {l0}..{l1}, right {r0}..{r1}"
    );
}

#[test]
fn a_gate_that_times_out_is_error_and_its_grandchildren_are_gone() {
    // Each attempt's shell starts a grandchild and writes its pid to a file of its own
    // (renamed into place, so a file that exists is whole). The timeout must fire after
    // that; how long it takes is up to the machine, so a verify whose timeouts came first
    // (fewer than two pid files) is repeated with a longer timeout, up to 10 s.
    for timeout_ms in [300, 1_000, 3_000, 10_000] {
        let project = project_with(&format!(
            "verify:\n  gates:\n    hang:\n      command: 'sleep 60 & echo $! > gc-$$.tmp; mv gc-$$.tmp gc-$$.pid; wait'\n      timeoutMs: {timeout_ms}\n",
        ));
        let run = project.args(["verify", "--json"]).run().code(1);
        let outcome = run.stdout_json();
        let hang = gate(&outcome, "hang");
        assert_eq!(hang["status"], "ERROR");
        assert!(
            hang["reason"]
                .as_str()
                .unwrap()
                .contains(&format!("timed out after {timeout_ms} ms")),
            "{hang}"
        );
        assert_eq!(hang["reprobed"], true);
        let pids: Vec<String> = std::fs::read_dir(project.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("gc-") && name.ends_with(".pid"))
            .map(|name| project.read(&name).trim().to_owned())
            .collect();
        assert!(pids.len() <= 2, "one grandchild per attempt: {pids:?}");
        if pids.len() < 2 {
            continue;
        }
        for pid in &pids {
            assert!(process_is_gone(pid), "grandchild {pid} still runs");
        }
        return;
    }
    panic!("the gate never wrote both grandchild pids before its timeouts, even given 10 s");
}

/// Gone or a zombie awaiting its reaper, waiting (bounded) for a SIGKILL to land.
fn process_is_gone(pid: &str) -> bool {
    for _ in 0..500 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                if state.starts_with('Z') || state.starts_with('X') {
                    return true;
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

#[test]
fn a_gate_whose_evidence_file_is_missing_is_error() {
    let project = project_with(
        "verify:\n  gates:\n    tests:\n      command: 'echo ran'\n      expectFile: target/junit.xml\n",
    );
    // A file left by an earlier run must not count.
    project.file("target/junit.xml", "<old/>");
    let run = project.args(["verify", "--json"]).run().code(1);
    let tests = gate(&run.stdout_json(), "tests").clone();
    assert_eq!(tests["status"], "ERROR");
    assert_eq!(
        tests["reason"],
        "no evidence produced: expected file target/junit.xml is missing"
    );
    assert!(!project.join("target/junit.xml").exists());
}

#[test]
fn a_gate_that_fails_then_passes_is_a_flaky_fail_with_low_confidence() {
    let project = project_with(
        "verify:\n  gates:\n    tests:\n      command: 'if [ -e tried ]; then exit 0; else touch tried; exit 1; fi'\n",
    );
    let run = project
        .args(["verify", "--wbs", "T7", "--json"])
        .run()
        .code(1);
    let tests = gate(&run.stdout_json(), "tests").clone();
    assert_eq!(tests["status"], "FAIL");
    assert_eq!(tests["confidence"], "low");
    assert_eq!(tests["flaky"], true);
    assert_eq!(tests["reprobed"], true);
    assert_eq!(
        tests["reason"],
        "flaky: the re-probe disagreed (FAIL then PASS); no stable pass, so FAIL"
    );
    let ledger = project.read(".spur/run/T7-verdicts.jsonl");
    let line: Value = serde_json::from_str(ledger.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            line["verdict"].as_str(),
            line["confidence"].as_str(),
            line["reprobed"].as_bool()
        ),
        (Some("FAIL"), Some("low"), Some(true))
    );
}

#[test]
fn a_verdict_that_changes_between_runs_is_a_flip() {
    let project = project_with(
        "verify:\n  gates:\n    build: {command: 'true'}\n    tests: {command: 'test ! -e broken'}\n",
    );
    project.args(["verify", "--wbs", "T2"]).run().success();
    project.file("broken", "");
    let second = project
        .args(["verify", "--wbs", "T2", "--json"])
        .run()
        .code(1);
    let outcome = second.stdout_json();
    let tests = gate(&outcome, "tests");
    assert_eq!(
        (tests["flip"].as_bool(), tests["confidence"].as_str()),
        (Some(true), Some("low"))
    );
    assert_eq!(gate(&outcome, "build")["flip"], false);

    let history = project
        .args(["verify", "history", "T2", "--json"])
        .run()
        .success();
    let doc = history.stdout_json();
    assert_eq!(doc["flips"], 1);
    let flips: Vec<(String, bool)> = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["criterion"].as_str().unwrap().to_owned(),
                e["flip"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        flips,
        [
            ("gate-build", false),
            ("gate-tests", false),
            ("gate-build", false),
            ("gate-tests", true)
        ]
        .map(|(c, f)| (c.to_owned(), f))
    );
    let table = project.args(["verify", "history", "T2"]).run();
    assert_redacted_snapshot!("history_with_a_flip", &table.stdout_redacted());
}

#[test]
fn gate_results_become_check_rows_of_the_verdict() {
    let project = project_with(
        "verify:\n  gates:\n    build: {command: 'true'}\n    tests: {command: 'exit 1', severity: major}\n    lint: {command: 'true', enabled: false}\n",
    );
    project.file(
        ".spur/run/T3-verdict.json",
        r#"{"wbs":"T3","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}],
            "checks":[{"name":"gate-lint","status":"pass"},{"name":"gate-tests","status":"pass"},{"name":"mine","status":"pass"}]}"#,
    );
    project.args(["verify", "--wbs", "T3"]).run().code(1);
    let verdict: Value = serde_json::from_str(&project.read(".spur/run/T3-verdict.json")).unwrap();
    insta::assert_json_snapshot!("verdict_after_verify", verdict);
}

#[test]
fn without_an_artifact_one_is_created_that_gates_alone_cannot_pass() {
    let project = project_with("verify:\n  gates:\n    build: {command: 'true'}\n");
    let run = project
        .args(["verify", "--wbs", "T4", "--json"])
        .run()
        .success();
    assert_eq!(run.stdout_json()["verdictMerge"], "created");
    let verdict: Value = serde_json::from_str(&project.read(".spur/run/T4-verdict.json")).unwrap();
    assert_eq!(verdict["verdict"], "UNKNOWN");
    assert_eq!(verdict["requirements"], serde_json::json!([]));
    assert_eq!(verdict["acceptanceCriteria"], serde_json::json!([]));
    assert_eq!(verdict["checks"][0]["name"], "gate-build");
}

#[test]
fn json_output_describes_every_gate() {
    let project = project_with(
        r#"verify:
  gates:
    build:
      command: |
        echo '{"severity":"WARN","file":"src/a.rs","line":3,"message":"unused import","fix":"remove the import"}'
        echo '{"severity":"INFO","message":"42 crates"}'
    tests:
      executable: sh
      args: [-c, 'echo "{\"severity\":\"BLOCK\",\"file\":\"tests/api.rs\",\"line\":12,\"message\":\"status 500\"}" >> "$SPUR_FINDINGS_FILE"; exit 1']
    security: {enabled: false}
"#,
    );
    let run = project
        .args(["verify", "--wbs", "T5", "--json"])
        .run()
        .code(1);
    // The tree fingerprint depends on file modes (the umask): shown as a placeholder.
    let fingerprint = run.stdout_json()["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fingerprint.len(), 64);
    assert_redacted_snapshot!(
        "json_outcome",
        &run.stdout_redacted().replace(&fingerprint, "[FINGERPRINT]")
    );
}

#[test]
fn gate_runs_one_gate_only() {
    let project = project_with(SIX_GATES);
    let run = project
        .args(["verify", "--gate", "wiring", "--json"])
        .run()
        .success();
    let outcome = run.stdout_json();
    assert_eq!(outcome["gates"].as_array().unwrap().len(), 1);
    assert_eq!(project.read("order.log"), "start wiring\nend wiring\n");

    project
        .args(["verify", "--gate", "wirng"])
        .run()
        .code(2)
        .stderr_contains("spur::verify::unknown-gate")
        .stderr_contains("did you mean `wiring`?");
}

#[test]
fn a_needs_cycle_is_a_configuration_error_with_spans() {
    let project = project_with(
        "verify:\n  gates:\n    a: {command: 'true', needs: [b]}\n    b: {command: 'true', needs: [a]}\n    c: {command: 'true', needs: [nope]}\n",
    );
    let run = project.args(["verify"]).run().code(2);
    assert_eq!(run.stdout(), "");
    insta::assert_snapshot!("config_errors", run.stderr_redacted());
    assert!(
        !project.join(".spur/run").exists(),
        "nothing ran, nothing written"
    );

    let run = project.args(["verify", "--json"]).run().code(2);
    let errors = run.stdout_json()["errors"].clone();
    let found: Vec<(&str, u64, u64)> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["code"].as_str().unwrap(),
                e["line"].as_u64().unwrap(),
                e["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("spur::verify::unknown-need", 5, 34),
            ("spur::verify::needs-cycle", 3, 33)
        ]
    );
}

#[test]
fn with_no_gates_configured_everything_is_skipped_prominently() {
    let project = project_with("agents:\n  claude: claude -p\n");
    let run = project
        .args(["verify"])
        .run()
        .success()
        .stderr_contains("warning: no gate ran; nothing was verified");
    assert_redacted_snapshot!("nothing_configured", &run.stdout_redacted());
}

#[test]
fn an_invalid_wbs_is_a_usage_error() {
    let project = project_with("verify:\n  gates:\n    build: {command: 'true'}\n");
    project
        .args(["verify", "--wbs", "../x"])
        .run()
        .code(2)
        .stderr_contains("spur::usage::invalid-wbs");
    assert!(!Path::new(&project.join(".spur/run")).exists());
}

/// A self-consistent PASS artifact: met requirement, met AC with test evidence.
const PASSING_VERDICT: &str = r#"{"wbs":"T6","verdict":"PASS",
  "requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}],
  "acceptanceCriteria":[{"id":"AC-1","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"}],
  "checks":[]}"#;

#[test]
fn the_done_gate_denies_a_task_whose_blocker_gate_fails() {
    let project = project_with(
        "verify:\n  gates:\n    build: {command: 'true'}\n    tests: {command: 'test ! -e broken'}\n",
    );
    crate::common::write_verdict_through_spur(&project, "T6", PASSING_VERDICT);
    project.file("broken", "");
    project.args(["verify", "--wbs", "T6"]).run().code(1);
    let denied = project
        .args(["task", "update", "T6", "done", "--json"])
        .run()
        .code(1);
    let outcome = denied.stdout_json();
    assert_eq!(outcome["decision"], "deny", "{outcome}");
    assert_eq!(outcome["verdict"], "FAIL", "{outcome}");
    // The deny names the red gate, not a self-inconsistent PASS.
    let message = outcome["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(r#"verify gate "tests" did not pass"#)
            && !message.contains("self-inconsistent"),
        "{message}"
    );

    // The same artifact with the gate fixed: the rows are replaced and done is allowed.
    std::fs::remove_file(project.join("broken")).unwrap();
    project.args(["verify", "--wbs", "T6"]).run().success();
    let allowed = project
        .args(["task", "update", "T6", "done", "--json"])
        .run()
        .success();
    assert_eq!(allowed.stdout_json()["decision"], "allow");
}

#[test]
fn a_full_run_leaves_no_evidence_of_a_removed_gate() {
    let project = project_with(
        "verify:\n  gates:\n    build: {command: 'true'}\n    lint: {command: 'true'}\n",
    );
    project.args(["verify"]).run().success();
    assert!(project
        .join(".spur/run/_project-evidence/lint.json")
        .is_file());
    project.file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    build: {command: 'true'}\n",
    );
    project.args(["verify"]).run().success();
    let mut left: Vec<String> = std::fs::read_dir(project.join(".spur/run/_project-evidence"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["build.json", "build.md"]);
}

#[test]
fn gates_see_the_previous_complete_evidence_until_the_run_publishes_its_own() {
    // The gate reads the published copy of its own evidence while it runs.
    let project = project_with(
        "verify:\n  gates:\n    probe: {command: 'cat .spur/run/_project-evidence/probe.json > seen.json 2>/dev/null || echo none > seen.json'}\n",
    );
    let first = project.args(["verify", "--json"]).run().success();
    assert_eq!(
        project.read("seen.json"),
        "none\n",
        "nothing was published before"
    );
    let second = project.args(["verify", "--json"]).run().success();
    let seen: Value = serde_json::from_str(&project.read("seen.json")).unwrap();
    assert_eq!(
        seen["run"],
        first.stdout_json()["run"],
        "the first run's whole evidence"
    );
    assert_eq!(
        evidence(&project, "_project", "probe")["run"],
        second.stdout_json()["run"],
        "then the second run's"
    );
}

#[test]
fn files_a_gate_writes_into_the_evidence_dir_last_only_as_long_as_the_run() {
    let project = project_with(
        "verify:\n  gates:\n    a: {command: 'if [ ! -f once ]; then echo x > \"$SPUR_EVIDENCE_DIR/extra.txt\"; touch once; fi'}\n",
    );
    project.args(["verify"]).run().success();
    assert_eq!(project.read(".spur/run/_project-evidence/extra.txt"), "x\n");
    project.args(["verify"]).run().success();
    assert!(
        !project
            .join(".spur/run/_project-evidence/extra.txt")
            .exists(),
        "a file from an earlier run is not published again"
    );
    assert!(project.join(".spur/run/_project-evidence/a.json").is_file());
}

#[test]
fn a_second_verify_of_the_same_scope_is_refused_while_one_runs() {
    // The outer run holds the project's verify lock while its gate starts two more runs:
    // one of the project (refused, exit 4) and one of task T2 (another scope: allowed).
    let project = project_with(concat!(
        "verify:\n  gates:\n",
        "    nested: {command: '\"$SPUR_TEST_BIN\" verify 2> inner.err; echo $? > inner.code;",
        " \"$SPUR_TEST_BIN\" verify --wbs T2 --gate ok > /dev/null 2>&1; echo $? > other.code'}\n",
        "    ok: {command: 'true'}\n",
    ));
    // A verify outside any run has no run socket for its gates' spur calls, so the
    // sandbox would refuse the nested verify's ledger write: the lock is what is tested.
    project
        .env("SPUR_TEST_BIN", crate::common::bin())
        .env("SPUR_SANDBOX", "off")
        .args(["verify", "--gate", "nested"])
        .run()
        .success();
    assert_eq!(project.read("inner.code"), "4\n");
    let inner = project.read("inner.err");
    assert!(inner.contains("spur::verify::busy"), "{inner}");
    assert!(
        inner.contains("another verify run of the project"),
        "{inner}"
    );
    assert_eq!(project.read("other.code"), "0\n");
    // Released when the run ends.
    project.args(["verify", "--gate", "ok"]).run().success();
}

#[test]
fn a_file_where_the_evidence_directories_belong_does_not_wedge_later_runs() {
    let project = project_with("verify:\n  gates:\n    a: {command: 'true'}\n");
    project.file(".spur/run/_project-evidence", "not a directory");
    project.file(
        ".spur/run/._project-evidence.next",
        "not a directory either",
    );
    for round in 1..=3 {
        let run = project.args(["verify"]).run();
        assert_eq!(run.exit_code(), Some(0), "round {round}: {}", run.stderr());
        assert_eq!(
            evidence(&project, "_project", "a")["status"],
            "PASS",
            "round {round}"
        );
    }
}

#[test]
fn a_gate_reads_this_run_s_evidence_of_the_gates_it_needs() {
    // `reader` copies what it finds of `a` (needed) and `b` (not needed) while it runs.
    let project = project_with(
        "verify:\n  gates:\n    a: {command: 'true'}\n    b: {command: 'true'}\n    reader: {command: 'cp \"$SPUR_EVIDENCE_DIR/a.json\" a-seen.json; echo \"$SPUR_RUN\" > run-seen', needs: [a, b]}\n",
    );
    for round in 1..=3 {
        let run = project.args(["verify", "--json"]).run();
        assert_eq!(run.exit_code(), Some(0), "round {round}: {}", run.stderr());
        let seen: Value = serde_json::from_str(&project.read("a-seen.json")).unwrap();
        assert_eq!(seen["status"], "PASS", "round {round}: {seen}");
        assert_eq!(
            seen["run"],
            run.stdout_json()["run"],
            "round {round}: the needed gate's evidence is this run's, not a staged leftover"
        );
        assert_eq!(project.read("run-seen").trim(), run.stdout_json()["run"]);
        for name in ["a", "b", "reader"] {
            assert_eq!(
                evidence(&project, "_project", name)["run"],
                run.stdout_json()["run"],
                "round {round}: {name}'s published evidence"
            );
        }
    }
}

#[test]
fn every_gate_of_a_long_run_gets_this_run_s_evidence() {
    // More gates than one share of the end-of-run writers, so several threads write.
    let mut config = String::from("verify:\n  parallelism: 2\n  gates:\n");
    for i in 0..40 {
        config.push_str(&format!("    g{i:02}: {{command: 'echo out-{i}'}}\n"));
    }
    let project = project_with(&config);
    for round in 1..=2 {
        let run = project.args(["verify", "--json"]).run();
        assert_eq!(run.exit_code(), Some(0), "round {round}: {}", run.stderr());
        let outcome = run.stdout_json();
        for i in 0..40 {
            let name = format!("g{i:02}");
            let evidence = evidence(&project, "_project", &name);
            assert_eq!(evidence["run"], outcome["run"], "round {round}: {name}");
            assert!(
                evidence.to_string().contains(&format!("out-{i}")),
                "round {round}: {name}'s own output tail: {evidence}"
            );
            assert!(
                project
                    .join(&format!(".spur/run/_project-evidence/{name}.md"))
                    .is_file(),
                "{name}.md"
            );
        }
    }
}

#[test]
fn a_name_a_gate_planted_in_a_later_gate_s_evidence_makes_that_gate_an_error() {
    // `plant` runs first and puts, under the evidence names of the gates after it, a
    // directory, a symbolic link to a project file, a hard link to another and a FIFO.
    // None of them is written through or waited on: each of those gates is an ERROR.
    let project = project_with(concat!(
        "verify:\n  gates:\n",
        "    plant: {command: 'd=\"$SPUR_EVIDENCE_DIR\"; mkdir \"$d/dir.json\"; ",
        "ln -s \"$PWD/keep.txt\" \"$d/symlink.md\"; ln \"$PWD/keep2.txt\" \"$d/hardlink.json\"; ",
        "mkfifo \"$d/fifo.md\"'}\n",
        "    dir: {command: 'true'}\n",
        "    symlink: {command: 'true'}\n",
        "    hardlink: {command: 'true'}\n",
        "    fifo: {command: 'true'}\n",
        "    fine: {command: 'true'}\n",
    ));
    project.file("keep.txt", "project file\n");
    project.file("keep2.txt", "another project file\n");
    let run = project.args(["verify", "--json"]).run().code(1);
    let outcome = run.stdout_json();
    for name in ["dir", "symlink", "hardlink", "fifo"] {
        let result = gate(&outcome, name);
        assert_eq!(result["status"], "ERROR", "{result}");
        let reason = result["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("could not be written"), "{name}: {reason}");
    }
    assert_eq!(gate(&outcome, "plant")["status"], "PASS");
    assert_eq!(gate(&outcome, "fine")["status"], "PASS");
    assert_eq!(project.read("keep.txt"), "project file\n");
    assert_eq!(project.read("keep2.txt"), "another project file\n");
}

#[test]
fn a_gate_whose_published_evidence_is_missing_or_not_a_file_is_an_error() {
    // `vandal` needs `a` and `b`, so their evidence is staged before it runs; it deletes
    // one and puts a directory in place of the other.
    let project = project_with(
        "verify:\n  gates:\n    a: {command: 'true'}\n    b: {command: 'true'}\n    vandal: {command: 'rm \"$SPUR_EVIDENCE_DIR/a.json\"; rm \"$SPUR_EVIDENCE_DIR/b.md\"; mkdir \"$SPUR_EVIDENCE_DIR/b.md\"', needs: [a, b]}\n",
    );
    let run = project.args(["verify", "--json"]).run().code(1);
    let outcome = run.stdout_json();
    for (name, missing) in [
        ("a", ".spur/run/_project-evidence/a.json)"),
        ("b", ".spur/run/_project-evidence/b.md)"),
    ] {
        let result = gate(&outcome, name);
        assert_eq!(result["status"], "ERROR", "{result}");
        let reason = result["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("produced no evidence") && reason.contains(missing),
            "{name}: {reason}"
        );
    }
    assert_eq!(gate(&outcome, "vandal")["status"], "PASS");
}
