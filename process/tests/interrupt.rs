//! Kept in its own test binary: `kill_live_groups` signals every child this process runs,
//! so it must not share a process with other tests that run children. The interrupt
//! handler is process-wide too: those tests install it in a helper process,
//! `spur-process-test-child` (`tests/support/interrupted_child.rs`), and signal that.

#![forbid(unsafe_code)]

use std::path::Path;
use std::thread;
use std::time::Duration;

use rustix::process::{kill_process, Pid, Signal};
use spur_process::{kill_live_groups, live_groups, ProcessSpec, ProcessStatus};

#[test]
fn kill_live_groups_reaches_a_running_child() {
    let handle = thread::spawn(|| ProcessSpec::shell("sleep 100").run());
    // Bounded wait for the child to be registered (no fixed sleep).
    let registered = (0..5000).any(|_| {
        let found = !live_groups().is_empty();
        if !found {
            thread::sleep(Duration::from_millis(1));
        }
        found
    });
    assert!(registered, "child never registered");
    assert_eq!(kill_live_groups(9), 1);
    let out = handle.join().unwrap();
    assert_eq!(out.status, ProcessStatus::Signalled(9));
    assert!(live_groups().is_empty());
}

/// Gone, or a zombie waiting for its new parent to reap it.
fn gone(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty()
        || matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        )
}

/// Bounded wait for an event (no fixed sleep): true once `ready` holds.
fn eventually(ready: impl Fn() -> bool) -> bool {
    (0..10_000).any(|_| {
        let now = ready();
        if !now {
            thread::sleep(Duration::from_millis(1));
        }
        now
    })
}

/// The helper child (`tests/support/interrupted_child.rs`) running its grandchild, and the
/// grandchild's pid.
fn helper_with_grandchild(dir: &Path) -> (std::process::Child, i32) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_spur-process-test-child"))
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pidfile = dir.join("grandchild.pid");
    assert!(
        eventually(|| pidfile.exists()),
        "the child never started its grandchild"
    );
    let grandchild = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (child, grandchild)
}

fn signal(pid: u32, signal: Signal) {
    kill_process(Pid::from_raw(pid as i32).unwrap(), signal).unwrap();
}

/// Signal the helper child once its grandchild runs; it must exit with 128 + `signal`
/// after its handler ran, its grandchild gone.
fn interrupt_kills_running_groups_and_exits(sig: Signal) {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, grandchild) = helper_with_grandchild(dir.path());
    signal(child.id(), sig);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(128 + sig.as_raw()), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("interrupted")).unwrap(),
        sig.as_raw().to_string()
    );
    assert!(
        eventually(|| gone(grandchild)),
        "grandchild {grandchild} survived signal {sig:?}"
    );
}

#[test]
fn ctrl_c_kills_running_groups_and_exits_130() {
    interrupt_kills_running_groups_and_exits(Signal::INT);
}

#[test]
fn sigterm_kills_running_groups_and_exits_143() {
    interrupt_kills_running_groups_and_exits(Signal::TERM);
}

#[test]
fn sighup_kills_running_groups_and_exits_129() {
    interrupt_kills_running_groups_and_exits(Signal::HUP);
}

/// SIGKILL runs no handler: the keeper, reading end of file on its pipe, kills the group.
/// (The helper holds its child until it is listed, as spur does an action's, so the kill
/// cannot come between the spawn and the listing.)
#[test]
fn children_die_with_a_process_killed_by_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, grandchild) = helper_with_grandchild(dir.path());
    signal(child.id(), Signal::KILL);
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    assert!(
        !dir.path().join("interrupted").exists(),
        "no handler runs on SIGKILL"
    );
    assert!(
        eventually(|| gone(grandchild)),
        "grandchild {grandchild} outlived its killed parent"
    );
}
