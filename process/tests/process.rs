//! The process layer through its public surface: output, exit, groups, timeouts, stdin,
//! environment, program lookup, descriptors.

#![forbid(unsafe_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use spur_process::{live_groups, ProcessSpec, ProcessStatus};

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

fn stdout(spec: &ProcessSpec) -> String {
    let out = spec.run();
    assert_eq!(out.status, ProcessStatus::Exited(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A process is gone once `kill(pid, 0)` fails, or it is a zombie waiting for its new
/// parent to reap it. The bounded loop waits for the kernel to finish a kill, never for a
/// fixed time.
fn wait_until_gone(pid: i32) -> bool {
    for _ in 0..10_000 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") || state == Some("X") {
            return true;
        }
        thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Whether `path` exists before 10 s pass, checking every millisecond.
fn wait_for_file(path: &Path) -> bool {
    let start = Instant::now();
    while !path.exists() {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

#[test]
fn captures_stdout_stderr_and_exit_code() {
    let out = ProcessSpec::shell("printf out; printf err >&2; exit 7").run();
    assert_eq!(out.status, ProcessStatus::Exited(7));
    assert_eq!(text(&out.stdout), "out");
    assert_eq!(text(&out.stderr), "err");
    assert!(out.pid.is_some());
}

#[test]
fn passes_env_cwd_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let out = ProcessSpec::shell(r#"printf '%s|%s|' "$GREETING" "$(basename "$PWD")"; cat"#)
        .env("GREETING", "hello")
        .cwd(dir.path())
        .stdin("piped in")
        .run();
    let base = dir.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(text(&out.stdout), format!("hello|{base}|piped in"));
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
}

#[test]
fn missing_program_fails_to_start() {
    let out = ProcessSpec::new("/nonexistent/spur-no-such-program", [""; 0]).run();
    match out.status {
        ProcessStatus::FailedToStart(why) => assert!(why.contains("spur-no-such-program")),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(out.pid, None);
}

#[test]
fn bad_input_fails_to_start_without_a_child() {
    for spec in [
        ProcessSpec::new("", [""; 0]),
        ProcessSpec::shell("true").env("A", "nul\0byte"),
        ProcessSpec::new("sh", ["-c", "true\0"]),
        ProcessSpec::shell("true").cwd("/no/such/dir/anywhere"),
        ProcessSpec::new("./no-such-program", [""; 0]),
        ProcessSpec::shell("true").log(Err("cannot open log file x".into())),
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
    // std's posix_spawn runs a script without a `#!` line with /bin/sh, as execvp does.
    let out = ProcessSpec::new("./no-shebang", [""; 0])
        .cwd(dir.path())
        .run();
    assert!(
        matches!(
            out.status,
            ProcessStatus::FailedToStart(_) | ProcessStatus::Exited(0)
        ),
        "{out:?}"
    );
}

#[test]
fn sh_is_found_on_path_and_keeps_its_name_as_arg0() {
    assert_eq!(stdout(&ProcessSpec::shell(r#"printf '%s' "$0""#)), "sh");
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
fn caps_captured_output_and_marks_truncation() {
    let out = ProcessSpec::shell("printf 0123456789")
        .capture_limit(4)
        .run();
    assert_eq!(text(&out.stdout), "0123");
    assert!(out.stdout_truncated);
    assert!(!out.stderr_truncated);
}

#[test]
fn appends_both_streams_to_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("action.log");
    std::fs::write(&log, "before\n").unwrap();
    let file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = ProcessSpec::shell("echo one; echo two >&2")
        .log(Ok(file))
        .capture_limit(0)
        .run();
    assert!(out.success());
    assert!(out.stdout.is_empty());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.starts_with("before\n"), "{logged}");
    assert!(
        logged.contains("one\n") && logged.contains("two\n"),
        "{logged}"
    );
}

#[test]
fn reports_a_signal_death() {
    let out = ProcessSpec::shell("kill -9 $$").run();
    assert_eq!(out.status, ProcessStatus::Signalled(9));
}

fn pid_written_to(path: &PathBuf) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn timeout_kills_the_whole_group_including_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    // Written whole (renamed into place), and only then does the timer matter: the shell
    // waits for a file the test writes once it has read the pid.
    let go = dir.path().join("go");
    let command = format!(
        "sleep 100 & echo $! > '{0}.tmp'; mv '{0}.tmp' '{0}'; while [ ! -e '{1}' ]; do sleep 0.01; done; sleep 100",
        pidfile.to_str().unwrap(),
        go.to_str().unwrap()
    );
    let runner = {
        let command = command.clone();
        thread::spawn(move || {
            ProcessSpec::shell(&command)
                .timeout(Duration::from_millis(300))
                .run()
        })
    };
    let _ = wait_for_file(&pidfile);
    std::fs::write(&go, "").unwrap();
    let out = runner.join().unwrap();
    assert_eq!(out.status, ProcessStatus::TimedOut);
    let grandchild = pid_written_to(&pidfile);
    assert!(
        wait_until_gone(grandchild),
        "grandchild {grandchild} survived"
    );
    assert!(!live_groups().contains(&(out.pid.unwrap() as i32)));
}

#[test]
fn output_larger_than_a_pipe_buffer_is_read_while_the_child_runs() {
    let out = ProcessSpec::shell(
        "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; echo done >&2",
    )
    .capture_limit(2 << 20)
    .run();
    assert!(out.success(), "{:?}", out.status);
    assert_eq!(out.stdout.len(), 1 << 20);
    assert!(out.stderr.ends_with(b"done\n"));
}

#[test]
fn stdin_larger_than_a_pipe_buffer_is_fed_while_output_is_read() {
    let input = vec![b'x'; 1 << 20];
    let out = ProcessSpec::shell("cat").stdin(input.clone()).run();
    assert!(out.success());
    assert_eq!(out.stdout, input);
}

#[test]
fn a_child_that_ignores_stdin_does_not_hang_the_feed() {
    let out = ProcessSpec::shell("exit 0")
        .stdin(vec![b'x'; 1 << 20])
        .run();
    assert_eq!(out.status, ProcessStatus::Exited(0));
}

#[test]
fn a_child_fed_nothing_reads_end_of_file_from_dev_null() {
    let spec = ProcessSpec::shell("readlink /proc/self/fd/0; cat; echo end");
    assert_eq!(stdout(&spec), "/dev/null\nend\n");
}

#[test]
fn a_leader_that_closes_its_output_early_is_still_waited_for() {
    let out = ProcessSpec::shell("exec >&-; sleep 0.1; printf late >&2; exit 4").run();
    assert_eq!(out.status, ProcessStatus::Exited(4));
    assert_eq!(text(&out.stderr), "late");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_term_ignoring_group_is_killed_after_the_grace_period() {
    let out = ProcessSpec::shell("trap '' TERM; sleep 100")
        .timeout(Duration::from_millis(100))
        .kill_grace(Duration::from_millis(100))
        .run();
    assert_eq!(out.status, ProcessStatus::TimedOut);
}

#[test]
fn background_leftovers_are_killed_when_the_leader_exits() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("bg.pid");
    let command = format!("sleep 100 & echo $! > '{}'", pidfile.to_str().unwrap());
    let out = ProcessSpec::shell(&command).run();
    assert_eq!(out.status, ProcessStatus::Exited(0));
    let bg = pid_written_to(&pidfile);
    assert!(wait_until_gone(bg), "background process {bg} survived");
}

#[test]
fn the_child_leads_its_own_process_group() {
    let out =
        ProcessSpec::shell("ps -o pgid= -p $$ 2>/dev/null || cut -d' ' -f5 /proc/$$/stat").run();
    let pgid: u32 = text(&out.stdout).trim().parse().unwrap();
    assert_eq!(Some(pgid), out.pid);
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

#[test]
fn threads_may_start_children_at_the_same_time() {
    let outputs: Vec<String> = thread::scope(|threads| {
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
fn the_start_hook_sees_the_group_and_its_refusal_kills_it() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let recorded = std::sync::Arc::clone(&seen);
    let out = ProcessSpec::shell("exit 3")
        .on_start(spur_process::StartHook::new(move |leader| {
            *recorded.lock().unwrap() = Some(leader);
            Ok(())
        }))
        .run();
    assert_eq!(out.status, ProcessStatus::Exited(3));
    let leader = seen.lock().unwrap().unwrap();
    assert_eq!(Some(leader.pgid as u32), out.pid);
    assert!(leader.start_time.is_some());

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = ProcessSpec::shell(&format!("sleep 1; touch '{}'", marker.display()))
        .on_start(spur_process::StartHook::new(|_| {
            Err("the journal is full".into())
        }))
        .run();
    match out.status {
        ProcessStatus::FailedToStart(why) => assert!(why.contains("the journal is full"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(!marker.exists());
}

#[test]
fn an_output_watch_stops_the_child_and_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let grandchild = dir.path().join("grandchild.pid");
    // A background child of the leader, then a line the watch stops on, then a wait that
    // only a kill ends.
    let script = format!(
        "sleep 600 & echo $! > {}; echo 'spent 1'; echo 'spent 99' >&2; wait; echo not-stopped",
        grandchild.display()
    );
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    let out = ProcessSpec::shell(&script)
        .timeout(Duration::from_secs(120))
        .watch(spur_process::OutputWatch::new(move |stream, bytes| {
            record.lock().unwrap().push(stream);
            String::from_utf8_lossy(bytes)
                .contains("spent 99")
                .then(|| "over budget".to_owned())
        }))
        .run();
    assert_eq!(out.status, ProcessStatus::Stopped("over budget".into()));
    assert!(!text(&out.stdout).contains("not-stopped"));
    assert!(seen
        .lock()
        .unwrap()
        .contains(&spur_process::OutputStream::Stderr));
    let pid = std::fs::read_to_string(&grandchild).unwrap();
    let gone = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .map_or(true, |stat| stat.contains(") Z "))
    };
    // SIGKILL is delivered, not awaited: bounded polling for the end.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(&pid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    assert!(gone(&pid), "the group's other process outlived the stop");
}
