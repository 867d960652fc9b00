//! No action outlives spur. A kill -9 of spur mid-action leaves no process of the action's
//! group (the keeper kills it); a resume kills a group a dead spur left before it re-runs
//! anything (journaled in `action-process`), so `--rerun-ambiguous` never runs an action
//! beside a copy of itself; SIGHUP, SIGTERM and SIGINT each kill the groups, journal
//! `interrupted` and print the run id and the command that resumes it.
//!
//! Waits here are for events (a file written, a process gone), polled with a bound; no
//! assertion depends on how long anything took.

use std::process::{Child, Command, Stdio};

use crate::common::{bin, events, eventually, isolate, process_is_running, Spur};

fn pipeline(command: &str) -> String {
    format!(
        r#"
name: orphans
initialState: a
terminalStates: [b]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: '{command}'
  - {{id: b}}
transitions: [{{from: a, to: b}}]
"#
    )
}

/// The step: a background grandchild, then the leader's own pid, each written whole; it
/// ends at once when `release` exists.
const LEADER_AND_GRANDCHILD: &str = "[ -f release ] && exit 0; sleep 1000 & echo $! > bg.tmp; mv bg.tmp bg.pid; echo $$ > leader.tmp; mv leader.tmp leader.pid; wait";

fn spawn_spur(p: &Spur, args: &[&str]) -> Child {
    let mut cmd = Command::new(bin());
    isolate(&mut cmd, p.home());
    cmd.current_dir(p.path())
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn spur")
}

fn pid_in(p: &Spur, rel: &str) -> String {
    assert!(
        eventually(|| p.join(rel).exists()),
        "the step never wrote {rel}"
    );
    p.read(rel).trim().to_owned()
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// The keeper spur started (`spur-keeper` in its argv), found among spur's children.
fn keeper_of(spur: u32) -> Option<String> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid = entry.file_name().to_str()?.to_owned();
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .to_owned();
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (ppid == spur.to_string() && cmdline.starts_with(b"spur-keeper\0")).then_some(pid)
        })
}

#[test]
fn kill_9_of_spur_mid_action_leaves_no_process_of_the_action_group() {
    let p = Spur::new().file("p.yaml", pipeline(LEADER_AND_GRANDCHILD));
    let mut spur = spawn_spur(&p, &["run", "p.yaml"]);
    let leader = pid_in(&p, "leader.pid");
    let grandchild = pid_in(&p, "bg.pid");
    signal(spur.id(), "KILL");
    spur.wait().unwrap();
    assert!(
        eventually(|| !process_is_running(&leader) && !process_is_running(&grandchild)),
        "the action's group outlived spur: leader {leader} {}, grandchild {grandchild} {}",
        process_is_running(&leader),
        process_is_running(&grandchild)
    );
    // The group was on record before the action was waited for.
    let records = p.newest_trace();
    let recorded = events(&records, "action-process");
    assert_eq!(recorded.len(), 1, "{records:?}");
    assert_eq!(recorded[0]["pgid"].to_string(), leader);
    assert!(recorded[0]["startTime"].is_u64(), "{records:?}");
    assert_eq!(recorded[0]["spurPid"], spur.id(), "{records:?}");
}

