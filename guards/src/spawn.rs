//! Starting a child: in a process group of its own, stdout and stderr piped, stdin piped or
//! `/dev/null`, in a working directory, with an environment.
//!
//! `std::process::Command` would start it with `posix_spawn`, but on every spawn that sets a
//! variable it copies the whole inherited environment into an ordered map and then into
//! fresh C strings, and it opens `/dev/null` in the parent. A verify run spawns hundreds of
//! short gates, each with its own variables; in profiles of 200 `true` gates that copying
//! cost more parent CPU than the spawn call itself. Here the inherited environment is
//! turned into C strings once per process (spur never changes its own environment) and
//! each spawn only adds pointers to it and the spec's own variables. `/dev/null`, the stdin
//! of children not fed any, is opened once per process too: each child only moves it onto
//! descriptor 0, one `open` fewer per child.
//!
//! The child itself is started by [`child_setup`], which also says why not with glibc's
//! `posix_spawn`.

use std::borrow::Cow;
use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::OnceLock;

use crate::child_setup::{self, ChildPlan};
use crate::executable_search::search_path;
use crate::process::ProcessSpec;

/// A started child and our ends of its pipes.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) pid: libc::pid_t,
    /// Readable once the child has exited (see [`child_setup::Started::exit`]).
    pub(crate) exit: Option<OwnedFd>,
    /// Present when the spec feeds stdin.
    pub(crate) stdin: Option<OwnedFd>,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
    /// The write ends of the output pipes the child was given. Held until the child has
    /// exited, they keep its exit from also showing as a hang-up on the pipes.
    pub(crate) writers: [OwnedFd; 2],
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
}

/// Start `spec`'s program. Errors are those `exec` would give (`ENOENT` for a program not
/// found on PATH, the `chdir` error for a missing working directory) or `InvalidInput`
/// for a NUL byte in an argument, a variable or the working directory.
pub(crate) fn spawn(spec: &ProcessSpec) -> io::Result<Spawned> {
    let program = executable(spec)?;
    let argv: Vec<CString> = std::iter::once(&spec.program)
        .chain(&spec.args)
        .map(|arg| c_string(arg.as_bytes()))
        .collect::<io::Result<_>>()?;
    let environment = environment(spec)?;
    let cwd = spec
        .cwd
        .as_ref()
        .map(|dir| c_string(dir.as_os_str().as_bytes()))
        .transpose()?;

    let stdin = spec.stdin.as_ref().map(|_| pipe()).transpose()?;
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;

    let argv_ptrs = null_terminated(&argv);
    let started = child_setup::start(&ChildPlan {
        program: &program,
        argv: &argv_ptrs,
        envp: &environment.pointers,
        stdin: match &stdin {
            Some((read_end, _)) => read_end.as_raw_fd(),
            None => dev_null()?,
        },
        stdout: stdout_write.as_raw_fd(),
        stderr: stderr_write.as_raw_fd(),
        cwd: cwd.as_deref(),
    })?;
    // The child's end of stdin closes here; its output ends go to the caller.
    Ok(Spawned {
        pid: started.pid,
        exit: started.exit,
        stdin: stdin.map(|(_, write_end)| write_end),
        stdout: stdout_read,
        stderr: stderr_read,
        writers: [stdout_write, stderr_write],
    })
}

/// `/dev/null` for the stdin of children not fed any: opened once per process, close-on-exec
/// and above descriptors 0–2 like the pipes. A failure is not remembered: the next spawn
/// tries again.
fn dev_null() -> io::Result<libc::c_int> {
    static DEV_NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = DEV_NULL.get() {
        return Ok(fd.as_raw_fd());
    }
    let opened = std::fs::File::open("/dev/null").map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot open /dev/null for its stdin: {e}"),
        )
    })?;
    let fd = above_stdio(OwnedFd::from(opened))?;
    // Two threads may get here at once: one descriptor is kept, the other closed.
    Ok(DEV_NULL.get_or_init(|| fd).as_raw_fd())
}

