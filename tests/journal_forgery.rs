//! A step that forges the journal (the issue's break 2): a shell step appends a record to
//! `$SPUR_RUN_DIR/journal.jsonl` that the run never wrote, then kills spur. `spur continue`
//! must refuse the resume (exit 4) naming the forged record's seq, whether or not the
//! forger got the chain right: the chain and its seals catch a forger without the key
//! (one who chains by sha256 as spur did before keyed chains), the check of every record
//! against the pipeline catches one who read the key file and seals as spur does.

use serde_json::Value;

use crate::common::Spur;

/// The run can never reach `done`: every way there has a `never` guard. `work`'s one step
/// runs `forge.sh`, which appends what `$forge` names and SIGKILLs spur (its parent).
const PIPELINE: &str = r#"
name: forgery
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars: {wbs: "T2", forge: ""}
states:
  - id: work
    onEnter:
      - kind: shell
        options: {command: 'sh forge.sh "$PPID" "$forge"'}
  - {id: review}
  - {id: done}
  - {id: failed}
transitions:
  - {from: review, to: done, guard: {kind: never}}
  - {from: work, to: done, guard: {kind: never}}
  - {from: work, to: failed}
"#;

/// Appends forged records after the journal's last line. `plain`: a record as an older
/// spur wrote it (no format version, no chain). `sha256`: chained exactly as spur chained
/// before keyed chains (format 1: `prev` the sha256 of the line before, `hash` the sha256
/// of the line up to it). Every other forgery is sealed exactly as spur seals, with the key
/// the step read from its file (`$XDG_STATE_HOME/spur/key`): `prev` the `mac` of the line
/// before, the key's id, and the HMAC-SHA256 of the line up to `mac` (openssl).
const FORGE: &str = r#"
pid=$1; what=$2
j="$SPUR_RUN_DIR/journal.jsonl"
seq=$(tail -n 1 "$j" | sed 's/.*"seq":\([0-9]*\).*/\1/')
at=2026-01-01T00:00:00.000Z
key=$(cat "$XDG_STATE_HOME/spur/key")
line() { # $1: the event and its fields
  seq=$((seq + 1))
  last=$(tail -n 1 "$j" | tr -d '\n')
  prev=$(printf '%s' "$last" | sed 's/.*"mac":"\([0-9a-f]*\)".*/\1/')
  id=$(printf '%s' "$last" | sed 's/.*"key":"\([0-9a-f]*\)".*/\1/')
  body="{\"v\":2,\"seq\":$seq,\"at\":\"$at\",\"prev\":\"$prev\",$1,\"key\":\"$id\""
  mac=$(printf '%s' "$body" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" | sed 's/^.*= //')
  printf '%s,"mac":"%s"}\n' "$body" "$mac" >> "$j"
}
case "$what" in
  plain)
    printf '{"seq":%s,"at":"%s","event":"transition","transition":0,"from":"review","to":"done","iteration":1}\n' $((seq + 1)) "$at" >> "$j" ;;
  sha256)
    prev=$(tail -n 1 "$j" | tr -d '\n' | sha256sum | cut -d' ' -f1)
    body="{\"v\":1,\"seq\":$((seq + 1)),\"at\":\"$at\",\"prev\":\"$prev\",\"event\":\"transition\",\"transition\":1,\"from\":\"work\",\"to\":\"done\",\"iteration\":1"
    hash=$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)
    printf '%s,"hash":"%s"}\n' "$body" "$hash" >> "$j" ;;
  elsewhere)
    line '"event":"transition","transition":0,"from":"review","to":"done","iteration":1' ;;
  never)
    line '"event":"guard-evaluated","state":"work","transition":1,"to":"done","kind":"never","passed":true,"durationUs":1'
    line '"event":"transition","transition":1,"from":"work","to":"done","iteration":1' ;;
  unguarded)
    line '"event":"transition","transition":1,"from":"work","to":"done","iteration":1' ;;
esac
kill -9 "$pid"
"#;

fn project() -> Spur {
    Spur::new()
        .file("pipeline.yaml", PIPELINE)
        .file("forge.sh", FORGE)
}

/// The one run of the project, read from its directory: `spur runs` leaves out a run
/// whose journal does not read.
fn only_run(p: &Spur) -> String {
    let runs: Vec<String> = std::fs::read_dir(p.join(".spur/runs"))
        .expect("a runs directory")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// The seq of the first line `forge.sh` appended (the line after the action's start).
fn first_forged_seq(p: &Spur, run_id: &str) -> u64 {
    let text = p.read(&format!(".spur/runs/{run_id}/journal.jsonl"));
    let started = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a journal line is JSON"))
        .find(|r| r["event"] == "action-process")
        .expect("the forging step started (its process group is journaled before it runs)");
    started["seq"].as_u64().unwrap() + 1
}

/// The sealing forger needs openssl; without it the test fails saying so (never skips).
fn require_openssl() {
    let found = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "this test needs `openssl` (HMAC in the forging step): install it (apt-get install openssl)"
    );
}

#[test]
fn a_forged_journal_record_refuses_the_resume_naming_its_seq() {
    require_openssl();
    for (forgery, what) in [
        ("plain", "format"),
        ("sha256", "written without the key"),
        ("elsewhere", "review"),
        ("never", "never"),
        ("unguarded", "transition 1"),
    ] {
        let p = project();
        // Detection is the promise here: the step must be able to write the journal (with
        // Landlock it cannot: tests/sandbox.rs).
        p.args(["run", "pipeline.yaml", "--var", &format!("forge={forgery}")])
            .env("SPUR_SANDBOX", "off")
            .run()
            .killed();
        let run_id = only_run(&p);
        let journal = p.read(&format!(".spur/runs/{run_id}/journal.jsonl"));
        let seq = first_forged_seq(&p, &run_id);

        let out = p.args(["continue", &run_id, "--json"]).run();
        let stderr = out.stderr().to_owned();
        assert_eq!(out.exit_code(), Some(4), "{forgery}: {stderr}");
        assert!(
            stderr.contains(&format!("seq {seq}")),
            "{forgery}: the error names seq {seq}: {stderr}"
        );
        assert!(stderr.contains(what), "{forgery}: says {what:?}: {stderr}");
        let task = p
            .args(["task", "show", "T2"])
            .json()
            .run()
            .success()
            .stdout_json();
        assert_ne!(task["status"], "done", "{forgery}: {task}");
        // Refused before anything ran: the journal is as the forger left it.
        assert_eq!(
            p.read(&format!(".spur/runs/{run_id}/journal.jsonl")),
            journal,
            "{forgery}"
        );
    }
}
