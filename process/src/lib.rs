//! spur-process: the child processes of spur — shell guards, actions, verify gates, agents.
//!
//! Every child is started through [`duct`] (std's `posix_spawn` underneath) as the leader
//! of a process group of its own, waited for in one `poll(2)` together with its output
//! pipes, and killed as a group: on its timeout, when its leader exits (leftovers), on
//! SIGINT/SIGTERM/SIGHUP ([`interrupt`]), and by the keeper ([`keeper`]) when spur itself
//! dies, however it dies. A run journals each action's group and its leader's start time
//! ([`Leader`]) so that a resume can kill a group a dead spur left ([`kill_recorded_group`]).
//!
//! ```no_run
//! use spur_process::{ProcessSpec, ProcessStatus};
//! use std::time::Duration;
//!
//! let out = ProcessSpec::shell("echo hi").timeout(Duration::from_secs(5)).run();
//! assert_eq!(out.status, ProcessStatus::Exited(0));
//! assert_eq!(out.stdout, b"hi\n");
//! ```
//!
//! This is the one crate of spur allowed `unsafe` (every other crate root forbids it); it
//! denies it at its root and allows it in one place, `hold` (std's `pre_exec` hook that
//! holds an action before `exec` until its group is journaled), each block with the
//! invariant it relies on. std, duct, signal-hook and rustix wrap every other call.

#![deny(unsafe_code)]

mod executable;
mod executable_search;
mod group;
mod hold;
pub mod interrupt;
pub mod keeper;
mod outcome;
mod run;
pub mod sandbox;
mod spec;
mod stream;

pub use executable_search::find_executable;
pub use group::{kill_live_groups, kill_recorded_group, live_groups, Leader, RecordedGroup};
pub use interrupt::{install_interrupt_handler, on_first_signal, terminate_live_groups};
pub use outcome::{ProcessOutcome, ProcessStatus};
pub use spec::{OutputStream, OutputWatch, ProcessSpec, StartHook};