/// Wait for `pid` to end and reap it.
pub(crate) fn reap(pid: libc::pid_t) -> io::Result<Exit> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: plain syscall on our own child; `status` outlives the call.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            return Ok(if libc::WIFSIGNALED(status) {
                Exit::Signal(libc::WTERMSIG(status))
            } else {
                Exit::Code(libc::WEXITSTATUS(status))
            });
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The path to `exec`: the program itself when it names a path, else the first executable
/// file of that name on the child's PATH (as `execvp` would search it). `sh` on an
/// unchanged PATH is looked up once per process and reused: on a long PATH every lookup is
/// a dozen failed `stat`s.
fn executable(spec: &ProcessSpec) -> io::Result<Cow<'static, CStr>> {
    let name = spec.program.as_os_str();
    if name.as_bytes().contains(&b'/') {
        return c_string(name.as_bytes()).map(Cow::Owned);
    }
    let not_found = || io::Error::from_raw_os_error(libc::ENOENT);
    if name.is_empty() {
        return Err(not_found());
    }
    let changed = spec.env.iter().rev().find(|(n, _)| n == "PATH");
    let path = match changed {
        Some((_, value)) => Some(value.clone()),
        None if spec.env_remove.iter().any(|n| n == "PATH") => None,
        None if name == "sh" => {
            if let Some(shell) = cached_shell() {
                return Ok(Cow::Borrowed(shell));
            }
            std::env::var_os("PATH")
        }
        None => std::env::var_os("PATH"),
    };
    // No PATH at all: the default search path of `execvp`.
    let path = path.unwrap_or_else(|| "/bin:/usr/bin".into());
    let found = search_path(name, &path, spec.cwd.as_deref()).ok_or_else(not_found)?;
    c_string(found.as_os_str().as_bytes()).map(Cow::Owned)
}

/// `sh` on the PATH spur was started with, when that lookup gives an absolute path. Looked
/// up once: nothing in spur changes its own environment (see [`inherited_environment`]).
fn cached_shell() -> Option<&'static CStr> {
    static SHELL: OnceLock<Option<CString>> = OnceLock::new();
    SHELL
        .get_or_init(|| {
            let path = std::env::var_os("PATH")?;
            // A relative PATH entry would be looked up from the child's working directory:
            // only an absolute result is safe to reuse.
            let shell = search_path(OsStr::new("sh"), &path, None).filter(|p| p.is_absolute())?;
            c_string(shell.as_os_str().as_bytes()).ok()
        })
        .as_deref()
}

/// A child's environment: pointers into the inherited environment (kept for the life of
/// the process) and into the spec's own variables, owned here.
struct Environment {
    _added: Vec<CString>,
    pointers: Vec<*mut libc::c_char>,
}

/// The inherited environment without the variables the spec removes or sets, then the
/// spec's variables (the last setting of a name wins), NULL-terminated.
fn environment(spec: &ProcessSpec) -> io::Result<Environment> {
    let set_or_removed = |name: &[u8]| {
        spec.env.iter().any(|(n, _)| n.as_bytes() == name)
            || spec.env_remove.iter().any(|n| n.as_bytes() == name)
    };
    let mut pointers: Vec<*mut libc::c_char> = inherited_environment()
        .iter()
        .filter(|entry| !set_or_removed(&entry.name))
        .map(|entry| entry.assignment.as_ptr().cast_mut())
        .collect();
    let mut added = Vec::with_capacity(spec.env.len());
    for (i, (name, value)) in spec.env.iter().enumerate() {
        let set_again = spec
            .env
            .get(i + 1..)
            .is_some_and(|later| later.iter().any(|(n, _)| n == name));
        if !set_again {
            added.push(assignment(name, value)?);
        }
    }
    // A CString's bytes live on the heap: moving it into `added` does not move them.
    pointers.extend(added.iter().map(|s| s.as_ptr().cast_mut()));
    pointers.push(std::ptr::null_mut());
    Ok(Environment {
        _added: added,
        pointers,
    })
}

