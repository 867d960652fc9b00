//! Kept in its own test binary: `kill_live_groups` signals every child this process runs,
//! so it must not share a process with other tests that run children.

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

/// Runs only when re-executed by the test below: installs the interrupt handler, then
/// runs a shell with a grandchild until the parent sends SIGINT.
#[test]
fn interrupted_child_mode() {
    let Some(dir) = std::env::var_os("SPUR_INTERRUPT_CHILD_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let marker = dir.join("interrupted");
    spur_guards::process::install_interrupt_handler(move |signal| {
        std::fs::write(&marker, signal.to_string()).unwrap();
    })
    .unwrap();
    let pidfile = dir.join("grandchild.pid");
    let command = format!(
        "sleep 100 & echo $! > '{0}.tmp'; mv '{0}.tmp' '{0}'; sleep 100",
        pidfile.display()
    );
    ProcessSpec::shell(&command).run();
    panic!("the run should have been interrupted");
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

#[test]
fn ctrl_c_kills_running_groups_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["interrupted_child_mode", "--exact", "--nocapture"])
        .env("SPUR_INTERRUPT_CHILD_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
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
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("interrupted")).unwrap(),
        libc::SIGINT.to_string()
    );
    let dead = (0..10_000).any(|_| {
        let dead = gone(grandchild);
        if !dead {
            thread::sleep(Duration::from_millis(1));
        }
        dead
    });
    assert!(dead, "grandchild {grandchild} survived Ctrl-C");
}
