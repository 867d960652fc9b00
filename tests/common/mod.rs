//! Helpers for the integration tests: [`Spur`], a temp project with the `spur` binary run
//! inside it, the run journal as JSON, and process checks.
#![allow(dead_code)]

mod journal;
pub mod restate;
mod spur;
mod verdict;

pub use journal::{assert_gap_free, events};
pub use spur::{bin, isolate, repo_path, Output, Spur};
pub use verdict::{
    fixture_verdict_through_spur, fixture_verdict_through_spur_in, write_verdict_through_spur,
};

/// Bounded wait for an event: true once `ready` holds (polled, at most 20 s). For waiting
/// on what a process does, never as an assertion about how long it took.
pub fn eventually(ready: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(20) {
        if ready() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    ready()
}

/// Whether process `pid` is still running and not already being killed: false when it is
/// gone, a zombie, or has SIGKILL or SIGTERM pending (it dies as soon as it is scheduled).
pub fn process_is_running(pid: &str) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let state = field("State:");
    if state.starts_with('Z') || state.starts_with('X') {
        return false;
    }
    let doomed = |mask: String| {
        u64::from_str_radix(&mask, 16).is_ok_and(|m| m & ((1 << 8) | (1 << 14)) != 0)
    };
    !(doomed(field("SigPnd:")) || doomed(field("ShdPnd:")))
}

/// A pipeline `name` for task 0804: state `work` runs the shell `command` (its lines kept),
/// then goes to `done`.
pub fn one_step_task_pipeline(name: &str, command: &str) -> String {
    let command: String = command
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect();
    format!(
        "name: {name}\ninitialState: work\nterminalStates: [done]\n\
         vars:\n  wbs: \"0804\"\nstates:\n  - id: work\n    onEnter:\n      - kind: shell\n\
         \x20       options:\n          command: |\n{command}  - id: done\n\
         transitions:\n  - {{from: work, to: done}}\n"
    )
}

/// `git -C dir ARGS`: its stdout; fails the test when git fails (or is not installed).
pub fn git_out(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git is needed by these tests (install git)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `text` with miette's wrapping undone: its words, one space apart, without the frame's `│`.
pub fn unwrapped(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ")
}