#[test]
fn continue_rerun_ambiguous_after_kill_9_kills_the_old_group_before_it_reruns() {
    // The second run of the step records whether the first one's grandchild still runs.
    let step = "if [ -f bg.pid ]; then s=$(cut -d\" \" -f3 /proc/$(cat bg.pid)/stat 2>/dev/null); case $s in \"\"|Z|X) echo dead;; *) echo alive;; esac > seen.txt; exit 0; fi; sleep 1000 & echo $! > bg.tmp; mv bg.tmp bg.pid; wait";
    let p = Spur::new().file("p.yaml", pipeline(step));
    let mut spur = spawn_spur(&p, &["run", "p.yaml"]);
    let grandchild = pid_in(&p, "bg.pid");
    // Without its keeper (killed first), a killed spur leaves the group running (its
    // leader dies with spur, PR_SET_PDEATHSIG; the grandchild does not): only the resume
    // can stop it now.
    let keeper = keeper_of(spur.id()).expect("spur runs a keeper while a child runs");
    let status = Command::new("kill")
        .args(["-KILL", &keeper])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(eventually(|| !process_is_running(&keeper)));
    signal(spur.id(), "KILL");
    spur.wait().unwrap();
    assert!(
        process_is_running(&grandchild),
        "the old group must still run for this test to mean anything"
    );

    let run_id = p.only_run_id();
    let out = p
        .args(["continue", &run_id, "--rerun-ambiguous"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b", "{out}");
    assert_eq!(
        p.read("seen.txt"),
        "dead\n",
        "the action ran beside its old copy"
    );
    assert!(
        !process_is_running(&grandchild),
        "old grandchild {grandchild} survived"
    );
}

#[test]
fn a_recorded_group_whose_leader_is_another_process_now_is_left_alone() {
    // The journal names a group whose pid is now another process (this test's own child,
    // started after the record): its start time differs, so the resume must not kill it.
    let p = Spur::new().file("p.yaml", pipeline(LEADER_AND_GRANDCHILD));
    let mut spur = spawn_spur(&p, &["run", "p.yaml"]);
    let _ = pid_in(&p, "leader.pid");
    signal(spur.id(), "KILL");
    spur.wait().unwrap();
    let run_id = p.only_run_id();
    let journal = p.join(&format!(".spur/runs/{run_id}/journal.jsonl"));
    let mut bystander = Command::new("sleep").arg("1000").spawn().unwrap();
    // Only the pgid is rewritten, so the seal breaks: a forged record is refused, and
    // refused before anything is killed.
    let text = std::fs::read_to_string(&journal).unwrap();
    let forged: String = text
        .lines()
        .map(|line| {
            if line.contains("\"action-process\"") {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let pgid = v["pgid"].to_string();
                line.replace(
                    &format!("\"pgid\":{pgid}"),
                    &format!("\"pgid\":{}", bystander.id()),
                )
            } else {
                line.to_owned()
            }
        })
        .map(|l| l + "\n")
        .collect();
    std::fs::write(&journal, forged).unwrap();
    p.args(["continue", &run_id, "--rerun-ambiguous"])
        .run()
        .code(4);
    assert_eq!(
        bystander.try_wait().unwrap(),
        None,
        "a bystander was killed"
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

fn interrupted_by(signal_name: &str, code: i32) {
    let p = Spur::new().file("p.yaml", pipeline(LEADER_AND_GRANDCHILD));
    let spur = spawn_spur(&p, &["run", "p.yaml"]);
    let leader = pid_in(&p, "leader.pid");
    let grandchild = pid_in(&p, "bg.pid");
    signal(spur.id(), signal_name);
    let out = spur.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    let run_id = p.only_run_id();
    let records = p.trace(&run_id);
    assert_eq!(
        records.last().unwrap()["event"],
        "interrupted",
        "{records:?}"
    );
    assert!(!process_is_running(&leader), "leader {leader} survived");
    assert!(
        eventually(|| !process_is_running(&grandchild)),
        "grandchild {grandchild} survived"
    );
    assert!(
        stderr.contains(&format!("spur continue {run_id} --rerun-ambiguous")),
        "{stderr}"
    );
    insta::with_settings!({filters => vec![(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "[RUN]")]}, {
        insta::assert_snapshot!(format!("interrupted_by_{signal_name}"), stderr);
    });
    // What it says works: the command resumes the run to its end.
    p.file("release", "");
    let out = p
        .args(["continue", &run_id, "--rerun-ambiguous"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["state"], "b", "{out}");
}

#[test]
fn sighup_kills_the_groups_journals_interrupted_and_prints_the_resume_command() {
    interrupted_by("HUP", 129);
}

#[test]
fn sigterm_kills_the_groups_journals_interrupted_and_prints_the_resume_command() {
    interrupted_by("TERM", 143);
}

#[test]
fn sigint_kills_the_groups_journals_interrupted_and_prints_the_resume_command() {
    interrupted_by("INT", 130);
}
