//! One writer per task (break 4 of issue 16): `spur verify --wbs T1` merges its gate rows
//! into the verdict artifact while `spur task verdict T1` replaces the artifact. Without a
//! shared lock, verify's read-modify-write read the old PASS artifact, the derivation wrote
//! its FAIL, and verify's write put the stale PASS back. Each trial starts both processes
//! together; nothing waits on time.

use std::process::{Command, Stdio};

use crate::common::{bin, isolate, Spur};

/// Requirements in the stale artifact: a big artifact makes verify's merge (read, parse,
/// rewrite) long enough for the derivation to land inside it in some trials.
const STALE_ROWS: usize = 4000;

fn stale_pass() -> String {
    let rows: Vec<String> = (1..=STALE_ROWS)
        .map(|i| {
            format!(
                r#"{{"id":"R{i}","status":"MET","evidence":"src/a.rs:1 stale row {i} {}"}}"#,
                "x".repeat(64)
            )
        })
        .collect();
    format!(
        r#"{{"wbs":"T1","verdict":"PASS","requirements":[{}]}}"#,
        rows.join(",")
    )
}

fn project() -> Spur {
    Spur::new()
        .file(
            ".spur/config.yaml",
            "verify:\n  gates:\n    tests: {command: 'true'}\n",
        )
        .file("docs/tasks/T1_race.md", "## Requirements\n- R1 the thing\n")
        .file("src/a.rs", "fn main() {}\n")
        // Not an answer: it fails the lint, so the derivation writes an explicit FAIL.
        .file("answer.md", "no verdict here\n")
}

fn spawn(project: &Spur, args: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(bin());
    isolate(&mut cmd, project.home());
    cmd.current_dir(project.path())
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn spur")
}

#[test]
fn verify_and_task_verdict_of_one_task_never_resurrect_a_stale_pass() {
    let trials: usize = std::env::var("SPUR_RACE_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let project = project();
    let stale = stale_pass();
    let mut stale_wins = Vec::new();
    let mut orders = [0usize; 2];
    for trial in 0..trials {
        project.file(".spur/run/T1-verdict.json", &stale);
        let mut verify = spawn(&project, &["verify", "--wbs", "T1"]);
        let mut verdict = spawn(
            &project,
            &["task", "verdict", "T1", "--from-answer", "answer.md"],
        );
        let verified = verify.wait().unwrap();
        let derived = verdict.wait().unwrap();
        assert_eq!(verified.code(), Some(0), "trial {trial}: verify");
        assert_eq!(
            derived.code(),
            Some(1),
            "trial {trial}: task verdict (FAIL)"
        );

        let artifact: serde_json::Value =
            serde_json::from_str(&project.read(".spur/run/T1-verdict.json")).unwrap();
        let requirements = artifact["requirements"].as_array().unwrap();
        // The derivation's effect is always there: its one UNMET row, its FAIL.
        if requirements.len() != 1 || artifact["verdict"] == "PASS" {
            stale_wins.push(trial);
            continue;
        }
        assert_eq!(requirements[0]["status"], "UNMET", "trial {trial}");
        assert_eq!(artifact["verdict"], "FAIL", "trial {trial}");
        // Verify's effect is there unless the derivation replaced the artifact after it.
        let gate_row = artifact["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gate-tests");
        match gate_row {
            Some(row) => {
                assert_eq!(row["status"], "pass", "trial {trial}");
                orders[0] += 1;
            }
            None => orders[1] += 1,
        }
    }
    assert!(
        stale_wins.is_empty(),
        "a stale PASS was resurrected in {} of {trials} trials: {stale_wins:?}",
        stale_wins.len()
    );
    eprintln!(
        "{trials} trials: derivation then verify {}, verify then derivation {}",
        orders[0], orders[1]
    );
}
