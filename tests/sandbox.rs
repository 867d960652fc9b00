//! Steps cannot write spur's protected state (issue 19, item 1), on this machine's real
//! kernel (Landlock): the task ledger, run journals, audit log and policy snapshots live
//! outside the project (`$XDG_STATE_HOME/spur/projects/<name>-<hash>/`), beside the key,
//! and every child spur starts runs under a Landlock ruleset that keeps it out of them.
//! `spur` calls from steps that write that state reach the run through its socket
//! (`SPUR_RUN_SOCKET`); the run refuses `--force-done`. With the sandbox off
//! (`SPUR_SANDBOX=off`), the run says so and forgery is caught by detection instead.
//!
//! These tests need Landlock: on a kernel without it the first one fails saying so.

use serde_json::Value;

use crate::common::{unwrapped, Spur};

/// The example project of the answer files; nothing configured, so done needs only a
/// PASS verdict written through spur.
fn project() -> Spur {
    Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
        .fixture("examples/answers/pass.md", "answers/pass.md")
}

/// The PASS verdict of task 0804, derived through spur.
fn pass_verdict(project: &Spur) {
    project.verdict_from_answer("0804", "answers/pass.md");
}

/// A run of task 0804: `work` runs `command`, then goes to done.
fn pipeline(command: &str) -> String {
    crate::common::one_step_task_pipeline("sandboxed", command)
}

/// The sandbox on (the default) or off.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sandbox {
    On,
    Off,
}

fn run(project: &Spur, sandbox: Sandbox, yaml: &str) -> (Value, String) {
    let mut spur = project.pipeline(yaml).json().env("USER", "ada");
    if sandbox == Sandbox::Off {
        spur = spur.env("SPUR_SANDBOX", "off");
    }
    let out = spur.run();
    (out.stdout_json(), out.stderr().to_owned())
}

const FALLBACK: &str = "warning: sandbox off (SPUR_SANDBOX=off): steps can write spur's \
                        protected state; forged records are detected (keyed chains, views \
                        checked against the ledger), not prevented";

/// Each write a forger tries from a step, and the line it leaves in `attempts.txt`.
const FORGER: &str = r#"P="$SPUR_TEST_PROTECTED"
try() { if { printf 'forged\n' >> "$2"; } 2>> denied.err; then echo "$1 written"; else echo "$1 denied"; fi >> attempts.txt; }
try ledger "$P/ledger/tasks/0804.jsonl"
try journal "$P/runs/$SPUR_RUN_ID/journal.jsonl"
try audit "$P/audit.jsonl"
try key "$XDG_STATE_HOME/spur/key"
try new-ledger "$P/ledger/tasks/0806.jsonl"
if mv "$P/audit.jsonl" "$P/audit.old" 2>> denied.err; then echo "rename written"; else echo "rename denied"; fi >> attempts.txt
echo note > .spur/run/0804-note.txt
echo tree > src/written-by-step.txt
"#;

/// An audit log with one record, so the forger has one to write to.
fn audited(project: &Spur) {
    project
        .args([
            "task",
            "update",
            "0805",
            "done",
            "--force-done",
            "--reason",
            "seed the audit log",
            "--no-lifecycle",
        ])
        .env("USER", "ada")
        .run()
        .success();
}

#[test]
fn a_step_cannot_write_the_ledger_journal_audit_log_or_key_and_the_run_is_unaffected() {
    let project = project();
    pass_verdict(&project);
    audited(&project);
    let protected = project.protected();
    let ledger_before = std::fs::read(protected.join("ledger/tasks/0804.jsonl")).unwrap();
    let audit_before = std::fs::read(protected.join("audit.jsonl")).unwrap();
    let key_before = std::fs::read(project.key_path()).unwrap();

    let (out, stderr) = run(&project, Sandbox::On, &pipeline(FORGER));

    assert!(
        !stderr.contains("sandbox off"),
        "this machine's kernel must offer Landlock (Linux 5.13+ with `lsm=…,landlock`): {stderr}"
    );
    assert_eq!(
        project.read("attempts.txt"),
        "ledger denied\njournal denied\naudit denied\nkey denied\nnew-ledger denied\nrename denied\n"
    );
    let denied = project.read("denied.err");
    assert_eq!(denied.matches("Permission denied").count(), 6, "{denied}");
    // What steps are meant to write stays writable.
    assert_eq!(project.read(".spur/run/0804-note.txt"), "note\n");
    assert_eq!(project.read("src/written-by-step.txt"), "tree\n");
    // Nothing changed, and the run went on to certify the task.
    assert_eq!(
        std::fs::read(project.key_path()).unwrap(),
        key_before,
        "the key"
    );
    assert_eq!(
        std::fs::read(protected.join("audit.jsonl")).unwrap(),
        audit_before
    );
    let ledger_after = std::fs::read(protected.join("ledger/tasks/0804.jsonl")).unwrap();
    assert!(ledger_after.starts_with(&ledger_before));
    assert!(!protected.join("ledger/tasks/0806.jsonl").exists());
    assert_eq!(out["outcome"], "done", "{out}\n{stderr}");
    assert_eq!(out["doneGate"]["decision"], "allow", "{out}");
    project.args(["audit", "verify"]).run().success();
    let task = project
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(task["status"], "done", "{task}");
    assert_eq!(task["certification"], "certified", "{task}");
}

