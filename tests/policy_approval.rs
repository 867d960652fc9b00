//! The approved policy (issue 19): `.spur/config.yaml` stays writable by steps, so the
//! gate's policy a person approved lives in the protected state, sealed. A step that
//! weakens the config gets its own run denied (the pin) and the next run refused, naming
//! the change, until a person runs `spur policy approve`; a step cannot approve; an edited
//! approval approves nothing.

use serde_json::Value;
use spur_engine::store::digest::sha256_hex;

use crate::common::{unwrapped, Spur};

/// One verify gate that fails (no `tests-pass` file).
const GATED: &str = "verify:\n  gates:\n    tests: {command: 'test -f tests-pass'}\n";

/// What a step writes over it: no gate, and nothing in the tree fingerprint.
const WEAKENED: &str = "verify:\n  gates: {}\ndoneGate:\n  fingerprintExclude: [\"**\"]\n";

/// The canonical form of `GATED`'s policy.
const GATED_CANONICAL: &str = r#"{"verify":{"gates":{"tests":{"command":"test -f tests-pass"}}}}"#;

/// A pipeline with nothing to do, for a person's next run.
const PLAIN: &str =
    "name: plain\ninitialState: a\nterminalStates: [b]\nstates: [{id: a}, {id: b}]\n\
                     transitions: [{from: a, to: b}]\n";

/// The example project of the answer files, configured with `GATED`, and task 0804's PASS
/// derived through spur.
fn project() -> Spur {
    let project = Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
        .fixture("examples/answers/pass.md", "answers/pass.md")
        .file(".spur/config.yaml", GATED)
        .file("weakened.yaml", WEAKENED)
        .file("plain.yaml", PLAIN);
    project.verdict_from_answer("0804", "answers/pass.md");
    project
}

/// A run of task 0804 whose one step runs `command`, then goes to done.
fn pipeline(command: &str) -> String {
    crate::common::one_step_task_pipeline("approval", command)
}

/// `spur policy show --json`, whatever its exit code.
fn shown(project: &Spur) -> Value {
    project
        .args(["policy", "show", "--json"])
        .run()
        .stdout_json()
}

/// `text` with the project's paths and the approval's time replaced.
fn redacted(project: &Spur, text: &str, at: &str) -> String {
    project.redact(text).replace(at, "[AT]")
}

#[test]
fn a_step_that_drops_the_gates_is_denied_and_the_next_run_is_refused_until_a_person_approves() {
    let project = project();
    let out = project
        .pipeline(&pipeline("cp weakened.yaml .spur/config.yaml"))
        .json()
        .env("USER", "ada")
        .run();
    // The first run approves the config's policy on first use, and says so once.
    assert_eq!(
        out.stderr().matches("on first use").count(),
        1,
        "{}",
        out.stderr()
    );
    let run = out.stdout_json();
    assert_eq!(run["doneGate"]["decision"], "deny", "{run}");
    assert!(
        run["doneGate"]["message"]
            .as_str()
            .unwrap()
            .contains("the done-gate policy changed during run"),
        "{run}"
    );
    // The weakened file persists; the next run by a person is refused, naming the change.
    assert_eq!(project.read(".spur/config.yaml"), WEAKENED);
    let approved = shown(&project);
    let at = approved["approved"]["at"].as_str().unwrap().to_owned();
    assert_eq!(
        approved["approved"]["sha256"],
        sha256_hex(GATED_CANONICAL.as_bytes())
    );
    assert_eq!(approved["matches"], false, "{approved}");
    let refused = project
        .args(["run", "plain.yaml"])
        .env("USER", "ada")
        .run()
        .code(4);
    let text = unwrapped(refused.stderr());
    assert!(text.contains("spur::policy::unapproved"), "{text}");
    assert!(
        text.contains(
            "verify.gates: 1 gate → 0 (removed: tests); doneGate.fingerprintExclude added: **"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "review .spur/config.yaml; if the change is yours, run `spur policy approve`"
        ),
        "{text}"
    );
    assert!(!text.contains("on first use"), "{text}");
    insta::assert_snapshot!(
        "next_run_refused",
        redacted(&project, refused.stderr(), &at)
    );
    assert!(
        project
            .args(["runs", "--json"])
            .run()
            .success()
            .stdout_json()
            .as_array()
            .unwrap()
            .len()
            == 1,
        "the refused run did not start"
    );
    // Every gate decision outside runs is refused too, and so are continue and retry.
    for args in [
        &["task", "update", "0804", "done", "--no-lifecycle"][..],
        &["task", "update", "0804", "done"],
        &["task", "certify", "0804"],
    ] {
        let update = project.args(args).run().code(2);
        assert!(
            update.stderr().contains("spur::policy::unapproved"),
            "{args:?}: {}",
            update.stderr()
        );
    }
    let run_id = run["runId"].as_str().unwrap();
    let retry = project.args(["retry", run_id]).run().code(4);
    assert!(
        retry.stderr().contains("spur::policy::unapproved"),
        "{}",
        retry.stderr()
    );
    // `spur task why` names it among the gate's checks.
    let why = project
        .args(["task", "why", "0804", "--json"])
        .run()
        .stdout_json();
    let policy = why["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "policy")
        .cloned()
        .unwrap();
    assert_eq!(policy["ok"], false, "{why}");
    assert_eq!(why["gate"]["wouldAllow"], false, "{why}");
    assert!(
        policy["detail"]
            .as_str()
            .unwrap()
            .contains("is not the one approved by ada"),
        "{policy}"
    );
    let show = project.args(["policy", "show"]).run().code(1);
    insta::assert_snapshot!(
        "policy_show_mismatch",
        redacted(&project, show.stdout(), &at)
    );

    // The person reviews and approves: the diff is printed, and runs go again.
    let approve = project
        .args(["policy", "approve", "--json"])
        .env("USER", "ada")
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        approve["changes"],
        serde_json::json!([
            "verify.gates: 1 gate → 0 (removed: tests)",
            "doneGate.fingerprintExclude added: **"
        ]),
        "{approve}"
    );
    assert_eq!(approve["replaced"]["at"], at.as_str(), "{approve}");
    let after = shown(&project);
    assert_eq!(after["matches"], true, "{after}");
    assert_eq!(after["approved"]["by"], "ada", "{after}");
    project
        .args(["run", "plain.yaml"])
        .env("USER", "ada")
        .run()
        .success();
}

