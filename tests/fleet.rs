//! Runs on a Restate server (book: *Running a fleet*): the same output as a local run,
//! a worker killed mid-action (the run ends on the other worker, no finished action runs
//! again, the interrupted one is held as ambiguous), the server killed while a run is
//! paused, and twenty runs over two workers. The server is provisioned by
//! `common::restate` (the tests fail, never skip, when it cannot be had).

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::restate::{shared, Fleet, Server};
use crate::common::{bin, eventually, git_out, isolate, unwrapped, Spur};

/// A bound on each spur command here, so a broken engine fails the test, never hangs it.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// `spur continue RUN --json` in `p`, on `server`'s engine.
fn fleet_continue(p: &Spur, server: &Server, run_id: &str) -> Spur {
    p.args([
        "continue",
        run_id,
        "--json",
        "--engine",
        "restate",
        "--ingress",
    ])
    .arg(server.ingress())
}

/// `spur run pipeline.yaml --json` in `p`, sent to `server`'s engine.
fn fleet_run(p: &Spur, server: &Server) -> Spur {
    p.args([
        "run",
        "pipeline.yaml",
        "--json",
        "--engine",
        "restate",
        "--ingress",
    ])
    .arg(server.ingress())
}

/// `spur ARGS` started in `p`'s project, not waited for (its output piped).
fn spawn(p: &Spur, args: &[&str]) -> Child {
    let mut cmd = Command::new(bin());
    cmd.current_dir(p.path())
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    isolate(&mut cmd, p.home());
    cmd.spawn().expect("start spur")
}

/// Three states a → b → c, named `name`: a appends `a` to steps.txt, b runs `b_command`.
fn two_steps(name: &str, b_command: &str) -> String {
    format!(
        r#"
name: {name}
initialState: a
terminalStates: [c]
states:
  - id: a
    onEnter:
      - {{kind: shell, options: {{command: 'echo a >> steps.txt'}}}}
  - id: b
    onEnter:
      - {{kind: shell, options: {{command: '{b_command}'}}}}
  - {{id: c}}
transitions: [{{from: a, to: b}}, {{from: b, to: c}}]
"#
    )
}

/// [`two_steps`] whose b appends `b`.
fn plain_two_steps() -> String {
    two_steps("two-steps", "echo b >> steps.txt")
}

/// `text` with run ids and step durations replaced (they differ between any two runs).
fn normalised(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let mut words: Vec<String> = Vec::new();
            for word in line.split(' ') {
                let bare = word.trim_end_matches([')', ':', '\n']);
                let is_run_id = bare.len() == 23 && bare.get(8..9) == Some("T");
                let is_duration = bare.starts_with('(') && bare.ends_with('s');
                words.push(if is_run_id {
                    word.replace(bare, "[RUN]")
                } else if is_duration {
                    word.replace(bare, "([TIME]s")
                } else {
                    word.to_owned()
                });
            }
            words.join(" ")
        })
        .collect()
}

#[test]
fn a_run_on_restate_prints_what_a_local_run_prints_and_does_each_step_once() {
    let (server, _turn) = shared();
    let p = Spur::new().file("pipeline.yaml", plain_two_steps());
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let local = p
        .args(["run", "pipeline.yaml"])
        .within(LIMIT)
        .run()
        .success();
    assert_eq!(p.read("steps.txt"), "a\nb\n");
    let remote = p
        .args(["run", "pipeline.yaml", "--engine", "restate", "--ingress"])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success();
    assert_eq!(
        p.read("steps.txt"),
        "a\nb\na\nb\n",
        "each step ran once more"
    );
    assert_eq!(normalised(remote.stdout()), normalised(local.stdout()));
    assert_eq!(normalised(remote.stderr()), normalised(local.stderr()));
    assert!(
        remote.stdout().contains("completed at c"),
        "{}",
        remote.stdout()
    );
    let json = fleet_run(&p, server)
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    assert_eq!(json["outcome"], "completed");
    assert_eq!(json["iterations"], 2);
}

#[test]
fn engine_restate_in_the_config_sends_runs_there_and_detach_returns_the_run_id() {
    let (server, _turn) = shared();
    let p = Spur::new().file("pipeline.yaml", plain_two_steps()).file(
        ".spur/config.yaml",
        format!(
            "engine: {{kind: restate, ingress: '{}', admin: '{}'}}\n",
            server.ingress(),
            server.admin()
        ),
    );
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let detached = p.args(["run", "pipeline.yaml", "--detach"]).run().success();
    let run_id = detached.stdout().trim().to_owned();
    assert_eq!(run_id.len(), 23, "a run id: {run_id:?}");
    assert!(
        eventually(|| p.exists("steps.txt") && p.read("steps.txt") == "a\nb\n"),
        "the detached run did not run its steps"
    );
    // The config's engine; no local journal is written for it.
    assert!(!p.exists(&format!(".spur/runs/{run_id}/journal.jsonl")));
    // `--engine local` overrides the config.
    p.args(["run", "pipeline.yaml", "--engine", "local"])
        .run()
        .success();
    assert_eq!(p.read("steps.txt"), "a\nb\na\nb\n");
}