/// One variable of the inherited environment.
struct Inherited {
    name: Vec<u8>,
    /// `NAME=value`.
    assignment: CString,
}

/// The environment spur was started with, converted once. Nothing in spur sets or removes
/// a variable of its own process, so the snapshot stays true.
fn inherited_environment() -> &'static [Inherited] {
    static INHERITED: OnceLock<Vec<Inherited>> = OnceLock::new();
    INHERITED.get_or_init(|| {
        std::env::vars_os()
            .filter_map(|(name, value)| {
                Some(Inherited {
                    assignment: assignment(&name, &value).ok()?,
                    name: name.into_vec(),
                })
            })
            .collect()
    })
}

fn assignment(name: &OsStr, value: &OsStr) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(name.len() + value.len() + 2);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(b'=');
    bytes.extend_from_slice(value.as_bytes());
    c_string(&bytes)
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a NUL byte in the program, an argument, a variable or the working directory",
        )
    })
}

fn null_terminated(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// A close-on-exec pipe, (read end, write end), both above the standard descriptors so
/// that moving them onto 0, 1 and 2 in the child never overwrites one with another.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_fd, write_fd] = fds;
    // SAFETY: both descriptors were just created and are owned only here.
    let (read_end, write_end) = unsafe {
        (
            OwnedFd::from_raw_fd(read_fd),
            OwnedFd::from_raw_fd(write_fd),
        )
    };
    Ok((above_stdio(read_end)?, above_stdio(write_end)?))
}

