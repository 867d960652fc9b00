//! Descriptors spur creates never reach a step: every one is close-on-exec, so a step can
//! neither write into spur's own pipes (the interrupt self-pipe above all) nor hold them open.

use crate::common::{events, Spur};

fn one_shell_step(command: &str) -> String {
    format!(
        r#"
name: fds
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: '{command}'
  - {{id: b}}
transitions: [{{from: a, to: b}}]
"#
    )
}

#[test]
fn a_step_writing_to_every_descriptor_does_not_interrupt_the_run() {
    let p = Spur::new();
    let mut fds = String::new();
    for fd in 3..=20 {
        fds.push_str(&format!("{fd} "));
    }
    let command =
        format!("for fd in {fds}; do ( printf x >&$fd ) 2>/dev/null; done; echo wrote > wrote.txt");
    let run = p.pipeline(&one_shell_step(&command)).json().run().success();
    let out = run.stdout_json();
    assert_eq!(out["state"], "b", "{out}");
    assert_eq!(out["outcome"], "completed", "{out}");
    assert_eq!(p.read("wrote.txt"), "wrote\n");
    let records = p.newest_trace();
    assert!(
        events(&records, "interrupted").is_empty(),
        "the run was interrupted: {records:?}"
    );
}

/// Writes the descriptors above 2 that the shell holds into `fds.txt` (`exec`, not a
/// redirected group: dash would keep a saved copy of stdout open above 9 for that).
const LIST_FDS: &str = "exec > fds.txt; for fd in $(seq 3 64); do [ -e /proc/$$/fd/$fd ] && printf \"%s \" $fd; done; true";

#[cfg(target_os = "linux")]
#[test]
fn a_step_sees_no_descriptor_spur_opened() {
    // Whatever the test harness itself passes on is not spur's: list the descriptors a shell
    // started directly from here sees, and require the step to see no more than that.
    let p = Spur::new();
    std::fs::create_dir_all(p.join("direct")).unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", LIST_FDS])
        .current_dir(p.join("direct"))
        .stdin(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    p.pipeline(&one_shell_step(LIST_FDS)).run().success();
    assert_eq!(
        p.read("fds.txt"),
        p.read("direct/fds.txt"),
        "the step saw more descriptors than a shell started by the test"
    );
}
