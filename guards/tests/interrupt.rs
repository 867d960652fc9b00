//! Kept in its own test binary: `kill_live_groups` signals every child this process runs,
//! so it must not share a process with other tests that run children. The interrupt
//! handler is process-wide too: those tests install it in a helper process,
//! `spur-guards-test-child` (`tests/support/interrupted_child.rs`), and signal that.

use std::thread;
use std::time::Duration;

use spur_guards::process::{kill_live_groups, live_groups, ProcessSpec, ProcessStatus};

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
    assert_eq!(kill_live_groups(libc::SIGKILL), 1);
    let out = handle.join().unwrap();
    assert_eq!(out.status, ProcessStatus::Signalled(libc::SIGKILL));
    assert!(live_groups().is_empty());
}

fn gone(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks existence.
    let rc = unsafe { libc::kill(pid, 0) };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return true;
    }
    // A zombie waiting for init to reap it is dead too.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    matches!(
        stat.rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next()),
        Some("Z" | "X")
    )
}

/// Signal the helper child (`tests/support/interrupted_child.rs`) once its grandchild runs;
/// it must exit with 128 + `signal` after its handler ran, its grandchild gone.
fn interrupt_kills_running_groups_and_exits(signal: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_spur-guards-test-child"))
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    // Bounded wait for the grandchild to exist (no fixed sleep).
    let started = (0..10_000).any(|_| {
        let ready = pidfile.exists();
        if !ready {
            thread::sleep(Duration::from_millis(1));
        }
        ready
    });
    assert!(started, "the child never started its grandchild");
    let grandchild: libc::pid_t = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(128 + signal), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("interrupted")).unwrap(),
        signal.to_string()
    );
    let dead = (0..10_000).any(|_| {
        let dead = gone(grandchild);
        if !dead {
            thread::sleep(Duration::from_millis(1));
        }
        dead
    });
    assert!(dead, "grandchild {grandchild} survived signal {signal}");
}

#[test]
fn ctrl_c_kills_running_groups_and_exits_130() {
    interrupt_kills_running_groups_and_exits(libc::SIGINT);
}

#[test]
fn sigterm_kills_running_groups_and_exits_143() {
    interrupt_kills_running_groups_and_exits(libc::SIGTERM);
}
