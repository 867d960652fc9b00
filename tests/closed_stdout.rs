//! Output into a pipe whose reader has gone away (`spur graph p.yaml | head -1` once `head`
//! has exited): the command ends as it would have, without a panic, and a run still runs to
//! its end and is journaled.

use std::process::{Command, Stdio};

use crate::common::{bin, isolate};
use tempfile::TempDir;

/// Run spur in `dir` with standard output a pipe whose read end is already closed, so every
/// write fails with EPIPE — deterministic, unlike closing the reader after some output.
fn run_into_closed_pipe(dir: &TempDir, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = Command::new(bin());
    // A home outside the project: the protected state under it must not lie inside the
    // project the sandbox grants to steps.
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    isolate(&mut cmd, home.path());
    cmd.args(args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

const PIPELINE: &str = "\
name: closed
initialState: a
terminalStates: [done]
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: 'echo ran > ran.txt'}}
  - {id: done}
transitions:
  - {from: a, to: done}
";

#[test]
fn graph_into_a_closed_pipe_exits_0_without_a_panic() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("p.yaml"), PIPELINE).unwrap();
    let out = run_into_closed_pipe(&dir, &["graph", "p.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_run_into_a_closed_pipe_still_runs_to_its_end() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("p.yaml"), PIPELINE).unwrap();
    let out = run_into_closed_pipe(&dir, &["run", "p.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ran.txt")).unwrap(),
        "ran\n"
    );
    let trace = run_into_closed_pipe(&dir, &["runs", "--json"]);
    assert_eq!(trace.status.code(), Some(0));
}
