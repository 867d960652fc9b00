//! The keeper: children die with spur, however spur dies.
//!
//! One small process per spur process, started on the first child: `sh` running
//! [`SCRIPT`], in a process group of its own, ignoring the terminal's signals, reading
//! lines from a pipe whose only writer is spur (`+ PGID` when a child's group starts,
//! `- PGID` before it is reaped, while its zombie leader still holds the id). When spur
//! ends — an exit, a panic, `kill -9` — the kernel closes the pipe, the keeper reads end of
//! file and SIGKILLs every group still listed, then exits.
//!
//! Why not `PR_SET_PDEATHSIG` in each child: it needs a `pre_exec` hook, which moves std
//! from `posix_spawn` onto `fork` (measured: 200 trivial gates 0.58 s against 0.44 s),
//! it reaches only the leader, not its group, it fires when the spawning *thread* ends
//! rather than the process, and it is Linux only. The pipe's end of file is none of these:
//! it works the same on macOS, and costs one `write` per child.
//!
//! What it cannot cover: a guard's or gate's child that spur started but had not yet
//! listed when it died (the moment between `posix_spawn` returning and the `write`; the
//! keeper is started before the first spawn, so listing is one `write`), and a keeper
//! killed on purpose. An action is listed before it may `exec` (`hold`), and a resume
//! kills the group its journal recorded ([`crate::kill_recorded_group`]).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// What the keeper runs. Only builtins, so a line costs no process; `kill -s KILL -- -G`
/// signals group G (dash and bash alike).
pub const SCRIPT: &str = r#"trap '' HUP INT TERM QUIT PIPE
live=' '
while read -r op pg; do
  case $op in
    +) live="$live$pg " ;;
    -) case $live in *" $pg "*) live="${live%% $pg *} ${live#* $pg }" ;; esac ;;
  esac
done
for pg in $live; do kill -s KILL -- "-$pg" 2>/dev/null; done
"#;

enum State {
    NotStarted,
    Running {
        pid: u32,
        pipe: ChildStdin,
    },
    /// It could not be started, or its pipe broke: children are not kept (logged once).
    Unavailable,
}

static KEEPER: Mutex<State> = Mutex::new(State::NotStarted);

fn lock() -> MutexGuard<'static, State> {
    KEEPER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Start the keeper if it is not running yet: called before a child is spawned, so that
/// listing the child right after its spawn is one `write`, not a process start.
pub(crate) fn ready() {
    let mut state = lock();
    if matches!(*state, State::NotStarted) {
        *state = start_keeper();
    }
}

/// List group `pgid` with the keeper (started on first use).
pub(crate) fn keep(pgid: i32) {
    send(&format!("+ {pgid}\n"), true);
}

/// Take group `pgid` off the keeper's list: its leader is about to be reaped.
pub(crate) fn release(pgid: i32) {
    send(&format!("- {pgid}\n"), false);
}

fn send(line: &str, start: bool) {
    let mut state = lock();
    if start && matches!(*state, State::NotStarted) {
        *state = start_keeper();
    }
    if let State::Running { pipe, .. } = &mut *state {
        if let Err(e) = pipe.write_all(line.as_bytes()) {
            log::warn!(
                "the keeper of child processes stopped ({e}); children no longer die with spur"
            );
            *state = State::Unavailable;
        }
    }
}

fn start_keeper() -> State {
    let shell = crate::executable::cached_shell()
        .map_or_else(|| "/bin/sh".into(), |p| p.as_os_str().to_owned());
    let started = Command::new(shell)
        .args(["-c", SCRIPT])
        .arg0("spur-keeper")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .process_group(0)
        .spawn();
    match started {
        Ok(mut child) => match child.stdin.take() {
            // The child is never waited for: it outlives spur by design (its zombie, if
            // it ends first, is reaped when spur exits).
            Some(pipe) => State::Running {
                pid: child.id(),
                pipe,
            },
            None => State::Unavailable,
        },
        Err(e) => {
            log::warn!(
                "cannot start the keeper of child processes ({e}); children will not die with spur"
            );
            State::Unavailable
        }
    }
}

/// The keeper's pid, once started (tests look for it).
pub fn pid() -> Option<u32> {
    match &*lock() {
        State::Running { pid, .. } => Some(*pid),
        _ => None,
    }
}
