//! `spur verdict check`: every parse outcome, the aggregation rules through the binary,
//! and hostile artifacts — each a clear outcome and exit code, never a panic.

use crate::common::Spur;

/// Run `spur verdict check FILE --json [extra…]` in `project`; (exit code, JSON).
fn check_json(project: &Spur, file: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = project
        .args(["verdict", "check", file, "--json"])
        .args(extra)
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

/// A project with `examples/verdicts/<name>` as `verdict.json`.
fn with_fixture(name: &str) -> Spur {
    Spur::new().fixture(&format!("examples/verdicts/{name}"), "verdict.json")
}

#[test]
fn a_pass_artifact_exits_zero_with_the_full_json_shape() {
    let project = with_fixture("pass.json");
    let out = project
        .args([
            "verdict",
            "check",
            "verdict.json",
            "--wbs",
            "0592",
            "--json",
        ])
        .run()
        .success()
        .stderr_is("");
    // The raw document: one object, fields in the documented order.
    insta::assert_snapshot!(out.stdout());
}

#[test]
fn a_self_inconsistent_pass_is_fail_in_text_naming_rows_and_checks() {
    let project = with_fixture("self-inconsistent-pass.json");
    let out = project
        .args(["verdict", "check", "verdict.json"])
        .run()
        .code(1);
    insta::assert_snapshot!(format!(
        "--- stdout\n{}--- stderr\n{}",
        out.stdout(),
        out.stderr()
    ));
}

#[test]
fn fixtures_recompute_as_documented() {
    // (fixture, outcome, stored, computed, effective, exit)
    let cases = [
        ("pass.json", "valid", "PASS", "PASS", "PASS", 0),
        ("partial.json", "valid", "PARTIAL", "PARTIAL", "PARTIAL", 1),
        (
            "self-inconsistent-pass.json",
            "valid",
            "PASS",
            "FAIL",
            "FAIL",
            1,
        ),
        ("alias-rows.json", "valid", "PASS", "PASS", "PASS", 0),
        (
            "task-check-failed.json",
            "valid",
            "PASS",
            "PARTIAL",
            "PARTIAL",
            1,
        ),
    ];
    for (fixture, outcome, stored, computed, effective, exit) in cases {
        let project = with_fixture(fixture);
        let (code, json) = check_json(&project, "verdict.json", &[]);
        assert_eq!(code, exit, "{fixture}");
        assert_eq!(json["outcome"], outcome, "{fixture}");
        assert_eq!(json["stored"], stored, "{fixture}");
        assert_eq!(json["computed"], computed, "{fixture}");
        assert_eq!(json["effective"], effective, "{fixture}");
    }
}

#[test]
fn rejected_rows_make_one_bounded_l4_warning() {
    let project = with_fixture("rejected-rows.json");
    let (code, json) = check_json(&project, "verdict.json", &[]);
    assert_eq!(code, 1);
    insta::assert_json_snapshot!(json);
}

#[test]
fn another_tasks_artifact_is_unknown_with_wbs() {
    let project = with_fixture("pass.json");
    let (code, json) = check_json(&project, "verdict.json", &["--wbs", "0600"]);
    assert_eq!(code, 1);
    assert_eq!(json["effective"], "UNKNOWN");
    assert_eq!(json["warnings"][0]["code"], "verdict.wbs-mismatch");
}

#[test]
fn a_missing_artifact_is_missing_not_an_error() {
    let project = Spur::new();
    let (code, json) = check_json(&project, "nope.json", &["--wbs", "7"]);
    assert_eq!(code, 1);
    insta::assert_json_snapshot!(json);
}

#[test]
fn an_invalid_wbs_is_a_usage_error() {
    let project = with_fixture("pass.json");
    project
        .args(["verdict", "check", "verdict.json", "--wbs", "../x"])
        .run()
        .code(2)
        .stderr_contains("spur::usage::invalid-wbs");
}

#[test]
fn hostile_artifacts_get_a_clear_outcome() {
    let nested = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let wrong_types = r#"{"wbs": 5, "verdict": [], "requirements": [
        {"id": {}, "status": 1, "evidence": []},
        {"scenario": false, "status": null},
        {"id": "R3", "status": "MET", "evidenceType": "test"}],
      "acceptanceCriteria": [{"id": "A", "status": "MET", "evidenceType": 3}],
      "checks": [{"name": 1, "check": [], "id": null, "status": {}, "severity": 2}]}"#;
    let nan_like = r#"{"wbs": "T", "verdict": "NaN", "requirements": [
        {"id": "R1", "status": "Infinity", "evidence": "x"}],
      "checks": [{"name": "c", "status": "null", "severity": "undefined"}]}"#;
    // (case, contents, outcome, fragment of the reason)
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "truncated JSON",
            r#"{"wbs": "T", "verdict": "PA"#.into(),
            "malformed",
            "EOF",
        ),
        ("empty file", String::new(), "missing", "file is empty"),
        (
            "deeply nested arrays",
            nested,
            "malformed",
            "recursion limit",
        ),
        (
            "wrong types in every field",
            wrong_types.into(),
            "invalid",
            "`wbs` must be a non-empty string, found a number 5",
        ),
        (
            "NaN-like strings",
            nan_like.into(),
            "invalid",
            "`verdict` \"NaN\" is not PASS",
        ),
        ("a JSON null", "null".into(), "invalid", "root is null"),
    ];
    for (case, contents, outcome, fragment) in cases {
        let project = Spur::new();
        project.file("v.json", contents);
        let (code, json) = check_json(&project, "v.json", &[]);
        assert_eq!(code, 1, "{case}");
        assert_eq!(json["outcome"], outcome, "{case}: {json}");
        assert_eq!(json["effective"], "UNKNOWN", "{case}");
        let reason = json["reason"].as_str().unwrap();
        assert!(reason.contains(fragment), "{case}: {reason}");
        assert_eq!(
            json["warnings"][0]["code"], "L4.malformed-verdict-artifact",
            "{case}"
        );
    }
}

#[test]
fn wrong_types_are_all_named_in_the_rejection() {
    let project = Spur::new();
    project.file(
        "v.json",
        r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":{},"status":1}],
            "checks":[{"name":"c","status":"pass","severity":2}]}"#,
    );
    let (_, json) = check_json(&project, "v.json", &[]);
    let message = json["warnings"][0]["message"].as_str().unwrap();
    assert!(
        message.ends_with("rejected rows: 2; invalid fields: id, status, severity"),
        "{message}"
    );
}

#[test]
fn a_100_mb_artifact_is_refused_unread() {
    let project = Spur::new();
    let file = std::fs::File::create(project.join("big.json")).unwrap();
    file.set_len(100 * 1024 * 1024).unwrap();
    let (code, json) = check_json(&project, "big.json", &[]);
    assert_eq!(code, 1);
    assert_eq!(json["outcome"], "invalid");
    assert_eq!(
        json["reason"],
        "the artifact is 104857600 bytes, above the 64 MiB limit; it was not read"
    );
}

#[test]
fn a_directory_is_invalid_not_a_crash() {
    let project = Spur::new();
    std::fs::create_dir(project.join("dir.json")).unwrap();
    let (_, json) = check_json(&project, "dir.json", &[]);
    assert_eq!(json["outcome"], "invalid");
    assert_eq!(json["reason"], "the artifact path is not a regular file");
}