#[test]
fn a_step_cannot_approve_a_policy() {
    let project = project();
    let steps = "cp weakened.yaml .spur/config.yaml\n\
                 \"$SPUR_BIN\" policy approve 2> nested.err; echo $? > nested.code\n\
                 env -u SPUR_RUN_SOCKET \"$SPUR_BIN\" policy approve 2> direct.err; echo $? > direct.code\n\
                 env -u SPUR_RUN_SOCKET -u SPUR_RUN_ID \"$SPUR_BIN\" policy approve 2> bare.err; echo $? > bare.code\n";
    let out = project
        .pipeline(&pipeline(steps))
        .json()
        .env("USER", "ada")
        .run();
    assert!(
        !out.stderr().contains("sandbox off"),
        "this machine's kernel must offer Landlock: {}",
        out.stderr()
    );
    // Through the run: refused by the run, as a nested --force-done is.
    assert_eq!(project.read("nested.code"), "2\n");
    let nested = unwrapped(&project.read("nested.err"));
    assert!(nested.contains("spur::usage::nested-refused"), "{nested}");
    assert!(
        nested.contains("an approval comes from a person, not from a step"),
        "{nested}"
    );
    // Without the socket, SPUR_RUN_ID still says it is a step.
    assert_eq!(project.read("direct.code"), "2\n");
    let direct = unwrapped(&project.read("direct.err"));
    assert!(
        direct.contains("spur::policy::approval-from-step"),
        "{direct}"
    );
    // Without either, the sandbox keeps it out of the protected state.
    assert_eq!(project.read("bare.code"), "1\n");
    let bare = unwrapped(&project.read("bare.err"));
    assert!(bare.contains("spur::policy::approval-unusable"), "{bare}");
    assert!(bare.contains("Permission denied"), "{bare}");
    // The approval is still the person's, of the policy before the step.
    let approved = shown(&project);
    assert_eq!(
        approved["approved"]["sha256"],
        sha256_hex(GATED_CANONICAL.as_bytes()),
        "{approved}"
    );
    let next = project.args(["run", "plain.yaml"]).run().code(4);
    assert!(
        next.stderr().contains("spur::policy::unapproved"),
        "{}",
        next.stderr()
    );
}

#[test]
fn an_edited_approval_is_reported_tampered_and_approves_nothing() {
    let project = project();
    project
        .args(["run", "plain.yaml"])
        .env("USER", "ada")
        .run()
        .success();
    let path = project.protected_path("approved-policy.json");
    let record = std::fs::read_to_string(&path).unwrap();
    assert!(record.contains(r#""by":"ada""#), "{record}");
    // A forger without the key puts the weakened policy in, with its right hash.
    let weakened = r#"{"verify":{"gates":{}},"doneGate":{"fingerprintExclude":["**"]}}"#;
    let forged = record
        .replace(
            &sha256_hex(GATED_CANONICAL.as_bytes()),
            &sha256_hex(weakened.as_bytes()),
        )
        .replace(
            &serde_json::to_string(GATED_CANONICAL).unwrap(),
            &serde_json::to_string(weakened).unwrap(),
        );
    assert_ne!(forged, record);
    std::fs::write(&path, forged).unwrap();
    project.file(".spur/config.yaml", WEAKENED);

    let refused = project.args(["run", "plain.yaml"]).run().code(4);
    let text = unwrapped(refused.stderr());
    assert!(text.contains("spur::policy::approval-tampered"), "{text}");
    assert!(
        text.contains("it was edited, or written without the key"),
        "{text}"
    );
    let update = project
        .args(["task", "update", "0804", "done", "--no-lifecycle"])
        .run()
        .code(2);
    assert!(
        update.stderr().contains("spur::policy::approval-tampered"),
        "{}",
        update.stderr()
    );
    let show = project.args(["policy", "show", "--json"]).run().code(1);
    let show = show.stdout_json();
    assert_eq!(show["approval"], "tampered", "{show}");
    assert_eq!(show["approved"], Value::Null, "{show}");
    assert_eq!(show["matches"], false, "{show}");

    // A record sealed with a key that is gone is unverifiable, not approved.
    std::fs::write(&path, &record).unwrap();
    project.file(".spur/config.yaml", GATED);
    std::fs::rename(project.key_path(), project.home().join("key.away")).unwrap();
    let show = project.args(["policy", "show", "--json"]).run().code(1);
    assert_eq!(show.stdout_json()["approval"], "unverifiable");
    std::fs::rename(project.home().join("key.away"), project.key_path()).unwrap();
    assert_eq!(shown(&project)["matches"], true);

    // A person's approval replaces a tampered one, and says so.
    std::fs::write(&path, record.replace(r#""by":"ada""#, r#""by":"eve""#)).unwrap();
    let approve = project
        .args(["policy", "approve"])
        .env("USER", "ada")
        .run()
        .success();
    assert!(
        approve
            .stdout()
            .contains("it replaces an approval that approved nothing"),
        "{}",
        approve.stdout()
    );
    project.args(["run", "plain.yaml"]).run().success();
}