#[test]
fn with_the_sandbox_off_the_run_says_so_and_forgery_is_detected() {
    let project = project();
    pass_verdict(&project);
    audited(&project);

    let (out, stderr) = run(&project, Sandbox::Off, &pipeline(FORGER));

    assert_eq!(stderr.matches("sandbox off").count(), 1, "{stderr}");
    assert!(
        stderr
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(FALLBACK),
        "{stderr}"
    );
    assert_eq!(
        project.read("attempts.txt"),
        "ledger written\njournal written\naudit written\nkey written\nnew-ledger written\nrename written\n"
    );
    // Detection: the forged ledger is not taken as a status, the edited audit log fails
    // its check.
    assert_ne!(out["outcome"], "done", "{out}");
    let audit = project.args(["audit", "verify"]).run();
    assert_ne!(audit.exit_code(), Some(0), "{}", audit.stdout());
}

/// Nested calls a step makes, each leaving its exit code and output in the project.
const NESTED: &str = r#"test -S "$SPUR_RUN_SOCKET" && echo yes > socket.txt
"$SPUR_BIN" task verdict 0804 --from-answer answers/pass.md > verdict.out 2>&1; echo $? > verdict.code
"$SPUR_BIN" task update 0804 done --json > update.json 2> update.err; echo $? > update.code
"#;

#[test]
fn nested_task_verdict_and_update_from_a_step_work_through_the_run() {
    for sandbox in [Sandbox::On, Sandbox::Off] {
        let project = project();
        let (out, stderr) = run(&project, sandbox, &pipeline(NESTED));
        assert_eq!(project.read("socket.txt"), "yes\n", "{sandbox:?}");
        assert_eq!(
            project.read("verdict.code"),
            "0\n",
            "{sandbox:?}: {}",
            project.read("verdict.out")
        );
        assert_eq!(
            project.read("update.code"),
            "0\n",
            "{sandbox:?}: {}",
            project.read("update.err")
        );
        let update: Value = serde_json::from_str(&project.read("update.json")).unwrap();
        assert_eq!(update["decision"], "allow", "{sandbox:?}: {update}");
        assert_eq!(out["outcome"], "done", "{sandbox:?}: {out}\n{stderr}");
        assert_eq!(
            stderr.contains("sandbox off"),
            sandbox == Sandbox::Off,
            "{stderr}"
        );
        let task = project
            .args(["task", "show", "0804", "--json"])
            .run()
            .success()
            .stdout_json();
        assert_eq!(task["status"], "done", "{sandbox:?}: {task}");
        assert_eq!(task["certification"], "certified", "{sandbox:?}: {task}");
    }
}

#[test]
fn a_nested_force_done_or_state_dir_is_refused_by_the_run() {
    let steps = r#""$SPUR_BIN" task update 0804 done --force-done --reason "the agent says so" > force.out 2> force.err; echo $? > force.code
"$SPUR_BIN" task update 0804 done --state-dir /tmp/elsewhere > dir.out 2> dir.err; echo $? > dir.code
exit 1
"#;
    for sandbox in [Sandbox::On, Sandbox::Off] {
        let project = project();
        let (out, _) = run(&project, sandbox, &pipeline(steps));
        assert_eq!(out["outcome"], "failed", "{sandbox:?}: {out}");
        assert_eq!(project.read("force.code"), "2\n", "{sandbox:?}");
        let force = project.read("force.err");
        let flat = force.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("an override comes from a person, not from a step"),
            "{sandbox:?}: {force}"
        );
        assert!(
            flat.contains("spur::usage::nested-refused"),
            "{sandbox:?}: {force}"
        );
        assert_eq!(project.read("dir.code"), "2\n", "{sandbox:?}");
        assert!(
            project
                .read("dir.err")
                .contains("--state-dir is not taken from a step"),
            "{sandbox:?}: {}",
            project.read("dir.err")
        );
        // Nothing was forced: no audit record, the task is not done.
        assert!(
            !project.protected_path("audit.jsonl").exists(),
            "{sandbox:?}"
        );
        let task = project
            .args(["task", "show", "0804", "--json"])
            .run()
            .success()
            .stdout_json();
        assert_ne!(task["status"], "done", "{sandbox:?}: {task}");
    }
}

