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
