//! `spur check` (and its alias `spur workflow validate`): every finding with its file, line,
//! column and underlined span, a stable code and help; JSON output; exit codes.

use crate::common::{Output, Spur};

/// A project holding a copy of `examples/<rel>` under its file name, and that name.
fn project_with(rel: &str) -> (Spur, String) {
    let name = rel.rsplit('/').next().unwrap().to_owned();
    let project = Spur::new().fixture(&format!("examples/{rel}"), &name);
    (project, name)
}

/// `spur check FILE`: the human report goes to stderr, nothing to stdout.
fn check_human(rel: &str) -> Output {
    let (project, name) = project_with(rel);
    project.args(["check", &name]).run().stdout_is("")
}

/// `spur check --format json FILE`: (exit code, the findings).
fn check_json(rel: &str) -> (i32, serde_json::Value) {
    let (project, name) = project_with(rel);
    let out = project.args(["check", "--format", "json", &name]).run();
    (out.exit_code().expect("exited"), out.stdout_json())
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
fn task_pipeline_reports_the_jq_rewrite_and_knows_doctor_probe() {
    // `doctor.probe` is a built-in kind (with its options checked), not a plugin.
    let (code, json) = check_json("corpus/task-pipeline.yaml");
    assert_eq!(code, 0);
    assert_eq!(codes(&json), ["spur::check::shell-jq-guard"]);
    assert!(!json.to_string().contains("doctor.probe"));
}

#[test]
fn the_book_example_pipeline_is_clean() {
    check_human("review-loop.yaml")
        .success()
        .stderr_is("review-loop.yaml: ok\n");
}

#[test]
fn clean_pipeline_prints_ok_summary() {
    check_human("corpus/basic.yaml")
        .success()
        .stderr_is("basic.yaml: ok\n");
}

#[test]
fn mistyped_target_points_at_the_word_and_suggests_the_state() {
    let out = check_human("broken/mistyped-target.yaml").code(1);
    let stderr = out.stderr();
    assert!(stderr.contains("mistyped-target.yaml:12:9"), "{stderr}");
    assert!(stderr.contains("did you mean `record`?"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/mistyped-target.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn unknown_keys_are_errors_with_did_you_mean() {
    let out = check_human("broken/unknown-key.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/unknown-key.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn bad_initial_state_suggests_the_declared_one() {
    let out = check_human("broken/bad-initial-state.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/bad-initial-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn duplicate_keys_show_both_places() {
    let out = check_human("broken/duplicate-key.yaml").code(1);
    let stderr = out.stderr();
    assert!(stderr.contains("first declared here"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/duplicate-key.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn duplicate_state_ids_show_both_places() {
    let out = check_human("broken/duplicate-state.yaml").code(1);
    let stderr = out.stderr();
    assert!(stderr.contains("first declared here"), "{stderr}");
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/duplicate-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn undefined_template_names_are_reported_at_the_placeholder() {
    let out = check_human("broken/undefined-var.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/undefined-var.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn jq_compile_errors_point_inside_the_expression() {
    let out = check_human("broken/bad-jq.yaml").code(1);
    let stderr = out.stderr();
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
    let out = check_human("broken/trap-state.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (_, json) = check_json("broken/trap-state.yaml");
    insta::assert_json_snapshot!(json);
}

#[test]
fn every_other_finding_has_its_own_code() {
    let (code, json) = check_json("broken/many-findings.yaml");
    assert_eq!(code, 1);
    insta::assert_json_snapshot!(json);
    let out = check_human("broken/many-findings.yaml");
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
}

/// A transition-flow loads and is checked like any pipeline, with spans; `extensions` is an
/// error that points at plugins.
#[test]
fn transition_flow_is_checked_and_extensions_point_at_plugins() {
    let out = check_human("broken/transition-flow.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (code, json) = check_json("broken/transition-flow.yaml");
    assert_eq!(code, 1);
    assert_eq!(
        codes(&json),
        ["spur::check::unknown-key", "spur::check::extensions"]
    );
}

#[test]
fn warnings_pass_unless_denied() {
    check_human("broken/warnings-only.yaml").success();
    let (project, name) = project_with("broken/warnings-only.yaml");
    project
        .args(["check", "--deny-warnings", &name])
        .run()
        .code(1);
}

#[test]
fn workflow_validate_is_an_alias_of_check() {
    let (project, name) = project_with("broken/mistyped-target.yaml");
    let check = project.args(["check", &name]).run();
    let validate = project.args(["workflow", "validate", &name]).run().code(1);
    assert_eq!(check.stderr(), validate.stderr());
}

#[test]
fn checks_several_files_with_one_summary_line_each() {
    Spur::new()
        .fixture("examples/corpus/basic.yaml", "basic.yaml")
        .fixture("examples/broken/trap-state.yaml", "trap-state.yaml")
        .args(["check", "basic.yaml", "trap-state.yaml"])
        .run()
        .code(1)
        .stderr_contains("basic.yaml: ok\n")
        .stderr_contains("trap-state.yaml: 2 errors\n");
}

#[test]
fn a_missing_file_is_exit_2_and_the_others_are_still_checked() {
    let (project, name) = project_with("corpus/basic.yaml");
    let json = project
        .args(["check", "--format", "json", "nope.yaml", &name])
        .run()
        .code(2)
        .stdout_json();
    assert_eq!(codes(&json), ["spur::load::unreadable"]);
    assert_eq!(json[0]["file"], "nope.yaml");
}

#[test]
fn schema_is_json_schema_2020_12_naming_every_top_level_key() {
    let schema = Spur::new().arg("schema").run().success().stdout_json();
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

#[test]
fn literal_option_values_of_the_wrong_type_are_errors_before_the_run() {
    let out = check_human("broken/option-type.yaml").code(1);
    let stderr = out.stderr();
    insta::assert_snapshot!(stderr);
    let (code, json) = check_json("broken/option-type.yaml");
    assert_eq!(code, 1);
    // The two literals; the templated timeout is left to the run.
    assert_eq!(
        codes(&json),
        ["spur::check::option-type", "spur::check::option-type"]
    );
    assert_eq!(
        (json[0]["line"].as_u64(), json[1]["line"].as_u64()),
        (Some(14), Some(23))
    );
}