#[test]
fn a_step_that_bypasses_the_socket_to_force_cannot_write_the_audit_log() {
    // Without SPUR_RUN_SOCKET the step's spur writes state itself: with the sandbox that
    // fails (the audit log is out of reach, so nothing is forced); without it, the
    // override is audited, not prevented (the book says so).
    let steps = r#"env -u SPUR_RUN_SOCKET "$SPUR_BIN" task update 0804 done --force-done --reason "the agent says so" --no-lifecycle > force.out 2> force.err; echo $? > force.code
exit 1
"#;
    let project = project();
    let (out, _) = run(&project, Sandbox::On, &pipeline(steps));
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_ne!(
        project.read("force.code"),
        "0\n",
        "{}",
        project.read("force.err")
    );
    assert!(
        project.read("force.err").contains("Permission denied"),
        "{}",
        project.read("force.err")
    );
    assert!(!project.protected_path("audit.jsonl").exists());
    let task = project
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_ne!(task["status"], "done", "{task}");

    let project = self::project();
    let (_, stderr) = run(&project, Sandbox::Off, &pipeline(steps));
    assert!(stderr.contains("sandbox off"), "{stderr}");
    assert_eq!(
        project.read("force.code"),
        "0\n",
        "{}",
        project.read("force.err")
    );
    let audit = project.args(["audit", "list", "--json"]).run().success();
    assert!(
        audit.stdout().contains("the agent says so"),
        "{}",
        audit.stdout()
    );
}

#[test]
fn state_show_names_the_protected_state_outside_the_project() {
    let project = project();
    pass_verdict(&project);
    let shown = project
        .args(["state", "show", "--json"])
        .run()
        .success()
        .stdout_json();
    let protected = project.protected();
    assert_eq!(shown["protectedDir"], protected.display().to_string());
    assert_eq!(shown["legacyInStateDir"], false);
    assert!(!protected.starts_with(project.path()));
    assert!(protected.join("ledger/tasks/0804.jsonl").exists());
    assert!(!project.path().join(".spur/ledger").exists());
}

#[test]
fn a_nested_call_is_answered_as_its_own_run_whatever_run_id_the_step_names() {
    // A gate that fails, and what a step writes over it; the step then names a run that
    // does not exist (it could be another, weaker one) and asks for done.
    let project = project().file(
        ".spur/config.yaml",
        "verify:\n  gates:\n    tests: {command: 'test -f tests-pass'}\n",
    );
    project.file(
        "weakened.yaml",
        "verify:\n  gates: {}\ndoneGate:\n  fingerprintExclude: [\"**\"]\n",
    );
    pass_verdict(&project);
    let steps = r#"cp weakened.yaml .spur/config.yaml
SPUR_RUN_ID=20260101T000000Z-abcdef "$SPUR_BIN" task update 0804 done --json > update.json 2> update.err; echo $? > update.code
"#;
    let (out, _) = run(&project, Sandbox::On, &pipeline(steps));
    let run_id = out["runId"].as_str().unwrap();
    assert_eq!(
        project.read("update.code"),
        "1\n",
        "{}",
        project.read("update.err")
    );
    let update: Value = serde_json::from_str(&project.read("update.json")).unwrap();
    assert_eq!(update["decision"], "deny", "{update}");
    let message = unwrapped(update["message"].as_str().unwrap());
    assert!(
        message.contains(&format!("the done-gate policy changed during run {run_id}")),
        "{message}"
    );
}

#[test]
fn the_run_socket_listens_while_steps_run_and_is_gone_after_the_run() {
    let project = project();
    pass_verdict(&project);
    std::fs::create_dir_all(project.path().join("tmp")).unwrap();
    let tmp = project.path().join("tmp");
    let yaml = pipeline(
        "case \"$SPUR_RUN_SOCKET\" in \"$TMPDIR\"/spur-run-*/run.sock) echo under-tmpdir ;; *) echo elsewhere ;; esac > socket.txt\n\
         if [ -S \"$SPUR_RUN_SOCKET\" ]; then echo listening; else echo absent; fi >> socket.txt",
    );
    let out = project.pipeline(&yaml).json().env("TMPDIR", &tmp).run();
    assert_eq!(out.stdout_json()["outcome"], "done", "{}", out.stderr());
    assert_eq!(project.read("socket.txt"), "under-tmpdir\nlistening\n");
    // The socket's directory goes with the run.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("spur-run-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
