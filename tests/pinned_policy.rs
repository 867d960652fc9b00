//! A pinned policy (issue 19, item 3): a run pins the gate's policy — `verify` and
//! `doneGate` of `.spur/config.yaml` — as it starts (its sha256 in the sealed
//! `run-started`, its snapshot in `.spur/policies/`). A step that edits the config cannot
//! make done pass: the run and every spur call from its steps use the pinned policy, and
//! the gate's deny names what changed. Outside runs, every decision names its policy, and
//! `spur audit verify` lists where it changed. (A person's change of the config is approved
//! with `spur policy approve`: tests/policy_approval.rs.)

use serde_json::Value;
use spur_engine::store::digest::sha256_hex;

use crate::common::{unwrapped, Spur};

/// One verify gate that fails (no `tests-pass` file).
const GATED: &str = "verify:\n  gates:\n    tests: {command: 'test -f tests-pass'}\n";

/// What a step writes over it: no gate, and nothing in the tree fingerprint.
const WEAKENED: &str = "verify:\n  gates: {}\ndoneGate:\n  fingerprintExclude: [\"**\"]\n";

/// The canonical form of `GATED`'s policy, and its hash.
const GATED_CANONICAL: &str = r#"{"verify":{"gates":{"tests":{"command":"test -f tests-pass"}}}}"#;

/// The example project of the answer files, its config `config`, and task 0804's PASS
/// derived through spur (so only the policy stands between it and done).
fn project(config: &str) -> Spur {
    let project = Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
        .fixture("examples/answers/pass.md", "answers/pass.md")
        .file(".spur/config.yaml", config)
        .file("weakened.yaml", WEAKENED);
    project.verdict_from_answer("0804", "answers/pass.md");
    project
}

/// A run of task 0804: `work` runs `command`, then goes to `to`.
fn pipeline(command: &str, to: &str) -> String {
    let command: String = command
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect();
    format!(
        "name: pinned\ninitialState: work\nterminalStates: [done, failed]\nfailureStates: [failed]\n\
         vars:\n  wbs: \"0804\"\nstates:\n  - id: work\n    onEnter:\n      - kind: shell\n\
         \x20       options:\n          command: |\n{command}  - id: done\n  - id: failed\n\
         transitions:\n  - {{from: work, to: {to}}}\n"
    )
}

fn run(project: &Spur, yaml: &str) -> Value {
    project
        .pipeline(yaml)
        .json()
        .env("USER", "ada")
        .run()
        .stdout_json()
}

#[test]
fn a_step_that_weakens_the_config_mid_run_cannot_make_done_pass() {
    let project = project(GATED);
    let out = run(
        &project,
        &pipeline("cp weakened.yaml .spur/config.yaml", "done"),
    );
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    let run_id = out["runId"].as_str().unwrap();
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "the done-gate policy changed during run {run_id}: verify.gates.tests removed, doneGate added"
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "the run pinned {}",
            &sha256_hex(GATED_CANONICAL.as_bytes())[..12]
        )),
        "{message}"
    );
    // The pin: the hash in the sealed run-started, the snapshot beside it.
    let trace = project.trace(run_id);
    let sha = sha256_hex(GATED_CANONICAL.as_bytes());
    assert_eq!(trace[0]["policySha256"], sha, "{}", trace[0]);
    assert_eq!(
        project.read(&format!(".spur/policies/{sha}.json")),
        GATED_CANONICAL
    );
    let task = project
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_ne!(task["status"], "done", "{task}");
}

