//! `spur check` (and its alias `spur workflow validate`): every finding with its file, line,
//! column and underlined span, a stable code and help; JSON output; exit codes.

use crate::common::{repo_path, Project};

/// Copy `examples/<rel>` into a fresh project under its file name.
fn project_with(rel: &str) -> (Project, String) {
    let project = Project::new();
    let name = rel.rsplit('/').next().unwrap().to_owned();
    let text = std::fs::read(repo_path(&format!("examples/{rel}"))).unwrap();
    project.file(&name, text);
    (project, name)
}

/// Run `spur check FILE` and return (exit code, stderr).
fn check_human(rel: &str) -> (i32, String) {
    let (project, name) = project_with(rel);
    let out = project.spur().args(["check", &name]).output().unwrap();
    assert!(out.stdout.is_empty(), "human output goes to stderr");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn check_json(rel: &str) -> (i32, serde_json::Value) {
    let (project, name) = project_with(rel);
    let out = project
        .spur()
        .args(["check", "--format", "json", &name])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    (out.status.code().unwrap(), json)
}

fn codes(json: &serde_json::Value) -> Vec<String> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn real_pipelines_check_without_errors() {
    for name in [
        "task-pipeline.yaml",
        "basic.yaml",
        "feature-verification.yaml",
        "decision-routing-example.yaml",
        "planning-pipeline.yaml",
    ] {
        let (code, json) = check_json(&format!("corpus/{name}"));
        let errors: Vec<_> = json
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        assert_eq!(code, 0, "{name}");
    }
}

#[test]
fn task_pipeline_reports_the_plugin_action_and_the_jq_rewrite() {
    let (code, json) = check_json("corpus/task-pipeline.yaml");
    assert_eq!(code, 0);
    assert_eq!(
        codes(&json),
        [
            "spur::check::unknown-action-kind",
            "spur::check::shell-jq-guard"
        ]
    );
    assert!(json[0]["message"]
        .as_str()
        .unwrap()
        .contains("doctor.probe"));
}

#[test]
fn the_book_example_pipeline_is_clean() {
    let (code, stderr) = check_human("review-loop.yaml");
    assert_eq!((code, stderr.as_str()), (0, "review-loop.yaml: ok\n"));
}

#[test]
fn clean_pipeline_prints_ok_summary() {
    let (code, stderr) = check_human("corpus/basic.yaml");
    assert_eq!(code, 0);
    assert_eq!(stderr, "basic.yaml: ok\n");
}

#[test]
fn mistyped_target_points_at_the_word_and_suggests_the_state() {
    let (code, stderr) = check_human("broken/mistyped-target.yaml");
    assert_eq!(code, 1);
    assert!(stderr.contains("mistyped-target.yaml:12:9"), "{stderr}");
    assert!(stderr.contains("did you mean `record`?"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/mistyped-target.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn unknown_keys_are_errors_with_did_you_mean() {
    let (code, stderr) = check_human("broken/unknown-key.yaml");
    assert_eq!(code, 1);
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/unknown-key.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn bad_initial_state_suggests_the_declared_one() {
    let (code, stderr) = check_human("broken/bad-initial-state.yaml");
    assert_eq!(code, 1);
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/bad-initial-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn duplicate_keys_show_both_places() {
    let (code, stderr) = check_human("broken/duplicate-key.yaml");
    assert_eq!(code, 1);
    assert!(stderr.contains("first declared here"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/duplicate-key.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn duplicate_state_ids_show_both_places() {
    let (code, stderr) = check_human("broken/duplicate-state.yaml");
    assert_eq!(code, 1);
    assert!(stderr.contains("first declared here"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/duplicate-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn undefined_template_names_are_reported_at_the_placeholder() {
    let (code, stderr) = check_human("broken/undefined-var.yaml");
    assert_eq!(code, 1);
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/undefined-var.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn jq_compile_errors_point_inside_the_expression() {
    let (code, stderr) = check_human("broken/bad-jq.yaml");
    assert_eq!(code, 1);
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/bad-jq.yaml");
    // `.status ==)`: the `)` sits at column 64 of line 18.
    assert_eq!(
        (json[0]["line"].as_u64(), json[0]["column"].as_u64()),
        (Some(18), Some(64))
    );
    insta::assert_json_snapshot!(json);
}

#[test]
fn trap_states_are_errors() {
    let (code, stderr) = check_human("broken/trap-state.yaml");
    assert_eq!(code, 1);
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/trap-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn every_other_finding_has_its_own_code() {
    let (code, json) = check_json("broken/many-findings.yaml");
    assert_eq!(code, 1);
    insta::assert_json_snapshot!(json);
    let (_, stderr) = check_human("broken/many-findings.yaml");
    insta::assert_snapshot!(stderr);
}

#[test]
fn transition_flow_is_rejected_as_unsupported_with_exit_2() {
    let (code, stderr) = check_human("broken/transition-flow.yaml");
    assert_eq!(code, 2);
    insta::assert_snapshot!(stderr);
    let (code, json) = check_json("broken/transition-flow.yaml");
    assert_eq!(code, 2);
    assert_eq!(codes(&json), ["spur::load::unsupported-kind"]);
}

#[test]
fn warnings_pass_unless_denied() {
    let (code, stderr) = check_human("broken/warnings-only.yaml");
    assert_eq!(code, 0, "{stderr}");
    let (project, name) = project_with("broken/warnings-only.yaml");
    project
        .spur()
        .args(["check", "--deny-warnings", &name])
        .assert()
        .code(1);
}

#[test]
fn workflow_validate_is_an_alias_of_check() {
    let (project, name) = project_with("broken/mistyped-target.yaml");
    let check = project.spur().args(["check", &name]).output().unwrap();
    let validate = project
        .spur()
        .args(["workflow", "validate", &name])
        .output()
        .unwrap();
    assert_eq!(validate.status.code(), Some(1));
    assert_eq!(check.stderr, validate.stderr);
}

#[test]
fn checks_several_files_with_one_summary_line_each() {
    let project = Project::new();
    for rel in ["corpus/basic.yaml", "broken/trap-state.yaml"] {
        let name = rel.rsplit('/').next().unwrap();
        project.file(
            name,
            std::fs::read(repo_path(&format!("examples/{rel}"))).unwrap(),
        );
    }
    let out = project
        .spur()
        .args(["check", "basic.yaml", "trap-state.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("basic.yaml: ok\n"), "{stderr}");
    assert!(stderr.contains("trap-state.yaml: 2 errors\n"), "{stderr}");
}

#[test]
fn a_missing_file_is_exit_2_and_the_others_are_still_checked() {
    let (project, name) = project_with("corpus/basic.yaml");
    let out = project
        .spur()
        .args(["check", "--format", "json", "nope.yaml", &name])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(codes(&json), ["spur::load::unreadable"]);
    assert_eq!(json[0]["file"], "nope.yaml");
}

#[test]
fn schema_is_json_schema_2020_12_naming_every_top_level_key() {
    let project = Project::new();
    let out = project.spur().arg("schema").output().unwrap();
    assert!(out.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let mut keys: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut accepted = spur_engine::pipeline::load::TOP_LEVEL_KEYS.to_vec();
    accepted.sort_unstable();
    assert_eq!(keys, accepted);
}