/// `fd`, or a close-on-exec copy numbered 3 or above when it is 0, 1 or 2 (which happens
/// only when our own standard streams are closed).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) on a descriptor we own returns a new one or -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{ProcessSpec, ProcessStatus};
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn stdout(spec: &ProcessSpec) -> String {
        let out = spec.run();
        assert_eq!(out.status, ProcessStatus::Exited(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn a_child_fed_nothing_reads_end_of_file_from_dev_null_every_time() {
        // The second child gets the same once-opened /dev/null as the first.
        for _ in 0..2 {
            let spec = ProcessSpec::shell("readlink /proc/self/fd/0; cat; echo end");
            assert_eq!(stdout(&spec), "/dev/null\nend\n");
        }
        let fd = dev_null().unwrap();
        assert!(fd > 2, "not one of the standard descriptors: {fd}");
        // SAFETY: F_GETFD on a descriptor this process holds open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(
            flags & libc::FD_CLOEXEC,
            libc::FD_CLOEXEC,
            "not inherited past exec"
        );
    }

    #[test]
    fn sh_is_resolved_to_an_absolute_path_and_keeps_its_name_as_arg0() {
        let program = executable(&ProcessSpec::shell("true")).unwrap();
        let program = Path::new(OsStr::from_bytes(program.to_bytes()));
        assert!(
            program.is_absolute() && program.ends_with("sh"),
            "{program:?}"
        );
        let arg0 = stdout(&ProcessSpec::shell(r#"printf '%s' "$0""#));
        assert_eq!(arg0, "sh", "$0 is what the spec named");
    }

    #[test]
    fn a_changed_path_is_the_one_searched() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("only-here");
        std::fs::write(&tool, "#!/bin/sh\necho found\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let with_path = ProcessSpec::new("only-here", [""; 0]).env("PATH", dir.path());
        assert_eq!(stdout(&with_path), "found\n");

        let out = ProcessSpec::new("only-here", [""; 0]).run();
        match out.status {
            ProcessStatus::FailedToStart(why) => {
                assert!(why.contains("No such file or directory"), "{why}")
            }
            other => panic!("started without it on PATH: {other:?}"),
        }
        let no_path = ProcessSpec::shell("true").env_remove("PATH");
        assert!(no_path.run().success(), "the default search path has sh");
    }

    #[test]
    fn a_relative_path_entry_is_searched_from_the_child_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        let tool = dir.path().join("bin/local-tool");
        std::fs::write(&tool, "#!/bin/sh\npwd\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let spec = ProcessSpec::new("local-tool", [""; 0])
            .env("PATH", "bin:/usr/bin:/bin")
            .cwd(dir.path());
        let printed = stdout(&spec);
        assert_eq!(
            Path::new(printed.trim()).canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
    }

    #[test]
    fn the_last_setting_of_a_variable_wins_and_removal_comes_first() {
        let spec = ProcessSpec::shell(r#"printf '%s|%s' "$A" "${HOME-unset}""#)
            .env("A", "first")
            .env("A", "second")
            .env_remove("HOME");
        assert_eq!(stdout(&spec), "second|unset");
        let spec = ProcessSpec::shell(r#"printf '%s' "$HOME""#)
            .env_remove("HOME")
            .env("HOME", "/set/again");
        assert_eq!(stdout(&spec), "/set/again");
        let environment =
            environment(&ProcessSpec::shell("true").env("A", "1").env("A", "2")).unwrap();
        let (last, entries) = environment.pointers.split_last().unwrap();
        assert!(last.is_null(), "NULL-terminated");
        let a: Vec<_> = entries
            .iter()
            // SAFETY: every pointer but the last points into a live, NUL-terminated CString.
            .map(|&p| unsafe { std::ffi::CStr::from_ptr(p) })
            .filter(|e| e.to_bytes().starts_with(b"A="))
            .collect();
        assert_eq!(a, [c"A=2"], "one entry per name, the last setting");
    }

    #[test]
    fn bad_input_fails_to_start_without_a_child() {
        for spec in [
            ProcessSpec::new("", [""; 0]),
            ProcessSpec::shell("true").env("A", "nul\0byte"),
            ProcessSpec::new("sh", ["-c", "true\0"]),
            ProcessSpec::shell("true").cwd("/no/such/dir/anywhere"),
            ProcessSpec::new("./no-such-program", [""; 0]),
        ] {
            let out = spec.run();
            assert!(
                matches!(out.status, ProcessStatus::FailedToStart(_)),
                "{spec:?}: {out:?}"
            );
            assert_eq!(out.pid, None);
        }
    }

    #[test]
    fn a_program_exec_refuses_fails_to_start_with_exec_s_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data.txt"), "not a program\n").unwrap();
        std::fs::create_dir(dir.path().join("a-dir")).unwrap();
        let script = dir.path().join("no-shebang");
        std::fs::write(&script, "echo never\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        for (program, reason) in [
            ("./data.txt", "Permission denied"),
            ("./a-dir", "Permission denied"),
            ("./no-shebang", "Exec format error"),
        ] {
            let out = ProcessSpec::new(program, [""; 0]).cwd(dir.path()).run();
            match &out.status {
                ProcessStatus::FailedToStart(why) => {
                    assert!(why.starts_with(program) && why.contains(reason), "{why}")
                }
                other => panic!("{program} started: {other:?}"),
            }
            assert_eq!(out.pid, None, "no child is left behind");
        }
    }

    #[test]
    fn the_child_starts_with_default_sigpipe_and_no_blocked_signal() {
        // `SigIgn`/`SigBlk` in /proc are hex masks; SIGPIPE is bit 13.
        let status = stdout(&ProcessSpec::shell(
            "grep -E '^Sig(Ign|Blk)' /proc/self/status",
        ));
        for line in status.lines() {
            let mask = u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap();
            if line.starts_with("SigBlk") {
                assert_eq!(mask, 0, "{line}");
            } else {
                assert_eq!(mask & (1 << 12), 0, "SIGPIPE ignored: {line}");
            }
        }
    }

    /// Whether this process is the fresh copy of the test binary that runs only the test
    /// `name` of this module. If not, run that copy and assert that the test passed in it;
    /// a test that changes process-wide signal state does its work in the copy, so the
    /// change cannot reach the children that other tests here start at the same time.
    fn in_own_process(name: &str) -> bool {
        const RUNNING_ALONE: &str = "SPUR_GUARDS_TEST_RUNNING_ALONE";
        let (_crate, module) = module_path!().split_once("::").unwrap();
        let test = format!("{module}::{name}");
        if std::env::var(RUNNING_ALONE).is_ok_and(|running| running == test) {
            return true;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([test.as_str(), "--exact", "--test-threads=1"])
            .env(RUNNING_ALONE, &test)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("test result: ok. 1 passed"),
            "{test} in a process of its own ({}):\n{stdout}{stderr}",
            out.status
        );
        false
    }

    #[test]
    fn an_ignored_signal_other_than_sigpipe_stays_ignored() {
        if !in_own_process("an_ignored_signal_other_than_sigpipe_stays_ignored") {
            return;
        }
        // What `exec` does, and what `nohup` relies on. SIGUSR2 is bit 11 of `SigIgn`.
        // SAFETY: ignoring a signal nothing in this process sends.
        unsafe {
            libc::signal(libc::SIGUSR2, libc::SIG_IGN);
        }
        let status = stdout(&ProcessSpec::shell("grep '^SigIgn' /proc/self/status"));
        let mask = u64::from_str_radix(status.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_ne!(mask & (1 << 11), 0, "{status}");
    }

    #[test]
    fn a_handler_installed_later_is_known_to_children_after_a_refresh() {
        if !in_own_process("a_handler_installed_later_is_known_to_children_after_a_refresh") {
            return;
        }
        extern "C" fn nothing(_: libc::c_int) {}
        // SAFETY: a zeroed sigaction is valid; the handler does nothing.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = nothing as *const () as libc::sighandler_t;
            libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
        }
        child_setup::refresh_caught_signals();
        assert_ne!(
            child_setup::caught_signals() & (1 << (libc::SIGUSR1 - 1)),
            0
        );
        // The child starts with it at its default action (`exec` resets caught signals
        // too; the child has reset it before it unblocked signals).
        let status = stdout(&ProcessSpec::shell("grep '^SigCgt' /proc/self/status"));
        let mask = u64::from_str_radix(status.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(mask & (1 << (libc::SIGUSR1 - 1)), 0, "{status}");
    }

    #[test]
    fn threads_may_start_children_at_the_same_time() {
        let outputs: Vec<String> = std::thread::scope(|threads| {
            let workers: Vec<_> = (0..8)
                .map(|t| {
                    threads.spawn(move || {
                        (0..25)
                            .map(|i| stdout(&ProcessSpec::shell(&format!("printf {t}-{i}"))))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for (t, output) in outputs.iter().enumerate() {
            let expected: Vec<String> = (0..25).map(|i| format!("{t}-{i}")).collect();
            assert_eq!(*output, expected.join(" "));
        }
    }

    #[test]
    fn the_child_comes_with_a_pidfd_that_turns_readable_when_it_exits() {
        let spawned = spawn(&ProcessSpec::shell("exit 7")).unwrap();
        let exit = spawned
            .exit
            .expect("CLONE_PIDFD (Linux 5.2+) gives a pidfd");
        let mut fds = [libc::pollfd {
            fd: exit.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: one valid pollfd; no timeout, so this returns once the child exits.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, -1) };
        assert_eq!(ready, 1);
        assert_eq!(reap(spawned.pid).unwrap(), Exit::Code(7));
    }

    #[test]
    fn pipes_are_moved_above_the_standard_descriptors() {
        let (read_end, write_end) = pipe().unwrap();
        assert!(read_end.as_raw_fd() > 2 && write_end.as_raw_fd() > 2);
    }
}
