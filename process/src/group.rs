//! Process groups: the ones running now (for an interrupt), signalling one, and the
//! identity a run journals for each action's group — its id and its leader's start time,
//! since ids are reused — so a resume kills a group a dead spur left, and only that one.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, test_kill_process_group, Pid, Signal};

/// A child's process group as a run records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leader {
    /// The group's id: the leader's pid.
    pub pgid: i32,
    /// The leader's start time (`/proc/<pid>/stat` field 22, clock ticks since boot);
    /// `None` where it cannot be read (not Linux).
    pub start_time: Option<u64>,
}

impl Leader {
    /// Process `pid` as the leader of its group, with its start time read now.
    pub fn of(pid: i32) -> Self {
        Self {
            pgid: pid,
            start_time: start_time(pid),
        }
    }

    /// This process (spur itself), to record who ran a group.
    pub fn this_process() -> Self {
        Self::of(i32::try_from(std::process::id()).unwrap_or(i32::MAX))
    }

    /// Whether the process recorded as this leader still runs: same pid, same start time
    /// (and not a zombie). `false` where start times cannot be read.
    pub fn still_runs(&self) -> bool {
        self.start_time.is_some()
            && start_time(self.pgid) == self.start_time
            && !leader_gone(self.pgid)
    }
}

/// What [`kill_recorded_group`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedGroup {
    /// No process of the group is left (or its leader is another process now).
    Gone,
    /// It was still running and is gone now.
    Killed,
    /// It still runs, but its leader cannot be told from a process that reused the id
    /// (no start time here): left alone.
    Unknown,
    /// It was killed but had not gone when the wait ended.
    Survived,
}

/// Kill the recorded group `leader` if its leader still runs and started at the recorded
/// time, then wait (bounded) until no process of the group is left. A group whose leader
/// has exited is killed too when the group id is not a live process's pid (the leftovers
/// of the recorded group: an id in use as a group id is never given to a new process).
pub fn kill_recorded_group(leader: Leader) -> RecordedGroup {
    let Some(pgid) = Pid::from_raw(leader.pgid) else {
        return RecordedGroup::Gone;
    };
    if pgid == Pid::INIT || test_kill_process_group(pgid).is_err() {
        return RecordedGroup::Gone;
    }
    match (start_time(leader.pgid), leader.start_time) {
        // The leader runs: it must be the recorded one.
        (Some(now), Some(then)) if now != then => return RecordedGroup::Gone,
        (Some(_), Some(_)) => {}
        // The leader has gone but the group lives on: its pgid cannot have been reused.
        (None, Some(_)) if leader_gone(leader.pgid) => {}
        _ => return RecordedGroup::Unknown,
    }
    let _ = kill_process_group(pgid, Signal::KILL);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if group_gone(pgid) {
            return RecordedGroup::Killed;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    RecordedGroup::Survived
}

/// Whether no process of group `pgid` is left but zombies.
fn group_gone(pgid: Pid) -> bool {
    if test_kill_process_group(pgid).is_err() {
        return true;
    }
    #[cfg(target_os = "linux")]
    {
        // Zombies still answer kill(0); they are dead. Look for a live member.
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        !entries.flatten().any(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let fields = after_command(&stat);
            let state = fields.first().copied();
            fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid.as_raw_nonzero().get())
                && !matches!(state, Some("Z" | "X"))
        })
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Whether the process `pid` no longer runs (gone, or a zombie).
fn leader_gone(pid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        matches!(after_command(&stat).first(), None | Some(&"Z" | &"X"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Pid::from_raw(pid).is_none_or(|p| rustix::process::test_kill_process(p).is_err())
    }
}

/// The fields of a `/proc/<pid>/stat` line after the command (field 3 on); the command
/// is in parentheses and may hold spaces and parentheses itself.
#[cfg(target_os = "linux")]
fn after_command(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`; a zombie keeps it);
/// `None` when it cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields = after_command(&stat);
    // Field 3 (the state) is the first after the command: field 22 is the 20th.
    fields.get(22 - 3)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn start_time(_pid: i32) -> Option<u64> {
    None
}

/// Send `signal` to group `pgid`; a group already gone is fine.
pub(crate) fn signal_group(pgid: i32, signal: Signal) {
    if let Some(pgid) = Pid::from_raw(pgid) {
        let _ = kill_process_group(pgid, signal);
    }
}

/// Process groups of children that are running right now.
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

pub(crate) fn lock_live_groups() -> MutexGuard<'static, BTreeSet<i32>> {
    LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Process-group ids of the children currently running under [`crate::ProcessSpec::run`].
pub fn live_groups() -> Vec<i32> {
    lock_live_groups().iter().copied().collect()
}

/// Send `signal` (a raw signal number) to every running child's process group. Returns
/// how many groups.
pub fn kill_live_groups(signal: i32) -> usize {
    let Some(signal) = Signal::from_named_raw(signal) else {
        return 0;
    };
    let live = lock_live_groups();
    for &pgid in live.iter() {
        signal_group(pgid, signal);
    }
    live.len()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn the_start_time_is_read_past_a_command_with_spaces_and_parentheses() {
        let stat = "123 (a) b (c) S 1 123 123 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1 2";
        let fields = after_command(stat);
        assert_eq!(fields.first(), Some(&"S"));
        assert_eq!(fields.get(19), Some(&"98765"));
        assert!(start_time(std::process::id() as i32).is_some());
    }

    #[test]
    fn a_recorded_group_whose_leader_started_at_another_time_is_left_alone() {
        let mut child = std::process::Command::new("sleep")
            .arg("100")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let real = Leader::of(pid);
        let other = Leader {
            pgid: pid,
            start_time: real.start_time.map(|t| t + 1),
        };
        assert_eq!(kill_recorded_group(other), RecordedGroup::Gone);
        assert_eq!(child.try_wait().unwrap(), None, "a reused id was killed");
        assert_eq!(kill_recorded_group(real), RecordedGroup::Killed);
        assert!(child.wait().is_ok());
    }
}
