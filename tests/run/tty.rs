//! `spur run` on a real terminal (tmux): the run id at start, the live progress line while
//! an action runs, and Ctrl-C — the terminal's SIGINT — ending that line cleanly with the
//! run id and the exact command that resumes the run.
//!
//! Needs `tmux` (`apt-get install tmux`); the test fails, never skips, without it. Waits
//! are for what the pane shows or a file the step writes, polled with a bound; no assertion
//! depends on how long anything took.

use std::path::Path;
use std::process::Command;

use crate::common::{bin, eventually, process_is_running, Spur};

const PIPELINE: &str = r#"
name: tty
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: '[ -f release ] && exit 0; echo $$ > leader.tmp; mv leader.tmp leader.pid; sleep 1000'
  - {id: b}
transitions: [{from: a, to: b}]
"#;

/// A tmux server of the test's own (its socket in the project), killed when dropped.
struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    fn start(project: &Path, home: &Path, shell_command: &str) -> Self {
        let socket = project.join("tmux.sock");
        let tmux = Self { socket };
        let status = tmux
            .command()
            .args(["-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "20"])
            .args(["-s", "t", "-c"])
            .arg(project)
            .arg(format!(
                "HOME='{home}' XDG_STATE_HOME='{home}/state' {shell_command}; echo EXIT=$?; sleep 1000",
                home = home.display()
            ))
            .status()
            .unwrap_or_else(|e| {
                panic!("this test drives a terminal with tmux ({e}): install it (apt-get install tmux)")
            });
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    /// The pane's text, lines trimmed at the end, trailing empty lines dropped.
    fn pane(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let end = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines.get(..end).unwrap_or_default().join("\n")
    }

    fn send_keys(&self, keys: &str) {
        let status = self
            .command()
            .args(["send-keys", "-t", "t", keys])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

#[test]
fn ctrl_c_on_a_terminal_ends_the_progress_line_and_prints_the_resume_command() {
    let p = Spur::new().file("p.yaml", PIPELINE);
    let tmux = Tmux::start(
        p.path(),
        p.home(),
        &format!("'{}' run p.yaml", bin().display()),
    );

    // The run id is shown at start, and the live progress line names the running action.
    assert!(
        eventually(|| p.join("leader.pid").exists() && tmux.pane().contains(" shell")),
        "the step never started or no progress line was drawn:\n{}",
        tmux.pane()
    );
    let live = tmux.pane();
    assert!(live.starts_with("spur: running tty (run "), "{live}");
    let leader = p.read("leader.pid").trim().to_owned();

    tmux.send_keys("C-c");
    assert!(
        eventually(|| tmux.pane().contains("EXIT=")),
        "spur did not exit on Ctrl-C:\n{}",
        tmux.pane()
    );
    let after = tmux.pane();
    let run_id = p.only_run_id();
    assert!(after.contains("EXIT=130"), "{after}");
    assert!(
        after.contains(&format!("spur continue {run_id} --rerun-ambiguous")),
        "{after}"
    );
    // The progress line is gone, not left half-drawn above the message.
    assert!(
        !after.lines().any(|l| l.contains(" shell")),
        "the progress line was left on the terminal:\n{after}"
    );
    assert!(!process_is_running(&leader), "the action {leader} survived");
    insta::with_settings!({filters => vec![(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "[RUN]")]}, {
        insta::assert_snapshot!(after);
    });

    // The printed command resumes the run to its end.
    p.file("release", "");
    let out = p
        .args(["continue", &run_id, "--rerun-ambiguous"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b", "{out}");
}
