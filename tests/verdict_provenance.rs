//! Where the verdict came from: the done gate accepts only the verdict artifact spur last
//! recorded writing (`spur task verdict`, `verdict.derive`, verify's merge, `json.update`),
//! unless `.spur/config.yaml` says `doneGate: {externalVerdicts: allow}`; then the `done`
//! record says `external`. Each test plays a step that writes or edits the artifact itself.

use serde_json::Value;

use crate::common::Spur;

/// A PASS for the example task 0804 that a step could write by hand: a row for every
/// requirement and criterion of its task file (the gate's completeness check), all MET.
const HAND_PASS: &str = concat!(
    r#"{"wbs":"0804","verdict":"PASS","requirements":["#,
    r#"{"id":"R1","status":"MET","evidence":"src/answer.rs:1"},"#,
    r#"{"id":"R2","status":"MET","evidence":"src/answer.rs:1"},"#,
    r#"{"id":"R3","status":"MET","evidence":"src/answer.rs:1"}],"acceptanceCriteria":["#,
    r#"{"id":"AC-1","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"},"#,
    r#"{"id":"AC-2","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"},"#,
    r#"{"id":"atomic-write","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"},"#,
    r#"{"id":"Scenario: Quiet mode","status":"MET","evidenceType":"test","evidence":"tests/a.rs:1"},"#,
    r#"{"id":"[advisory] The book documents the answer format","status":"MET","evidenceType":"static-ref","evidence":"book/a.md:1"}]}"#
);

const ALLOW_EXTERNAL: &str = "doneGate:\n  externalVerdicts: allow\n";

/// The example project of the answer files (`spur task verdict 0804 --from-answer
/// answers/pass.md` derives a PASS), with a `.spur/` directory.
fn project() -> Spur {
    let project = Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
        .fixture("examples/answers/pass.md", "answers/pass.md");
    std::fs::create_dir_all(project.join(".spur")).unwrap();
    project
}

/// A pipeline for task 0804: `work` runs `steps` (YAML list items, indented six spaces),
/// then `done` (a success terminal, so the gate is asked).
fn pipeline(steps: &str) -> String {
    format!(
        "name: provenance\ninitialState: work\nterminalStates: [done, failed]\n\
         failureStates: [failed]\nvars:\n  wbs: \"0804\"\nstates:\n  - id: work\n    onEnter:\n\
         {steps}  - id: done\n  - id: failed\ntransitions:\n  - {{from: work, to: done}}\n"
    )
}

/// A shell step writing `text` to the task's artifact, as an agent could.
fn hand_write(text: &str) -> String {
    format!(
        "      - kind: shell\n        options:\n          command: |\n            \
         mkdir -p .spur/run && printf '%s\\n' '{text}' > .spur/run/0804-verdict.json\n"
    )
}

/// spur's own derivation of the answer into the artifact.
const DERIVE: &str = "      - kind: verdict.derive\n        options: {answer: answers/pass.md}\n";

/// The corpus pipeline's edit: a check row appended with `jq … && mv` in a shell step.
const JQ_EDIT: &str = "      - kind: shell\n        options:\n          command: |\n            \
    V=.spur/run/0804-verdict.json\n            \
    jq '.checks += [{\"name\":\"proof-input-digest\",\"status\":\"pass\",\"evidence\":\"d\"}]' \"$V\" > \"$V.tmp\" && mv \"$V.tmp\" \"$V\"\n";

fn run(project: &Spur, steps: &str) -> Value {
    project
        .pipeline(&pipeline(steps))
        .json()
        .env("USER", "ada")
        // Detection is the promise here: a step may write the ledger (tests/sandbox.rs
        // shows the sandbox stopping it).
        .env("SPUR_SANDBOX", "off")
        .run()
        .stdout_json()
}