#[test]
fn a_worker_killed_mid_action_leaves_the_run_to_the_other_and_the_action_ambiguous() {
    let (server, _turn) = shared();
    // b's action writes who runs it (worker, itself, its child), then waits with its
    // child for a file that never comes.
    let p = Spur::new().file(
        "pipeline.yaml",
        two_steps("crash", r#"(while [ ! -f never ]; do sleep 0.05; done) & echo "$PPID $$ $!" > b.pid; echo b >> steps.txt; wait"#),
    );
    let fleet = Fleet::start(server, p.path(), p.home(), 2);
    let ingress = server.ingress();
    let waiting = spawn(
        &p,
        &[
            "run",
            "pipeline.yaml",
            "--engine",
            "restate",
            "--ingress",
            &ingress,
        ],
    );
    assert!(
        eventually(|| p.exists("b.pid") && p.read("b.pid").ends_with('\n')),
        "b's action did not start"
    );
    let pids = p.read("b.pid");
    let mut pids = pids.split_whitespace();
    let (Some(worker), Some(shell), Some(child)) = (pids.next(), pids.next(), pids.next()) else {
        panic!("b.pid holds the worker's, the action's and its child's pids")
    };
    assert!(
        fleet.pids().iter().any(|w| w.to_string() == worker),
        "b's action runs under a worker of the fleet"
    );
    std::process::Command::new("kill")
        .args(["-9", worker])
        .status()
        .unwrap();
    // The action's process group dies with its worker, as a local run's does with spur.
    // (the shell alone could die of its parent-death signal; its child only with the group)
    for pid in [shell, child] {
        assert!(
            eventually(|| !crate::common::process_is_running(pid)),
            "the action's process {pid} outlived its killed worker"
        );
    }
    let out = waiting.wait_with_output().expect("the waiting run");
    let (code, stdout, stderr) = (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(code, Some(4), "held for a decision\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("spur::run::ambiguous-action"),
        "the interrupted action is ambiguous: {stderr}"
    );
    assert!(stderr.contains("shell"), "{stderr}");
    // The finished action ran once; the interrupted one was not run again.
    assert_eq!(p.read("steps.txt"), "a\nb\n");
}

#[test]
fn a_server_killed_while_a_run_is_paused_comes_back_and_the_run_goes_on() {
    let mut server = Server::start();
    let p = Spur::new().file("pipeline.yaml", APPROVAL);
    let _fleet = Fleet::start(&server, p.path(), p.home(), 1);
    let paused = p
        .args(["run", "pipeline.yaml", "--engine", "restate", "--ingress"])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .code(3);
    assert!(paused.stdout().contains("paused"), "{}", paused.stdout());
    let run_id = paused
        .stdout()
        .split_whitespace()
        .find(|w| w.len() == 23 && w.get(8..9) == Some("T"))
        .expect("the paused run's id")
        .to_owned();
    assert_eq!(p.read("steps.txt"), "implement\n");
    server.kill9();
    server.restart();
    let done = p
        .args([
            "continue",
            &run_id,
            "--answer",
            "yes",
            "--engine",
            "restate",
            "--ingress",
        ])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success();
    assert!(
        done.stdout().contains("completed at done"),
        "{}",
        done.stdout()
    );
    assert_eq!(
        p.read("steps.txt"),
        "implement\nship\n",
        "implement did not run again"
    );
}

#[test]
fn twenty_runs_over_two_workers_all_reach_a_terminal() {
    let (server, _turn) = shared();
    let p = Spur::new().file("pipeline.yaml", plain_two_steps());
    let _fleet = Fleet::start(server, p.path(), p.home(), 2);
    let ingress = server.ingress();
    let args = [
        "run",
        "pipeline.yaml",
        "--json",
        "--engine",
        "restate",
        "--ingress",
        &ingress,
    ];
    let runs: Vec<Child> = (0..20).map(|_| spawn(&p, &args)).collect();
    for run in runs {
        let out = run.wait_with_output().expect("a run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let outcome: serde_json::Value = serde_json::from_str(&text).expect("the outcome");
        assert_eq!(outcome["outcome"], "completed", "{outcome}");
    }
    assert_eq!(
        p.read("steps.txt").lines().count(),
        40,
        "every step ran once"
    );
}

#[test]
fn a_run_for_an_engine_that_is_not_there_cannot_start() {
    let p = Spur::new().file("pipeline.yaml", plain_two_steps());
    let port = crate::common::restate::free_port();
    let out = p
        .args(["run", "pipeline.yaml", "--engine", "restate", "--ingress"])
        .arg(format!("http://127.0.0.1:{port}"))
        .run()
        .code(4);
    assert!(
        out.stderr().contains("spur::run::engine"),
        "{}",
        out.stderr()
    );
    assert!(!p.exists("steps.txt"), "nothing ran");
    let out = p
        .args(["run", "pipeline.yaml", "--engine", "restate"])
        .run()
        .code(2);
    assert!(
        out.stderr().contains("spur::usage::engine"),
        "{}",
        out.stderr()
    );
}

#[test]
fn runs_and_trace_read_a_run_on_the_engine_while_it_runs_and_after() {
    let (server, _turn) = shared();
    // b waits for a file the test writes once it has seen the run in flight.
    let p = Spur::new().file(
        "pipeline.yaml",
        two_steps(
            "traced",
            "while [ ! -f go ]; do sleep 0.05; done; echo b >> steps.txt",
        ),
    );
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let ingress = server.ingress();
    let engine = ["--engine", "restate", "--ingress", ingress.as_str()];
    let detached = p
        .args(["run", "pipeline.yaml", "--detach"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success();
    let run_id = detached.stdout().trim().to_owned();
    // The event names of the engine's trace of the run (none while it knows no record).
    let trace = |p: &Spur| -> Vec<String> {
        let out = p
            .args(["trace", &run_id, "--json"])
            .args(engine)
            .within(LIMIT)
            .run();
        if out.exit_code() != Some(0) {
            assert!(out.stderr().contains("no run"), "{}", out.stderr());
            return Vec::new();
        }
        out.stdout_json()
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| r["event"].as_str().unwrap_or("?").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let listed = |p: &Spur| -> Option<serde_json::Value> {
        let json = p
            .args(["runs", "--json"])
            .args(engine)
            .within(LIMIT)
            .run()
            .success()
            .stdout_json();
        json.as_array()
            .and_then(|a| a.iter().find(|r| r["runId"] == run_id.as_str()).cloned())
    };
    // In flight: b's action started and has not ended; the run is listed as running.
    assert!(
        eventually(
            || trace(&p).last().map(String::as_str) == Some("action-started")
                && p.exists("steps.txt")
        ),
        "the engine's trace did not show b's action in flight: {:?}",
        trace(&p)
    );
    let running = listed(&p).expect("spur runs lists the run in flight");
    assert_eq!(running["outcome"], "running", "{running}");
    assert_eq!(running["pipeline"], "traced", "{running}");
    p.file("go", "");
    assert!(
        eventually(|| listed(&p).is_some_and(|r| r["outcome"] == "completed")),
        "the finished run is not listed completed: {:?}",
        listed(&p)
    );
    // The engine's trace holds what a local run's journal holds, record for record.
    let remote = trace(&p);
    let local = p
        .args(["run", "pipeline.yaml", "--json"])
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    let local_id = local["runId"]
        .as_str()
        .expect("the local run's id")
        .to_owned();
    let local_trace: Vec<String> = p
        .args(["trace", &local_id, "--json"])
        .run()
        .success()
        .stdout_json()
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["event"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default();
    // (but `action-process`: a worker keeps its actions' process groups to itself)
    let local_trace: Vec<String> = local_trace
        .into_iter()
        .filter(|e| e != "action-process")
        .collect();
    assert_eq!(remote, local_trace);
    assert_eq!(remote.last().map(String::as_str), Some("run-finished"));
    // Human output: one line a record.
    let human = p
        .args(["trace", &run_id])
        .args(engine)
        .within(LIMIT)
        .run()
        .success();
    assert_eq!(
        human.stdout().lines().count(),
        remote.len(),
        "{}",
        human.stdout()
    );
    // `latest` and a unique prefix name it too (it is the run sent last).
    for reference in ["latest", &run_id[..22]] {
        let named = p
            .args(["trace", reference])
            .args(engine)
            .within(LIMIT)
            .run()
            .success();
        assert_eq!(named.stdout(), human.stdout(), "spur trace {reference}");
    }
    // --follow of a finished run prints its records and ends.
    let followed = p
        .args(["trace", &run_id, "--json", "--follow"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success();
    assert_eq!(followed.stdout().lines().count(), remote.len());
    // A run the engine does not know is refused, not shown empty.
    let out = p
        .args(["trace", "20260101T000000Z-000000"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(2);
    assert!(out.stderr().contains("no run"), "{}", out.stderr());
}

#[test]
fn a_second_run_of_a_task_on_the_fleet_is_refused_as_locally_and_the_lock_is_given_back() {
    let (server, _turn) = shared();
    // Task 4242's run holds its lock while its action (which writes its worker's pid)
    // waits for `go`.
    let p = Spur::new().file(
        "pipeline.yaml",
        r#"
name: locked
initialState: a
vars: {wbs: "4242"}
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: 'echo $PPID >> steps.txt; while [ ! -f go ]; do sleep 0.05; done'}}
  - {id: b}
transitions: [{from: a, to: b}]
"#,
    );
    // Two workers at two addresses: the server sends a new run to the one registered
    // last, and a run stays with the worker it started on.
    let first_worker = Fleet::start(server, p.path(), p.home(), 1);
    let ingress = server.ingress();
    let engine = ["--engine", "restate", "--ingress", ingress.as_str()];
    let first = p
        .args(["run", "pipeline.yaml", "--detach"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success();
    let first_id = first.stdout().trim().to_owned();
    assert!(
        eventually(|| p.exists("steps.txt")),
        "the first run did not start"
    );
    let second_worker = Fleet::start(server, p.path(), p.home(), 1);
    let second = p
        .args(["run", "pipeline.yaml"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(4);
    assert!(
        second.stderr().contains("spur::run::locked"),
        "{}",
        second.stderr()
    );
    assert!(
        second
            .stderr()
            .contains(&format!("task 4242 is already being run by run {first_id}")),
        "{}",
        second.stderr()
    );
    let first_pid = first_worker.pids()[0].to_string();
    assert_eq!(
        p.read("steps.txt"),
        format!("{first_pid}\n"),
        "the first run is on the first worker; the second ran nothing"
    );
    p.file("go", "");
    assert!(
        eventually(|| {
            let out = p
                .args(["runs", "--json"])
                .args(engine)
                .within(LIMIT)
                .run()
                .success()
                .stdout_json();
            out.as_array().is_some_and(|a| {
                a.iter()
                    .any(|r| r["runId"] == first_id.as_str() && r["outcome"] != "running")
            })
        }),
        "the first run did not end"
    );
    // The lock was given back with the run's end: the next run of the task goes on.
    let third = p
        .args([
            "run",
            "pipeline.yaml",
            "--json",
            "--force-done",
            "--reason",
            "test",
        ])
        .args(engine)
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    assert_eq!(third["state"], "b", "{third}");
    // It ran on the second worker, as the refused one did.
    let second_pid = second_worker.pids()[0].to_string();
    assert_eq!(p.read("steps.txt"), format!("{first_pid}\n{second_pid}\n"));
}

/// `POST url` with a JSON `body` (plain HTTP/1.1 on loopback); the response's status code.
fn post_status(url: &str, body: &str) -> u16 {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut stream = std::net::TcpStream::connect(host).expect("connect to the ingress");
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut head = String::new();
    let _ = stream.read_to_string(&mut head);
    head.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

const APPROVAL: &str = r#"
name: approval
initialState: implement
terminalStates: [done]
states:
  - id: implement
    onEnter:
      - {kind: shell, options: {command: 'echo implement >> steps.txt'}}
  - id: approve
    onEnter:
      - {kind: hitl.confirm, options: {prompt: 'ship it?'}}
  - id: ship
    onEnter:
      - {kind: shell, options: {command: 'echo ship >> steps.txt'}}
  - {id: done}
transitions:
  - {from: implement, to: approve}
  - {from: approve, to: ship}
  - {from: ship, to: done}
"#;

#[test]
fn a_paused_fleet_run_prints_the_local_pause_and_an_invalid_answer_is_refused() {
    let (server, _turn) = shared();
    let p = Spur::new().file("pipeline.yaml", APPROVAL);
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let ingress = server.ingress();
    let engine = ["--engine", "restate", "--ingress", ingress.as_str()];
    let local = p.args(["run", "pipeline.yaml"]).within(LIMIT).run().code(3);
    let remote = p
        .args(["run", "pipeline.yaml"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(3);
    // The state, the question and its choices, and how to go on: as a local pause.
    assert_eq!(normalised(remote.stdout()), normalised(local.stdout()));
    assert_eq!(normalised(remote.stderr()), normalised(local.stderr()));
    assert!(
        remote.stdout().contains("ship it?") && remote.stdout().contains("<yes|no|cancel>"),
        "{}",
        remote.stdout()
    );
    let run_id = remote
        .stdout()
        .split_whitespace()
        .find(|w| w.len() == 23 && w.get(8..9) == Some("T"))
        .expect("the paused run's id")
        .to_owned();
    // An answer the question does not take is refused, as locally, and the run still waits.
    let refused = p
        .args(["continue", &run_id, "--answer", "maybe"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(2);
    assert!(
        refused.stderr().contains("spur::run::answer-invalid"),
        "{}",
        refused.stderr()
    );
    // The server refuses it too, whoever calls (the run would end on it otherwise).
    let status = post_status(&format!("{ingress}/SpurRun/{run_id}/answer"), "\"maybe\"");
    assert!(
        (400..500).contains(&status),
        "the ingress answered {status}"
    );
    let done = p
        .args(["continue", &run_id, "--answer", "yes"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success();
    assert!(
        done.stdout().contains("completed at done"),
        "{}",
        done.stdout()
    );
    assert_eq!(p.read("steps.txt"), "implement\nimplement\nship\n");
}

#[test]
fn engine_in_the_config_is_read_strictly_with_every_error_of_the_file() {
    let p = Spur::new().file("pipeline.yaml", plain_two_steps()).file(
        ".spur/config.yaml",
        "http: {allo: []}\nengine: {kind: restate, ingres: 'http://127.0.0.1:1'}\n",
    );
    let out = p
        .args(["run", "pipeline.yaml", "--engine", "restate"])
        .run()
        .code(2);
    let err = out.stderr();
    assert!(err.contains("spur::usage::engine"), "{err}");
    assert!(err.contains("unknown key `ingres` in `engine`"), "{err}");
    assert!(err.contains("config.yaml:2:25"), "the key's place: {err}");
    assert!(err.contains("has no `ingress`"), "{err}");
    // The other sections' errors in the same report.
    assert!(err.contains("allo"), "{err}");
    assert!(!p.exists("steps.txt"), "nothing ran");
    // A kind that is no engine.
    let p = p.file(".spur/config.yaml", "engine: {kind: temporal}\n");
    let out = p.args(["run", "pipeline.yaml"]).run().code(2);
    assert!(
        out.stderr().contains("`temporal` is not an engine"),
        "{}",
        out.stderr()
    );
}

/// Task 0804 of the answer files' example project (nothing configured: done needs a PASS
/// verdict written through spur), with `pipeline` as pipeline.yaml.
fn task_project(pipeline: &str) -> Spur {
    Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
        .fixture("examples/answers/pass.md", "answers/pass.md")
        .file("pipeline.yaml", pipeline)
}

/// A step's `spur task verdict`: answered by its run (through the run's socket).
const VERDICT_STEP: &str = r#""$SPUR_BIN" task verdict 0804 --from-answer answers/pass.md > verdict.out 2>&1; echo $? > verdict.code"#;

/// Task 0804's run: `verify` runs `verify_command`, then `done` (certified by the gate).
fn certify_pipeline(verify_command: &str) -> String {
    format!(
        r#"
name: certify
initialState: verify
terminalStates: [done]
vars: {{wbs: "0804"}}
states:
  - id: verify
    onEnter:
      - {{kind: shell, options: {{command: '{verify_command}'}}}}
  - {{id: done}}
transitions: [{{from: verify, to: done}}]
"#
    )
}

/// The parsed ledger records of task `wbs` on the server.
fn server_ledger(server: &Server, wbs: &str) -> Vec<serde_json::Value> {
    spur_restate::client::task_records(&server.ingress(), wbs)
        .expect("read the task's records on the server")
        .ledger
        .iter()
        .map(|l| serde_json::from_str(l).expect("a ledger record"))
        .collect()
}

/// Whether `records` end in a sealed `done` the gate allowed.
fn ends_certified(records: &[serde_json::Value]) -> bool {
    records.last().is_some_and(|r| {
        r["kind"] == "status"
            && r["to"] == "done"
            && r["gate"]["decision"] == "allow"
            && r["mac"].is_string()
    })
}

#[test]
fn a_fleet_run_is_certified_from_the_servers_records_which_no_client_can_write() {
    // A server of its own: the Task object of 0804 is the test's alone.
    let server = &Server::start();
    let p = task_project(&certify_pipeline(VERDICT_STEP));
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let out = fleet_run(&p, server).env("USER", "ada").within(LIMIT).run();
    assert_eq!(
        p.read("verdict.code"),
        "0\n",
        "the step's spur call: {}",
        p.read("verdict.out")
    );
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", out.stderr());
    // The certification is on the server: the verdict spur wrote, then the gate's done.
    let records = server_ledger(server, "0804");
    let kinds: Vec<&str> = records.iter().filter_map(|r| r["kind"].as_str()).collect();
    assert!(kinds.contains(&"verdict-written"), "{records:?}");
    assert!(ends_certified(&records), "{records:?}");
    let artifact = spur_restate::client::task_records(&server.ingress(), "0804")
        .unwrap()
        .artifact
        .expect("the server keeps the verdict artifact");
    assert!(artifact.contains("\"PASS\""), "{artifact}");
    // The worker kept none of it: its local protected state has no ledger of the task,
    // its checkout no view of the server's.
    assert!(
        !p.protected_path("ledger/tasks/0804.jsonl").exists(),
        "the worker wrote the task's ledger locally"
    );
    assert!(!p.exists(".spur/tasks/0804.json"), "the worker kept a view");
    // `spur task show` and `spur audit verify` read it there with --engine restate.
    let engine = ["--engine", "restate", "--ingress"];
    let shown = p
        .args(["task", "show", "0804", "--json"])
        .args(engine)
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    assert_eq!(shown["status"], "done", "{shown}");
    assert_eq!(shown["certification"], "certified", "{shown}");
    assert_eq!(shown["ledger"]["records"], records.len(), "{shown}");
    let local = p
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_ne!(local["certification"], "certified", "{local}");
    let audit = p
        .args(["audit", "verify", "--json"])
        .args(engine)
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    assert_eq!(audit["intact"], true, "{audit}");
    // Named as the engine's records, not the private copy they were read from.
    assert_eq!(
        audit["path"],
        format!("engine {}: audit.jsonl", server.ingress()),
        "{audit}"
    );
    let tasks = audit["tasks"].as_array().expect("the tasks checked");
    assert!(
        tasks
            .iter()
            .any(|t| t["wbs"] == "0804" && t["certification"] == "certified"),
        "{audit}"
    );
    // No client of the ingress can write the records: the writing handlers are private.
    let forged = serde_json::json!({"after": records.len(), "lines": [], "artifact": "{}"});
    for handler in ["certify", "record"] {
        let status = post_status(
            &format!("{}/Task/0804/{handler}", server.ingress()),
            &forged.to_string(),
        );
        assert!(
            (400..500).contains(&status),
            "POST Task/0804/{handler} from the ingress answered {status}"
        );
    }
    let status = post_status(
        &format!("{}/Audit/all/append", server.ingress()),
        r#"{"after":0,"lines":["forged"]}"#,
    );
    assert!(
        (400..500).contains(&status),
        "Audit/all/append answered {status}"
    );
    assert_eq!(
        server_ledger(server, "0804"),
        records,
        "nothing was written"
    );
    assert!(spur_restate::client::audit_lines(&server.ingress())
        .unwrap()
        .iter()
        .all(|l| l != "forged"));
}

/// Task 0804's run: verify (a step's spur call) → hold (a pause) → ship (writes its
/// worker's pid) → done.
fn failover_pipeline() -> String {
    format!(
        r#"
name: failover
initialState: verify
terminalStates: [done]
vars: {{wbs: "0804"}}
states:
  - id: verify
    onEnter:
      - {{kind: shell, options: {{command: '{VERDICT_STEP}'}}}}
  - {{id: hold, pause: true}}
  - id: ship
    onEnter:
      - {{kind: shell, options: {{command: 'echo $PPID > shipped.txt'}}}}
  - {{id: done}}
transitions: [{{from: verify, to: hold}}, {{from: hold, to: ship}}, {{from: ship, to: done}}]
"#
    )
}

/// Start [`failover_pipeline`] on a one-worker fleet in `first` until it pauses after its
/// verdict reached the server, then kill -9 that worker: the fleet (no live worker), the
/// run id, and the server's records then.
fn paused_then_worker_killed(
    server: &Server,
    first: &Spur,
) -> (Fleet, String, Vec<serde_json::Value>) {
    let fleet = Fleet::start(server, first.path(), first.home(), 1);
    let paused = first
        .args(["run", "pipeline.yaml", "--engine", "restate", "--ingress"])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .code(3);
    let run_id = paused
        .stdout()
        .split_whitespace()
        .find(|w| w.len() == 23 && w.get(8..9) == Some("T"))
        .expect("the paused run's id")
        .to_owned();
    assert_eq!(
        first.read("verdict.code"),
        "0\n",
        "{}",
        first.read("verdict.out")
    );
    let verified = server_ledger(server, "0804");
    assert!(
        verified.iter().any(|r| r["kind"] == "verdict-written"),
        "the verdict is on the server before the worker dies: {verified:?}"
    );
    assert!(!ends_certified(&verified));
    let dead = fleet.pids()[0].to_string();
    Command::new("kill").args(["-9", &dead]).status().unwrap();
    assert!(eventually(|| !crate::common::process_is_running(&dead)));
    (fleet, run_id, verified)
}

#[test]
fn a_run_whose_worker_died_after_verify_is_certified_by_another_worker_with_no_local_state() {
    let server = &Server::start();
    let first = task_project(&failover_pipeline());
    // The second worker: another checkout of the project, another home, nothing of the
    // run's in its local state; the fleet's key (the same on every member).
    let second = task_project(&failover_pipeline());
    let (mut fleet, run_id, verified) = paused_then_worker_killed(server, &first);
    let key = first.key_path();
    fleet.add_worker(
        second.path(),
        second.home(),
        &[("SPUR_KEY_FILE", key.to_str().unwrap())],
    );
    let done = fleet_continue(&second, server, &run_id).within(LIMIT).run();
    let json = done.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", done.stderr());
    // The rest ran on the second worker, in its checkout.
    let second_pid = fleet.pids()[1].to_string();
    assert_eq!(second.read("shipped.txt"), format!("{second_pid}\n"));
    assert!(!first.exists("shipped.txt"));
    // Certified from the server's records: the second worker never had a ledger of the
    // task, and the first worker's local state has none either.
    let records = server_ledger(server, "0804");
    assert!(ends_certified(&records), "{records:?}");
    assert_eq!(records.len(), verified.len() + 1, "{records:?}");
    assert_eq!(records.last().unwrap()["run"], run_id.as_str());
    for p in [&first, &second] {
        assert!(!p.protected_path("ledger/tasks/0804.jsonl").exists());
    }
}

#[test]
fn a_worker_with_another_key_cannot_certify_the_fleets_records() {
    let server = &Server::start();
    let first = task_project(&failover_pipeline());
    let second = task_project(&failover_pipeline());
    // The second member has a key of its own, not the fleet's.
    second.args(["key", "init"]).run().success();
    assert_ne!(
        std::fs::read(first.key_path()).ok(),
        std::fs::read(second.key_path()).ok()
    );
    let (mut fleet, run_id, verified) = paused_then_worker_killed(server, &first);
    fleet.add_worker(second.path(), second.home(), &[]);
    let out = fleet_continue(&second, server, &run_id).within(LIMIT).run();
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "failed", "{json}\n{}", out.stderr());
    let said = format!("{json}");
    assert!(said.contains("\"deny\""), "{said}");
    assert!(
        said.contains("cannot be verified from seq 0: it was sealed with key"),
        "{said}"
    );
    assert_eq!(
        server_ledger(server, "0804"),
        verified,
        "nothing was certified"
    );
}

#[test]
fn a_verdict_a_step_forges_in_its_workers_local_state_is_not_evidence_on_the_fleet() {
    // A server of its own: the Task object of 0804 is the test's alone.
    let server = &Server::start();
    // The step writes spur's own PASS straight into the worker's local state, bypassing its
    // run (no socket): a verdict artifact and a ledger record sealed with the worker's key.
    let forge = r#"env -u SPUR_RUN_SOCKET -u SPUR_RUN_ID "$SPUR_BIN" task verdict 0804 --from-answer answers/pass.md > forged.out 2>&1; echo $? > forged.code"#;
    let pipeline = certify_pipeline(forge);
    // The same run on this machine: the forgery is as good as a real verdict there.
    let local = task_project(&pipeline);
    let out = local
        .args(["run", "pipeline.yaml", "--json"])
        .env("SPUR_SANDBOX", "off")
        .within(LIMIT)
        .run();
    assert_eq!(
        local.read("forged.code"),
        "0\n",
        "{}",
        local.read("forged.out")
    );
    assert_eq!(out.stdout_json()["outcome"], "done", "{}", out.stderr());

    let p = task_project(&pipeline);
    let _fleet = Fleet::start_with(server, p.path(), p.home(), 1, &[("SPUR_SANDBOX", "off")]);
    let out = fleet_run(&p, server).within(LIMIT).run();
    assert_eq!(p.read("forged.code"), "0\n", "{}", p.read("forged.out"));
    assert!(
        p.protected_path("ledger/tasks/0804.jsonl").exists(),
        "the step wrote the worker's local ledger"
    );
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "failed", "{json}\n{}", out.stderr());
    let said = format!("{json}");
    assert!(said.contains("\"deny\""), "{said}");
    assert!(said.contains("missing verify verdict artifact"), "{said}");
    // The server has no verdict of the task and no done.
    let records = server_ledger(server, "0804");
    assert!(
        records
            .iter()
            .all(|r| r["kind"] != "verdict-written" && r["to"] != "done"),
        "{records:?}"
    );
}

#[test]
fn a_forced_done_on_the_fleet_is_audited_in_the_servers_chain() {
    let server = &Server::start();
    let p = task_project(&certify_pipeline("true"));
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let engine = ["--engine", "restate", "--ingress"];
    let out = p
        .args([
            "run",
            "pipeline.yaml",
            "--json",
            "--force-done",
            "--reason",
            "hand-checked",
        ])
        .args(engine)
        .arg(server.ingress())
        .within(LIMIT)
        .run();
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", out.stderr());
    assert_eq!(json["forced"], true, "{json}");
    let listed = p
        .args(["audit", "list", "--json"])
        .args(engine)
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    let listed = listed.as_array().expect("the overrides");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["reason"], "hand-checked");
    assert_eq!(listed[0]["wbs"], "0804");
    // The worker's local audit log has none of it.
    assert!(!p.protected_path("audit.jsonl").exists());
    let records = server_ledger(server, "0804");
    assert!(ends_certified(&records), "{records:?}");
    assert_eq!(records.last().unwrap()["gate"]["reason"], "forced");
    p.args(["audit", "verify"])
        .args(engine)
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success();
}

#[test]
fn a_steps_done_on_the_fleet_is_refused_and_only_the_runs_gate_certifies() {
    let server = &Server::start();
    let steps = format!(
        r#"{VERDICT_STEP}; "$SPUR_BIN" task update 0804 done > update.out 2>&1; echo $? > update.code"#
    );
    let p = task_project(&certify_pipeline(&steps));
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let out = fleet_run(&p, server).within(LIMIT).run();
    assert_eq!(p.read("verdict.code"), "0\n", "{}", p.read("verdict.out"));
    assert_eq!(p.read("update.code"), "2\n", "{}", p.read("update.out"));
    let said = p.read("update.out");
    let flat = unwrapped(&said);
    assert!(
        flat.contains("a task becomes done only at its run's done gate"),
        "{said}"
    );
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", out.stderr());
    let records = server_ledger(server, "0804");
    let dones: Vec<_> = records.iter().filter(|r| r["to"] == "done").collect();
    assert_eq!(dones.len(), 1, "{records:?}");
    assert!(ends_certified(&records), "{records:?}");
}

#[test]
fn a_paused_fleet_run_keeps_its_tasks_lock_until_it_ends() {
    let server = &Server::start();
    let p = Spur::new().file(
        "pipeline.yaml",
        r#"
name: held
initialState: a
vars: {wbs: "4343"}
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: 'echo a >> steps.txt'}}
  - {id: wait, pause: true}
  - {id: b}
transitions: [{from: a, to: wait}, {from: wait, to: b}]
"#,
    );
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let ingress = server.ingress();
    // (Forced, so that b, a done terminal, needs no verdict.)
    let engine = [
        "--engine",
        "restate",
        "--ingress",
        ingress.as_str(),
        "--force-done",
        "--reason",
        "test",
    ];
    let paused = p
        .args(["run", "pipeline.yaml", "--json"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(3)
        .stdout_json();
    let run_id = paused["runId"]
        .as_str()
        .expect("the paused run's id")
        .to_owned();
    // Paused, it still holds the task: a second run is refused and runs nothing.
    let second = p
        .args(["run", "pipeline.yaml"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(4);
    assert!(
        second
            .stderr()
            .contains(&format!("task 4343 is already being run by run {run_id}")),
        "{}",
        second.stderr()
    );
    assert_eq!(p.read("steps.txt"), "a\n");
    p.args(["continue", &run_id])
        .args(&engine[..4])
        .within(LIMIT)
        .run()
        .success();
    // Ended, it gave the lock back.
    p.args(["run", "pipeline.yaml"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(3);
    assert_eq!(p.read("steps.txt"), "a\na\n");
}

#[test]
fn a_fleet_runs_verify_results_are_the_servers_and_a_red_gate_there_denies() {
    let server = &Server::start();
    // The README's demo (gate `quality` = ./check on hello.txt), task 0592 without a
    // lifecycle; the step runs the gates and derives the verdict, through its run (its
    // own output in .spur/, outside the tree the gates' results are of).
    let steps = r#"mkdir -p .spur/t; "$SPUR_BIN" verify --wbs 0592 > .spur/t/verify.out 2>&1; echo $? > .spur/t/verify.code; "$SPUR_BIN" task verdict 0592 --from-answer answer.md > .spur/t/verdict.out 2>&1; echo $? > .spur/t/verdict.code"#;
    let pipeline = certify_pipeline(steps).replace("0804", "0592");
    let p = Spur::new().fixture("examples/demo", ".");
    p.file("docs/tasks/0592_hello.md", "# 0592 Say hello\n\n## Requirements\n\n- R1: hello.txt holds the greeting `hello, world`.\n\n## Acceptance Criteria\n\n- [ ] AC-1: `./check` passes\n");
    p.file("answer.md", "Verdict: PASS\n\n## Requirements\n\n| Req | Status | Evidence |\n|-----|--------|----------|\n| R1 | MET | `hello.txt:1` |\n\n## Acceptance Criteria\n\n| AC | Status | Evidence Type | Evidence |\n|----|--------|---------------|----------|\n| AC-1 | MET | command | `./check` passes against `hello.txt:1` |\n");
    p.file("pipeline.yaml", pipeline);
    p.file("hello.txt", "hello, wrold\n");
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let run = || fleet_run(&p, server).within(LIMIT).run();
    // Red: the gate fails, the answer's verdict says PASS; the gate reads the red result
    // from the server and denies.
    let red = run();
    assert_eq!(
        p.read(".spur/t/verify.code"),
        "1\n",
        "{}",
        p.read(".spur/t/verify.out")
    );
    assert_eq!(
        p.read(".spur/t/verdict.code"),
        "0\n",
        "{}",
        p.read(".spur/t/verdict.out")
    );
    let said = format!("{}", red.stdout_json());
    assert!(said.contains("\"failed\""), "{said}");
    assert!(said.contains("gate-quality FAIL"), "{said}");
    let records = server_ledger(server, "0592");
    assert!(
        records.iter().any(|r| r["kind"] == "verified"),
        "{records:?}"
    );
    assert!(!ends_certified(&records));
    // Fixed: the next run's green result follows the red one on the server; certified.
    p.file("hello.txt", "hello, world\n");
    let green = run();
    assert_eq!(
        p.read(".spur/t/verify.code"),
        "0\n",
        "{}",
        p.read(".spur/t/verify.out")
    );
    let json = green.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", green.stderr());
    let after = server_ledger(server, "0592");
    assert_eq!(after.get(..records.len()), Some(records.as_slice()));
    assert!(ends_certified(&after), "{after:?}");
    assert!(!p.protected_path("ledger/tasks/0592.jsonl").exists());
}

/// Steps of a run in a worktree on the fleet: a appends `a` to work.txt and plants a
/// post-commit hook in the repository it works in (it must never run: spur's commits of
/// the tree run no hook); the run pauses; b appends `b` and writes its worker's pid.
const TREE_PIPELINE: &str = r#"
name: tree
initialState: a
terminalStates: [c]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: >-
            echo a >> work.txt;
            hook="$(git rev-parse --git-common-dir)/hooks/post-commit";
            printf '#!/bin/sh\ntouch "$HOOKED"\n' > "$hook"; chmod +x "$hook"
  - {id: hold, pause: true}
  - id: b
    onEnter:
      - {kind: shell, options: {command: 'echo b >> work.txt; echo $PPID > worker.txt'}}
  - {id: c}
transitions: [{from: a, to: hold}, {from: hold, to: b}, {from: b, to: c}]
"#;

/// A bare repository (the fleet's remote) and two checkouts of it holding
/// [`TREE_PIPELINE`], their `.spur/` ignored: the first made and pushed, the second cloned.
fn tree_checkouts() -> (tempfile::TempDir, Spur, Spur) {
    let origin = tempfile::tempdir().unwrap();
    git_out(origin.path(), &["init", "-q", "--bare", "-b", "main"]);
    let origin_url = origin.path().display().to_string();
    let first = Spur::new()
        .file("pipeline.yaml", TREE_PIPELINE)
        .file(".gitignore", ".spur/\n");
    first.git(&["init", "-q", "-b", "main"]);
    first.git(&["add", "-A"]);
    first.git(&["commit", "-q", "-m", "the project"]);
    first.git(&["remote", "add", "origin", &origin_url]);
    first.git(&["push", "-q", "origin", "main"]);
    let second = Spur::new();
    second.git(&["clone", "-q", &origin_url, "."]);
    (origin, first, second)
}

/// [`TREE_PIPELINE`] started in a worktree on a one-worker fleet in `first` (its workers'
/// environment with `envs`) until it pauses after a: the fleet, the run's id and branch,
/// and the commit a left, which is the branch's head on `origin`.
fn paused_in_worktree(
    server: &Server,
    origin: &Path,
    first: &Spur,
    envs: &[(&str, &str)],
) -> (Fleet, String, String, String) {
    let base = git_out(first.path(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let fleet = Fleet::start_with(server, first.path(), first.home(), 1, envs);
    let paused = first
        .args(["run", "pipeline.yaml", "--worktree", "--engine", "restate"])
        .args(["--ingress", &server.ingress()])
        .json()
        .within(LIMIT)
        .run()
        .code(3)
        .stdout_json();
    let run_id = paused["runId"].as_str().expect("the run's id").to_owned();
    let branch = format!("spur/{run_id}");
    // a ran in the first worker's worktree of the run, not in its checkout; its commit
    // is on the run's branch of the remote.
    assert_eq!(
        first.read(&format!(".spur/worktrees/{run_id}/work.txt")),
        "a\n"
    );
    assert!(!first.exists("work.txt"));
    let after_a = git_out(origin, &["rev-parse", &branch]).trim().to_owned();
    assert_ne!(after_a, base);
    assert_eq!(
        git_out(origin, &["show", &format!("{after_a}:work.txt")]),
        "a\n"
    );
    (fleet, run_id, branch, after_a)
}

/// A clone of `origin`'s `branch` in a temp dir, changed by `change` and pushed back
/// (`force`: over whatever the branch held).
fn rewrite_branch(origin: &Path, branch: &str, force: bool, change: impl Fn(&Path)) {
    let forger = tempfile::tempdir().unwrap();
    let url = origin.display().to_string();
    git_out(forger.path(), &["clone", "-q", "-b", branch, &url, "."]);
    change(forger.path());
    let target = format!("HEAD:{branch}");
    let push: &[&str] = match force {
        true => &["push", "-q", "--force", "origin", &target],
        false => &["push", "-q", "origin", &target],
    };
    git_out(forger.path(), push);
}

/// kill -9 of the fleet's first worker.
fn kill_first_worker(fleet: &Fleet) {
    let dead = fleet.pids()[0].to_string();
    Command::new("kill").args(["-9", &dead]).status().unwrap();
    assert!(eventually(|| !crate::common::process_is_running(&dead)));
}

#[test]
fn a_fleet_run_in_a_worktree_goes_on_from_its_journaled_commit_on_another_worker() {
    let server = &Server::start();
    let (origin, first, second) = tree_checkouts();
    // Where the hook would leave its mark (under /tmp: steps and spur's git may write it).
    let marks = tempfile::tempdir().unwrap();
    let hooked = marks.path().join("hooked");
    let hooked_env = [("HOOKED", hooked.to_str().unwrap())];
    let base = git_out(first.path(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let (mut fleet, run_id, branch, after_a) =
        paused_in_worktree(server, origin.path(), &first, &hooked_env);
    let first_tree = format!(".spur/worktrees/{run_id}");

    // While the run waits, someone with push rights rewrites the branch: a commit on top
    // that forges the work and adds a file. The run is the journal's, not the branch's.
    rewrite_branch(origin.path(), &branch, false, |dir| {
        std::fs::write(dir.join("work.txt"), "forged\n").unwrap();
        std::fs::write(dir.join("evil.txt"), "evil\n").unwrap();
        git_out(dir, &["add", "-A"]);
        git_out(dir, &["commit", "-q", "-m", "forged"]);
    });

    // The first worker dies; a worker in another checkout, with nothing of the run, goes on.
    kill_first_worker(&fleet);
    fleet.add_worker(second.path(), second.home(), &hooked_env);
    let done = fleet_continue(&second, server, &run_id).within(LIMIT).run();
    let json = done.stdout_json();
    assert_eq!(json["outcome"], "completed", "{json}\n{}", done.stderr());

    // b ran on the second worker, in its worktree brought to the journaled commit: a's
    // work is there, the forgery is not.
    let second_pid = fleet.pids()[1].to_string();
    assert_eq!(
        second.read(&format!("{first_tree}/worker.txt")),
        format!("{second_pid}\n")
    );
    assert_eq!(second.read(&format!("{first_tree}/work.txt")), "a\nb\n");
    assert!(!second.exists(&format!("{first_tree}/evil.txt")));
    assert!(
        !second.exists("work.txt"),
        "the second checkout itself is untouched"
    );

    // The reply names the tree: the branch, the remote, the base and the last commit,
    // which is the branch's head; its history is base → a → b, without the forgery.
    let tree = &json["worktree"];
    assert_eq!(tree["branch"], branch.as_str(), "{json}");
    assert_eq!(tree["remote"], "origin");
    assert_eq!(tree["base"], base.as_str());
    let last = tree["commit"].as_str().expect("the last commit").to_owned();
    assert_eq!(git_out(origin.path(), &["rev-parse", &branch]).trim(), last);
    assert_eq!(
        git_out(origin.path(), &["show", &format!("{last}:work.txt")]),
        "a\nb\n"
    );
    let history = git_out(origin.path(), &["log", "--format=%H %s", &last]);
    let subjects: Vec<&str> = history.lines().map(|l| &l[41..]).collect();
    assert_eq!(
        subjects,
        [
            format!("spur run {run_id}: b action 0 (shell)").as_str(),
            format!("spur run {run_id}: a action 0 (shell)").as_str(),
            "the project",
        ],
    );
    assert!(history.contains(&after_a));
    assert!(done
        .stderr()
        .contains(&format!("branch {branch} of remote origin, at {last}")));

    // Each action's commit is in the run's journal, as the server keeps it.
    let trace = second
        .args([
            "trace",
            &run_id,
            "--json",
            "--engine",
            "restate",
            "--ingress",
        ])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    let commits: Vec<&str> = trace
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["event"] == "action-finished")
        .filter_map(|r| r["commit"].as_str())
        .collect();
    assert_eq!(commits, [after_a.as_str(), last.as_str()], "{trace}");
    let shown = second
        .args(["trace", &run_id, "--engine", "restate", "--ingress"])
        .arg(server.ingress())
        .within(LIMIT)
        .run()
        .success();
    for commit in [&after_a, &last] {
        assert!(
            shown.stdout().contains(&format!(" → {}", &commit[..12])),
            "{}",
            shown.stdout()
        );
    }
    // The hook a step planted never ran: spur's commits run no hook.
    assert!(
        !hooked.exists(),
        "a step's post-commit hook ran with the worker's commit"
    );
}

#[test]
fn a_branch_rewritten_without_the_journaled_commit_stops_the_run_saying_so() {
    let server = &Server::start();
    let (origin, first, second) = tree_checkouts();
    let (mut fleet, run_id, branch, after_a) =
        paused_in_worktree(server, origin.path(), &first, &[]);
    // The branch is forced back to the project's first commit: a's commit is gone from
    // the remote, and the next worker, in a fresh clone, has never seen it.
    rewrite_branch(origin.path(), &branch, true, |dir| {
        git_out(dir, &["reset", "-q", "--hard", "HEAD~1"]);
    });
    kill_first_worker(&fleet);
    fleet.add_worker(second.path(), second.home(), &[]);
    let out = fleet_continue(&second, server, &run_id).within(LIMIT).run();
    assert_ne!(out.exit_code(), Some(0), "{}", out.stdout());
    // The run stops before b, saying why, rather than going on from another tree (or
    // waiting for a commit that will not come).
    let said = unwrapped(out.stderr());
    assert!(
        said.contains(&format!(
            "the run engine failed: step records 9-13: the run's tree could not be brought to its commit: the run's commit {after_a} is not on branch {branch} of remote `origin`"
        )),
        "{said}"
    );
    assert!(!second.exists(&format!(".spur/worktrees/{run_id}/worker.txt")));
}

#[test]
fn what_changes_a_workers_worktree_while_the_run_waits_is_not_the_runs() {
    let server = &Server::start();
    let (origin, first, _second) = tree_checkouts();
    let (_fleet, run_id, branch, _after_a) = paused_in_worktree(server, origin.path(), &first, &[]);
    // While the run waits, something on the worker (a step's leftover process, a hand)
    // changes the run's worktree there. The same worker goes on.
    let tree = format!(".spur/worktrees/{run_id}");
    first.file(&format!("{tree}/work.txt"), "changed while waiting\n");
    first.file(&format!("{tree}/stray.txt"), "stray\n");
    let done = fleet_continue(&first, server, &run_id).within(LIMIT).run();
    let json = done.stdout_json();
    assert_eq!(json["outcome"], "completed", "{json}\n{}", done.stderr());
    // b went on from the journaled commit, as any other worker would have.
    let last = json["worktree"]["commit"]
        .as_str()
        .expect("the last commit");
    assert_eq!(git_out(origin.path(), &["rev-parse", &branch]).trim(), last);
    assert_eq!(
        git_out(origin.path(), &["show", &format!("{last}:work.txt")]),
        "a\nb\n"
    );
    assert!(!first.exists(&format!("{tree}/stray.txt")));
}

#[test]
fn a_step_that_swaps_its_worktree_for_a_link_to_the_checkout_stops_the_run_not_the_checkout() {
    let (server, _one) = shared();
    let (_origin, first, _second) = tree_checkouts();
    // a replaces the run's worktree with a link to the worker's checkout: spur's commit
    // of the tree would otherwise land on the checkout's own branch, with its files.
    first.file(
        "pipeline.yaml",
        r#"
name: swap
initialState: a
terminalStates: [c]
states:
  - id: a
    onEnter:
      - {kind: shell, options: {command: 'echo a > work.txt; cd .. && rm -rf "$OLDPWD" && ln -s ../.. "$OLDPWD"'}}
  - {id: c}
transitions: [{from: a, to: c}]
"#,
    );
    first.git(&["commit", "-q", "-am", "the swap"]);
    first.file("mine.txt", "uncommitted work of the checkout's owner\n");
    let head = git_out(first.path(), &["rev-parse", "HEAD"]);
    let _fleet = Fleet::start(server, first.path(), first.home(), 1);
    let out = fleet_run(&first, server)
        .arg("--worktree")
        .within(LIMIT)
        .run();
    assert_ne!(out.exit_code(), Some(0), "{}", out.stdout());
    let said = unwrapped(out.stderr());
    assert!(
        said.contains("the action ran, but the run's tree could not be committed and pushed"),
        "{said}"
    );
    assert!(
        said.contains("is not the run's worktree (a link or a file where the worktree was)"),
        "{said}"
    );
    // The checkout is as its owner left it: same branch, same commit, the file untracked.
    assert_eq!(git_out(first.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        git_out(first.path(), &["branch", "--show-current"]),
        "main\n"
    );
    assert_eq!(
        git_out(first.path(), &["status", "--porcelain"]),
        "?? mine.txt\n"
    );
}

#[test]
fn spurs_git_for_a_runs_tree_runs_in_the_sandbox_like_the_step_that_configured_it() {
    let (server, _one) = shared();
    let (_origin, first, _second) = tree_checkouts();
    // a configures a clean filter for every file of the repository it works in: the
    // worker's `git add` of the tree runs it. It tries the worker's protected state and
    // leaves a mark in /tmp (which steps may write) to show it ran.
    first.file(
        "pipeline.yaml",
        r#"
name: filter
initialState: a
terminalStates: [c]
states:
  - id: a
    onEnter:
      - kind: shell
        options:
          command: >-
            echo a > work.txt; echo '* filter=evil' > .gitattributes;
            git config filter.evil.clean 'touch "$PROTECTED/forged"; touch "$MARK"; cat'
  - {id: c}
transitions: [{from: a, to: c}]
"#,
    );
    first.git(&["commit", "-q", "-am", "the filter"]);
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("filtered");
    let protected = first.protected();
    let envs = [
        ("PROTECTED", protected.to_str().unwrap()),
        ("MARK", mark.to_str().unwrap()),
    ];
    let _fleet = Fleet::start_with(server, first.path(), first.home(), 1, &envs);
    let out = fleet_run(&first, server)
        .arg("--worktree")
        .within(LIMIT)
        .run();
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "completed", "{json}\n{}", out.stderr());
    assert!(
        mark.exists(),
        "the filter ran with the worker's commit of the tree"
    );
    assert!(
        protected.is_dir(),
        "the worker's protected state is there to be forged"
    );
    assert!(
        !protected.join("forged").exists(),
        "spur's git wrote the protected state for a step's filter"
    );
}

#[test]
fn a_task_run_in_a_worktree_on_the_fleet_is_certified_and_its_tree_committed() {
    let server = &Server::start();
    let origin = tempfile::tempdir().unwrap();
    git_out(origin.path(), &["init", "-q", "--bare", "-b", "main"]);
    let p = task_project(&certify_pipeline(VERDICT_STEP)).file(".gitignore", ".spur/\n");
    p.git(&["init", "-q", "-b", "main"]);
    p.git(&["add", "-A"]);
    p.git(&["commit", "-q", "-m", "task 0804"]);
    p.git(&[
        "remote",
        "add",
        "origin",
        &origin.path().display().to_string(),
    ]);
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let out = fleet_run(&p, server).arg("--worktree").within(LIMIT).run();
    let json = out.stdout_json();
    assert_eq!(json["outcome"], "done", "{json}\n{}", out.stderr());
    assert!(ends_certified(&server_ledger(server, "0804")));
    // The step worked in the run's worktree: its spur call's output is there and in the
    // commit the reply names, which is the branch's head; the checkout has none of it.
    let run_id = json["runId"].as_str().unwrap();
    let tree = format!(".spur/worktrees/{run_id}");
    assert_eq!(p.read(&format!("{tree}/verdict.code")), "0\n");
    assert!(!p.exists("verdict.code"));
    let last = json["worktree"]["commit"]
        .as_str()
        .expect("the last commit");
    let branch = format!("spur/{run_id}");
    assert_eq!(git_out(origin.path(), &["rev-parse", &branch]).trim(), last);
    assert_eq!(
        git_out(origin.path(), &["show", &format!("{last}:verdict.code")]),
        "0\n"
    );
    assert_eq!(git_out(p.path(), &["status", "--porcelain"]), "");
}

#[test]
fn an_action_longer_than_the_engine_waits_is_refused_before_it_runs() {
    let (server, _one) = shared();
    let p = Spur::new().file(
        "pipeline.yaml",
        two_steps("long", "echo b >> steps.txt").replace(
            "'echo b >> steps.txt'}",
            "'echo b >> steps.txt', timeoutMs: 3600001}",
        ),
    );
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let out = fleet_run(&p, server).within(LIMIT).run();
    assert_ne!(out.exit_code(), Some(0));
    let said = unwrapped(out.stderr());
    assert!(
        said.contains("b[0] shell may run for 61 min (its timeout), longer than an action on a run engine may: 60 min"),
        "{said}"
    );
    assert!(said.contains("spur::run::action-too-long"), "{said}");
    // a ran; b never started (the server would have aborted it and held it as ambiguous).
    assert_eq!(p.read("steps.txt"), "a\n");
}

#[test]
fn a_fleet_worktree_needs_the_remote_and_its_worktrees_stay_with_the_workers() {
    let (_origin, first, _second) = tree_checkouts();
    first.git(&["remote", "remove", "origin"]);
    // No server is reached: the run's branch cannot be pushed, so nothing starts.
    let out = first
        .args([
            "run",
            "pipeline.yaml",
            "--worktree",
            "--engine",
            "restate",
            "--ingress",
        ])
        .arg("http://127.0.0.1:9")
        .within(LIMIT)
        .run()
        .code(4);
    assert!(
        out.stderr().contains("spur::run::worktree"),
        "{}",
        out.stderr()
    );
    assert!(
        out.stderr().contains("cannot push the run's branch `spur/"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("`origin`"), "{}", out.stderr());
    let cleanup = first
        .args(["run", "pipeline.yaml", "--worktree", "--worktree-cleanup"])
        .args(["--engine", "restate", "--ingress", "http://127.0.0.1:9"])
        .within(LIMIT)
        .run()
        .code(2);
    assert!(
        cleanup.stderr().contains("is not for runs on the engine"),
        "{}",
        cleanup.stderr()
    );
}
