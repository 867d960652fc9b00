//! The process groups a dead spur left. Every action process is journaled with its group,
//! its leader's start time and the spur that started it (`action-process`); the keeper
//! (`spur_process::keeper`) kills them when that spur dies, and a resume makes sure:
//! before it decides or re-runs anything, it kills every recorded group whose leader is
//! still the recorded process (same start time: ids are reused) and whose spur is gone,
//! and waits until none of its processes is left. So `continue --rerun-ambiguous` never
//! runs an action beside a copy of itself.

use spur_process::{kill_recorded_group, Leader, RecordedGroup};

use super::journal::{Event, Record};

/// Kill the groups of `records`' action processes that a dead spur left running.
pub(super) fn kill(records: &[Record]) {
    for record in records {
        let Event::ActionProcess {
            pgid,
            start_time,
            spur_pid,
            spur_start_time,
            ..
        } = &record.event
        else {
            continue;
        };
        let spur = Leader {
            pgid: *spur_pid,
            start_time: *spur_start_time,
        };
        if spur.still_runs() {
            // The run is in progress in that spur: its actions are its own.
            continue;
        }
        let group = Leader {
            pgid: *pgid,
            start_time: *start_time,
        };
        // A group that survives SIGKILL (stopped in the kernel) is past what spur can do.
        let _: RecordedGroup = kill_recorded_group(group);
    }
}
