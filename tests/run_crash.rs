//! Crash safety (ARCHITECTURE.md, *Durability*): a run killed with SIGKILL right after any journal record, then
//! resumed with `spur continue`, finishes with the same history as an uninterrupted run:
//! every committed transition exactly once, no finished action run again, gap-free seq.
//! The kill point is exact: debug builds honour SPUR_TEST_KILL_AFTER_JOURNAL_SEQ=N, which
//! makes spur SIGKILL itself right after writing journal record N.

use crate::common::{assert_gap_free, Spur};
use serde_json::Value;

fn project() -> Spur {
    Spur::new().fixture("examples/run/crash.yaml", "crash.yaml")
}

/// `spur ARGS… --json`: (exit code, parsed stdout or null, stderr).
fn json(p: &Spur, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = p.args(args).json().run();
    let value = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code(), value, out.stderr().to_owned())
}

fn transitions(records: &[Value]) -> Vec<(String, String)> {
    records
        .iter()
        .filter(|r| r["event"] == "transition")
        .map(|r| {
            (
                r["from"].as_str().unwrap().into(),
                r["to"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn killed_after_any_journal_record_a_run_resumes_to_the_same_history() {
    // The reference: one uninterrupted run.
    let reference = project();
    let (code, out, stderr) = json(&reference, &["run", "crash.yaml"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(out["state"], "done");
    let reference_id = reference.only_run_id();
    let reference_records = reference.trace(&reference_id);
    let reference_trail = reference.read("trail.txt");
    let reference_transitions = transitions(&reference_records);
    assert_eq!(reference_transitions.len(), 9, "{reference_transitions:?}");
    let total = reference_records.len() as u64;

    for kill_after in 1..=total {
        let p = project();
        let killed = p
            .env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", kill_after.to_string())
            .args(["run", "crash.yaml", "--json"])
            .run();
        assert_eq!(
            killed.exit_code(),
            None,
            "seq {kill_after}: spur was not killed"
        );
        let run_id = p.only_run_id();
        assert_eq!(p.trace(&run_id).len() as u64, kill_after);

        let (code, out, stderr) = json(&p, &["continue", &run_id]);
        match code {
            Some(0) => assert_eq!(out["state"], "done"),
            Some(4) if stderr.contains("spur::run::ambiguous-action") => {
                // Killed between an action's start and its finish: the action never ran
                // here (the kill came right after the start record), so re-run it.
                let (code, out, stderr) = json(&p, &["continue", &run_id, "--rerun-ambiguous"]);
                assert_eq!(code, Some(0), "seq {kill_after}: {stderr}");
                assert_eq!(out["state"], "done");
            }
            // Killed right after the last record: nothing left to do.
            Some(4) if stderr.contains("spur::run::finished") => assert_eq!(kill_after, total),
            other => panic!("seq {kill_after}: unexpected exit {other:?}: {stderr}"),
        }

        let after = p.trace(&run_id);
        assert_gap_free(&after);
        assert_eq!(
            transitions(&after),
            reference_transitions,
            "seq {kill_after}"
        );
        assert_eq!(
            p.read("trail.txt"),
            reference_trail,
            "seq {kill_after}: an action ran twice or never"
        );
        assert_eq!(after.last().unwrap()["event"], "run-finished");
        assert_eq!(p.runs()[0]["outcome"], "completed", "seq {kill_after}");
    }
}

#[test]
fn an_action_that_ran_but_has_no_finish_record_is_ambiguous_and_reruns_only_on_request() {
    let p = Spur::new();
    // The action appends its line, then kills spur (its parent) before spur can record
    // the finish: the journal says "started, never finished".
    p.file(
        "p.yaml",
        r#"
name: ambiguous
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: 'echo ran >> trail.txt; if [ ! -f killed ]; then touch killed; kill -9 $PPID; fi'
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    p.args(["run", "p.yaml"]).run().killed();
    let run_id = p.only_run_id();
    assert_eq!(p.runs()[0]["outcome"], "running");

    let (code, _, stderr) = json(&p, &["continue", &run_id]);
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("spur::run::ambiguous-action"), "{stderr}");
    assert!(stderr.contains("--rerun"), "{stderr}");
    assert_eq!(p.read("trail.txt"), "ran\n", "not re-run without the flag");

    let (code, out, stderr) = json(&p, &["continue", &run_id, "--rerun-ambiguous"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(out["state"], "b");
    assert_eq!(p.read("trail.txt"), "ran\nran\n");
    assert_gap_free(&p.trace(&run_id));
}

#[test]
fn a_torn_last_journal_line_is_ignored_on_resume() {
    let p = Spur::new().fixture("examples/run/approve.yaml", "approve.yaml");
    let (code, out, _) = json(&p, &["run", "approve.yaml"]);
    assert_eq!(code, Some(3));
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let journal = p.join(&format!(".spur/runs/{run_id}/journal.jsonl"));
    let before = p.trace(&run_id).len();
    // A write cut short by a crash: no newline, not valid JSON.
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str(r#"{"seq":99,"at":"2026-01-01T00:00:00.000Z","event":"transi"#);
    std::fs::write(&journal, text).unwrap();
    assert_eq!(
        p.trace(&run_id).len(),
        before,
        "trace ignores the torn line"
    );

    let (code, out, stderr) = json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(out["state"], "done");
    let after = p.trace(&run_id);
    assert_gap_free(&after);
    assert!(!std::fs::read_to_string(&journal)
        .unwrap()
        .contains("\"transi\n"));
}

#[test]
fn a_damaged_middle_line_is_reported_not_misread() {
    let p = Spur::new().fixture("examples/run/approve.yaml", "approve.yaml");
    let (_, out, _) = json(&p, &["run", "approve.yaml"]);
    let run_id = out["runId"].as_str().unwrap().to_owned();
    let journal = p.join(&format!(".spur/runs/{run_id}/journal.jsonl"));
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{garbage";
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let (code, _, stderr) = json(&p, &["continue", &run_id, "--answer", "yes"]);
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("spur::journal::corrupt"), "{stderr}");
}

#[test]
fn ctrl_c_kills_the_action_group_journals_interrupted_and_the_run_resumes() {
    let p = Spur::new();
    // The action interrupts spur itself (as Ctrl-C would) and then blocks; spur must kill
    // it (and its background grandchild), journal `interrupted` and exit 130.
    p.file(
        "p.yaml",
        r#"
name: interrupted
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: 'if [ ! -f once ]; then touch once; sleep 100 & echo $! > grandchild.pid; kill -INT $PPID; sleep 100; fi; echo finished >> trail.txt'
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    p.args(["run", "p.yaml"]).run().code(130);
    let run_id = p.only_run_id();
    let after = p.trace(&run_id);
    assert_eq!(after.last().unwrap()["event"], "interrupted");
    assert_eq!(after.last().unwrap()["state"], "a");
    assert_gap_free(&after);
    assert_eq!(p.runs()[0]["outcome"], "interrupted");
    let pid = p.read("grandchild.pid").trim().to_owned();
    assert!(
        !crate::common::process_is_running(&pid),
        "grandchild {pid} survived Ctrl-C"
    );

    let (code, _, stderr) = json(&p, &["continue", &run_id]);
    assert_eq!(code, Some(4), "the killed action is ambiguous: {stderr}");
    let (code, out, stderr) = json(&p, &["continue", &run_id, "--rerun-ambiguous"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(out["state"], "b");
    assert_eq!(p.read("trail.txt"), "finished\n");
}