/// The task ledger's records, parsed.
fn ledger(project: &Spur) -> Vec<Value> {
    project
        .read(".spur/ledger/tasks/0804.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn status(project: &Spur) -> String {
    let show = project
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    show["status"].as_str().unwrap().to_owned()
}

fn assert_denied_as_external(out: &Value) -> String {
    assert_eq!(out["outcome"], "failed", "{out}");
    assert_eq!(out["reason"], "done-gate-denied", "{out}");
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    assert_eq!(out["doneGate"]["verdict"], "PASS", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("was written or edited outside spur"),
        "{message}"
    );
    message
}

#[test]
fn a_pass_verdict_a_shell_step_writes_by_hand_is_denied() {
    let project = project();
    let out = run(&project, &hand_write(HAND_PASS));
    let message = assert_denied_as_external(&out);
    insta::assert_snapshot!("deny_hand_written", project.redact(&message));
    assert_eq!(status(&project), "todo");
    assert!(
        !project.exists(".spur/ledger/tasks/0804.jsonl"),
        "nothing was recorded"
    );
    // `spur task update` asks the same gate.
    let out = project
        .args(["task", "update", "0804", "done", "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("spur has no record of writing it"),
        "{out}"
    );
}

#[test]
fn external_verdicts_allow_accepts_a_hand_written_pass_and_says_external() {
    let project = project().file(".spur/config.yaml", ALLOW_EXTERNAL);
    let out = run(&project, &hand_write(HAND_PASS));
    assert_eq!(out["outcome"], "done", "{out}");
    assert_eq!(out["doneGate"]["decision"], "allow", "{out}");
    assert_eq!(out["doneGate"]["reason"], "external", "{out}");
    let records = ledger(&project);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["kind"], "status");
    assert_eq!(records[0]["gate"]["reason"], "external");
    let show = project
        .args(["task", "show", "0804", "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(
        show["history"][0]["via"]["how"], "done-gate-external",
        "{show}"
    );
    assert_eq!(show["certification"], "certified");
}

#[test]
fn a_jq_edit_after_spur_wrote_the_verdict_is_denied_by_default() {
    let project = project();
    let out = run(&project, &format!("{DERIVE}{JQ_EDIT}"));
    let message = assert_denied_as_external(&out);
    assert!(
        message.contains("the one spur last recorded writing (verdict-derive at "),
        "{message}"
    );
    assert!(
        message.contains("spur task verdict 0804 --from-answer FILE"),
        "{message}"
    );
    // The edit happened: the row is there, and the ledger holds only the derivation.
    assert!(project
        .read(".spur/run/0804-verdict.json")
        .contains("proof-input-digest"));
    let kinds: Vec<_> = ledger(&project)
        .iter()
        .map(|r| (r["kind"].clone(), r["writer"].clone()))
        .collect();
    assert_eq!(
        kinds,
        [("verdict-written".into(), "verdict-derive".into())],
        "{kinds:?}"
    );
    assert_eq!(status(&project), "todo");
}

#[test]
fn a_jq_edit_after_spur_wrote_the_verdict_is_external_when_allowed() {
    let project = project().file(".spur/config.yaml", ALLOW_EXTERNAL);
    let out = run(&project, &format!("{DERIVE}{JQ_EDIT}"));
    assert_eq!(out["outcome"], "done", "{out}");
    assert_eq!(out["doneGate"]["reason"], "external", "{out}");
    let done = ledger(&project).pop().unwrap();
    assert_eq!(done["gate"]["reason"], "external", "{done}");
}

#[test]
fn the_same_edit_through_json_update_is_spurs_and_allowed() {
    let project = project();
    let update = "      - kind: json.update\n        options:\n          path: .spur/run/0804-verdict.json\n          \
                  expr: '.checks += [{\"name\":\"proof-input-digest\",\"status\":\"pass\",\"evidence\":\"d\"}]'\n";
    let out = run(&project, &format!("{DERIVE}{update}"));
    assert_eq!(out["outcome"], "done", "{out}");
    assert_eq!(out["doneGate"]["reason"], "pass", "{out}");
    let writers: Vec<_> = ledger(&project)
        .iter()
        .filter(|r| r["kind"] == "verdict-written")
        .map(|r| r["writer"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(writers, ["verdict-derive", "json-update"]);
}

#[test]
fn spurs_writers_do_not_launder_an_artifact_a_step_wrote() {
    // json.update and verify's merge both rewrite a hand-written PASS; neither makes it
    // spur's.
    let project = project();
    let update = "      - kind: json.update\n        options:\n          path: .spur/run/0804-verdict.json\n          \
                  expr: '.checks += [{\"name\":\"x\",\"status\":\"pass\"}]'\n";
    let out = run(&project, &format!("{}{update}", hand_write(HAND_PASS)));
    assert_denied_as_external(&out);
    project.args(["verify", "--wbs", "0804"]).run().success();
    let out = project
        .args(["task", "update", "0804", "done", "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("spur has no record of writing it"),
        "{out}"
    );
    // Verify records the gates it ran (`verified`), never the artifact as spur's.
    let written = if project.exists(".spur/ledger/tasks/0804.jsonl") {
        ledger(&project)
            .iter()
            .filter(|r| r["kind"] == "verdict-written")
            .count()
    } else {
        0
    };
    assert_eq!(written, 0);
}

#[test]
fn an_edited_verdict_is_allowed_again_once_spur_derives_it_anew() {
    let project = project();
    project.verdict_from_answer("0804", "answers/pass.md");
    // A hand edit that keeps the PASS.
    let path = ".spur/run/0804-verdict.json";
    let edited = project.read(path).replace("\"PASS\"", "\"PASS\" ");
    project.file(path, edited);
    let update = |p: &Spur| {
        p.args(["task", "update", "0804", "done", "--json"])
            .run()
            .stdout_json()
    };
    let out = update(&project);
    assert_eq!(out["decision"], "deny", "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("the one spur last recorded writing (task-verdict at "),
        "{out}"
    );
    project.verdict_from_answer("0804", "answers/pass.md");
    let out = update(&project);
    assert_eq!(
        (&out["decision"], &out["reason"]),
        (&"allow".into(), &"pass".into()),
        "{out}"
    );
}

/// A `verdict-written` record for the step's own artifact: format 3 without its closing
/// brace (to be sealed), or the whole line of format 2 (chained by sha256, unsealed).
fn forge_record(v: u8, prev: &str, sha256: &str) -> String {
    let open = format!(
        r#"{{"v":{v},"seq":1,"wbs":"0804","at":"2026-12-01T00:00:00.000Z","user":"eve","run":null,"kind":"verdict-written","sha256":"{sha256}","writer":"task-verdict","prev":"{prev}""#
    );
    if v == 3 {
        open
    } else {
        format!("{open}}}")
    }
}

/// How the forging step chains its record.
enum Chained {
    /// With a `prev` that is no line's.
    Not,
    /// As spur chained before keyed chains: `prev` the sha256 of the line before, no seal.
    BySha256,
    /// As spur chains now, sealed with the key (the step read the key file).
    Sealed,
}

#[test]
fn a_forged_verdict_written_record_fails_closed() {
    let sha = |text: &str| spur_engine::store::digest::sha256_hex(text.as_bytes());
    // The hand-written artifact's bytes, as the step writes them (printf adds a newline).
    let hand = format!("{HAND_PASS}\n");
    for (name, chained, recorded) in [
        ("unchained", Chained::Not, sha(&hand)),
        (
            "chained by sha256, its own sha256",
            Chained::BySha256,
            sha(&hand),
        ),
        (
            "sealed, another sha256",
            Chained::Sealed,
            sha("something else"),
        ),
    ] {
        let project = project();
        project.verdict_from_answer("0804", "answers/pass.md");
        let first = project.read(".spur/ledger/tasks/0804.jsonl");
        let first = first.trim_end_matches('\n');
        let forged = match chained {
            Chained::Not => forge_record(2, &"0".repeat(64), &recorded),
            Chained::BySha256 => forge_record(2, &sha(first), &recorded),
            Chained::Sealed => project.sealed_by_forger(&forge_record(
                3,
                &spur_engine::store::seal::chain_value(first.as_bytes()),
                &recorded,
            )),
        };
        let out = run(
            &project,
            &format!(
                "{}      - kind: shell\n        options:\n          command: |\n            \
                 printf '%s\\n' '{forged}' >> \"$SPUR_TEST_PROTECTED/ledger/tasks/0804.jsonl\"\n",
                hand_write(HAND_PASS)
            ),
        );
        assert_eq!(out["outcome"], "failed", "{name}: {out}");
        assert_eq!(out["doneGate"]["decision"], "deny", "{name}: {out}");
        let message = out["doneGate"]["message"].as_str().unwrap();
        match chained {
            Chained::Sealed => assert!(
                message.contains("was written or edited outside spur"),
                "{name}: {message}"
            ),
            Chained::BySha256 => assert!(
                message
                    .contains("is broken at seq 1: it is unkeyed (no seal) after sealed records"),
                "{name}: {message}"
            ),
            Chained::Not => {
                assert!(message.contains("is broken at seq 1"), "{name}: {message}")
            }
        }
        assert_ne!(status(&project), "done", "{name}");
    }
}

#[test]
fn a_misspelt_done_gate_key_warns_with_did_you_mean() {
    let project = project().file(".spur/config.yaml", "doneGate:\n  externalVerdict: allow\n");
    let out = project.args(["verify"]).run().success();
    assert!(out
        .stderr()
        .contains("warning[spur::task::done-gate-config]: "));
    assert!(
        out.stderr().contains(
            ".spur/config.yaml: line 2, column 3: unknown key `externalVerdict` in `doneGate` (did you mean `externalVerdicts`?)"
        ),
        "{}",
        out.stderr()
    );
    // The setting it was meant to be keeps its default, and the deny says why.
    let out = run(&project, &hand_write(HAND_PASS));
    let message = assert_denied_as_external(&out);
    assert!(
        message.contains("did you mean `externalVerdicts`?"),
        "{message}"
    );
    // A value that is neither allow nor deny is an error.
    project.file(".spur/config.yaml", "doneGate:\n  externalVerdicts: yes\n");
    let out = project.args(["verify"]).run().code(2);
    assert!(
        out.stderr()
            .contains("`doneGate.externalVerdicts` must be `allow` or `deny`, not `yes`"),
        "{}",
        out.stderr()
    );
}
