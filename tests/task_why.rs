//! `spur task why WBS` (issue 22, item 4b): a read-only account of why a task is or is not
//! done — every check of the gate with its answer, the lifecycle and the structural check —
//! that changes nothing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{write_verdict_through_spur, Spur};

const TASK: &str = "docs/tasks/0700_ship-it.md";

const PASS: &str = r#"{
  "wbs": "0700",
  "verdict": "PASS",
  "requirements": [ { "id": "R1", "status": "MET", "evidence": "hello.txt:1" } ],
  "acceptanceCriteria": [
    { "id": "AC-1", "status": "MET", "evidenceType": "test", "evidence": "hello.txt:1" }
  ]
}"#;

fn project() -> Spur {
    let p = Spur::new();
    std::fs::create_dir_all(p.join(".spur")).unwrap();
    p.fixture("tests/fixtures/lifecycle/0700_ship-it.md", TASK);
    p.file(TASK, p.read(TASK).replace("status: wip", "status: testing"));
    p.file("hello.txt", "hello\n");
    p
}

/// Every file under `dir` with its bytes (and every directory, as an empty entry).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let key = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                out.insert(format!("{key}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(key, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn why(p: &Spur) -> (i32, Value) {
    let out = p.args(["task", "why", "0700", "--json"]).run();
    let json = serde_json::from_str(out.stdout()).unwrap_or(Value::Null);
    (out.exit_code().unwrap_or(-1), json)
}

fn check<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["gate"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or(&Value::Null)
}

#[test]
fn why_changes_nothing_in_the_state_dir_or_the_task_file() {
    let p = project();
    p.args(["task", "update", "0700", "testing"])
        .run()
        .success();
    write_verdict_through_spur(&p, "0700", PASS);
    let before = (tree(&p.join(".spur")), p.read(TASK));
    let (code, json) = why(&p);
    let human = p.args(["task", "why", "0700"]).run();
    assert_eq!((tree(&p.join(".spur")), p.read(TASK)), before);
    assert_eq!(human.exit_code(), Some(1));
    // Not done; the gate would allow it now: every check answers yes.
    assert_eq!((code, &json["done"]), (1, &Value::from(false)), "{json}");
    assert_eq!(json["gate"]["wouldAllow"], true, "{json}");
    assert_eq!(json["lifecycle"]["edgeToDone"], true, "{json}");
    assert_eq!(json["structure"]["ok"], true);
    assert_eq!(json["reasons"], serde_json::json!([]));
    for c in [
        "ledger",
        "verdict",
        "policy",
        "provenance",
        "completeness",
        "freshness",
    ] {
        assert_eq!(check(&json, c)["ok"], true, "{c}: {json}");
    }
    // After the gate certifies it: done, exit 0.
    p.args(["task", "update", "0700", "done"]).run().success();
    let (code, json) = why(&p);
    assert_eq!((code, &json["done"]), (0, &Value::from(true)), "{json}");
}

#[test]
fn why_names_every_reason_not_only_the_first() {
    let p = project();
    p.file(TASK, p.read(TASK).replace("status: testing", "status: wip"));
    p.args(["task", "update", "0700", "wip"]).run().success();
    // A verdict written outside spur that lacks the AC-1 row, and a hand edit to done.
    p.file(
        ".spur/run/0700-verdict.json",
        r#"{ "wbs": "0700", "verdict": "PASS",
             "requirements": [ { "id": "R1", "status": "MET", "evidence": "hello.txt:1" } ],
             "acceptanceCriteria": [] }"#,
    );
    p.file(TASK, p.read(TASK).replace("status: wip", "status: done"));
    let before = (tree(&p.join(".spur")), p.read(TASK));
    let (code, json) = why(&p);
    assert_eq!((tree(&p.join(".spur")), p.read(TASK)), before);
    assert_eq!((code, &json["done"]), (1, &Value::from(false)));
    assert_eq!(json["gate"]["wouldAllow"], false);
    assert_eq!(check(&json, "verdict")["ok"], true, "{json}");
    assert_eq!(check(&json, "provenance")["ok"], false, "{json}");
    assert_eq!(check(&json, "completeness")["ok"], false, "{json}");
    assert!(
        check(&json, "completeness")["detail"]
            .as_str()
            .unwrap()
            .contains("AC-1"),
        "{json}"
    );
    assert_eq!(json["lifecycle"]["edgeToDone"], false);
    let reasons: Vec<&str> = json["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        reasons[0].starts_with("its task file says `status: done`"),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("no transition wip → done")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.starts_with("provenance:")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.starts_with("completeness:")),
        "{reasons:?}"
    );
    let human = p.args(["task", "why", "0700"]).run();
    insta::assert_snapshot!("why_human", p.redact(human.stdout()));
}

#[test]
fn why_of_a_bare_task_is_the_gate_alone_and_a_bad_wbs_is_usage() {
    let p = Spur::new();
    std::fs::create_dir_all(p.join(".spur")).unwrap();
    let (code, json) = why(&p.clone());
    assert_eq!(code, 1);
    assert_eq!(json["lifecycle"], Value::Null);
    assert_eq!(json["gate"]["effectiveVerdict"], "UNKNOWN");
    assert!(!p.exists(".spur/locks"), "no lock file was made");
    p.args(["task", "why", "../x"]).run().code(2);
}