#[test]
fn nested_spur_calls_from_a_step_use_the_pinned_policy() {
    let project = project(GATED);
    let steps = "cp weakened.yaml .spur/config.yaml\n\
                 \"$SPUR_BIN\" task update \"$wbs\" done --json > nested.json; echo $? > nested.code\n\
                 env -u SPUR_RUN_ID \"$SPUR_BIN\" task update \"$wbs\" done --json > unset.json; echo $? > unset.code\n\
                 \"$SPUR_BIN\" verify --wbs \"$wbs\" --json > verify.json 2> verify.err; echo $? > verify.code\n\
                 \"$SPUR_BIN\" run inner.yaml --json > inner.json\n";
    project.file(
        "inner.yaml",
        "name: inner\ninitialState: a\nterminalStates: [b]\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
    );
    let out = run(&project, &pipeline(steps, "failed"));
    let run_id = out["runId"].as_str().unwrap();
    // Named by SPUR_RUN_ID, or found by the task's run lock when a step unsets it: the
    // run's policy either way, and the deny names the change.
    for (name, code) in [("nested", "nested.code"), ("unset", "unset.code")] {
        assert_eq!(project.read(code), "1\n", "{name}");
        let nested: Value = serde_json::from_str(&project.read(&format!("{name}.json"))).unwrap();
        assert_eq!(nested["decision"], "deny", "{name}: {nested}");
        let message = unwrapped(nested["message"].as_str().unwrap());
        assert!(
            message.contains(&format!(
                "the done-gate policy changed during run {run_id}: verify.gates.tests removed"
            )),
            "{name}: {message}"
        );
    }
    // Nested verify runs the pinned gate (the config on disk has none), and records the
    // pinned policy.
    assert_eq!(
        project.read("verify.code"),
        "1\n",
        "{}",
        project.read("verify.err")
    );
    let verify: Value = serde_json::from_str(&project.read("verify.json")).unwrap();
    let tests = verify["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "tests")
        .expect("the pinned gate ran");
    assert_eq!(tests["status"], "FAIL", "{verify}");
    assert_eq!(tests["command"], "test -f tests-pass", "{verify}");
    let verified = project
        .read(".spur/ledger/tasks/0804.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "verified")
        .expect("a verified record");
    assert_eq!(
        verified["policySha256"],
        sha256_hex(GATED_CANONICAL.as_bytes())
    );
    // A run started from a step keeps the outer run's pin, not the edited config's.
    let inner: Value = serde_json::from_str(&project.read("inner.json")).unwrap();
    let trace = project.trace(inner["runId"].as_str().unwrap());
    assert_eq!(
        trace[0]["policySha256"],
        sha256_hex(GATED_CANONICAL.as_bytes()),
        "{}",
        trace[0]
    );
}

#[test]
fn a_resumed_run_keeps_its_pin_and_refuses_an_edited_snapshot() {
    let hold = "name: hold\ninitialState: hold\nterminalStates: [done]\nvars:\n  wbs: \"0804\"\n\
                states:\n  - {id: hold, pause: true}\n  - {id: done}\ntransitions: [{from: hold, to: done}]\n";
    let project = project(GATED);
    let paused = project.pipeline(hold).json().run().code(3).stdout_json();
    let run_id = paused["runId"].as_str().unwrap();
    // While the run waits, the config is weakened: a person's continue is refused, naming
    // the change (see tests/policy_approval.rs)…
    project.file(".spur/config.yaml", WEAKENED);
    let refused = project.args(["continue", run_id]).run().code(4);
    assert!(
        refused.stderr().contains("spur::policy::unapproved"),
        "{}",
        refused.stderr()
    );
    // …and once the person approves it, the resumed run still holds the pin.
    project.args(["policy", "approve"]).run().success();
    let out = project
        .args(["continue", run_id, "--json"])
        .run()
        .code(1)
        .stdout_json();
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("policy changed during run")
            && message.contains("verify.gates.tests removed"),
        "{message}"
    );
    // A pinned snapshot that was edited is refused (it is named by its sha256).
    project.file(".spur/config.yaml", GATED);
    project.args(["policy", "approve"]).run().success();
    let paused = project.pipeline(hold).json().run().code(3).stdout_json();
    let run_id = paused["runId"].as_str().unwrap();
    let sha = sha256_hex(GATED_CANONICAL.as_bytes());
    project.file(&format!(".spur/policies/{sha}.json"), "{}");
    let out = project.args(["continue", run_id]).run().code(4);
    let message = unwrapped(out.stderr());
    assert!(message.contains("spur::policy::pinned"), "{message}");
    assert!(message.contains("it was edited"), "{message}");
}

#[test]
fn outside_runs_each_decision_names_its_policy_and_audit_verify_lists_the_changes() {
    let project = project("doneGate:\n  externalVerdicts: deny\n");
    project
        .args(["task", "update", "0804", "done"])
        .env("USER", "ada")
        .run()
        .success();
    project.file(
        ".spur/config.yaml",
        "doneGate:\n  externalVerdicts: allow\n",
    );
    project
        .args([
            "task",
            "update",
            "T9",
            "done",
            "--force-done",
            "--reason",
            "by hand",
        ])
        .env("USER", "ada")
        .run()
        .success();
    let done = |wbs: &str| -> Value {
        let text = project.read(&format!(".spur/ledger/tasks/{wbs}.jsonl"));
        serde_json::from_str(text.lines().last().unwrap()).unwrap()
    };
    let deny = sha256_hex(br#"{"doneGate":{"externalVerdicts":"deny"}}"#);
    let allow = sha256_hex(br#"{"doneGate":{"externalVerdicts":"allow"}}"#);
    assert_eq!(done("0804")["policySha256"], deny);
    assert_eq!(done("T9")["policySha256"], allow);
    let audit: Value =
        serde_json::from_str(project.read(".spur/audit.jsonl").lines().next().unwrap()).unwrap();
    assert_eq!(audit["policySha256"], allow);

    let out = project.args(["audit", "verify"]).run().success();
    let text = out.stdout();
    assert!(
        text.contains("the gate's policy changed between decisions 1 time:"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "task T9 done (forced) under policy {}; before it, ",
            &allow[..12]
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "task 0804 done (pass) under {}: doneGate.externalVerdicts changed",
            &deny[..12]
        )),
        "{text}"
    );
    let json = project
        .args(["audit", "verify", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        json["policyChanges"][0]["changes"],
        serde_json::json!(["doneGate.externalVerdicts changed"]),
        "{json}"
    );
    // An edited snapshot is not used to say what changed.
    project.file(&format!(".spur/policies/{deny}.json"), "{}");
    let out = project.args(["audit", "verify"]).run().success();
    assert!(
        out.stdout()
            .contains("is missing or was edited: what changed is not known"),
        "{}",
        out.stdout()
    );
}
