//! `spur graph`: the transition graph as DOT, mermaid and JSON, and its simple paths.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use crate::common::{repo_path, Spur};

const REVIEW_LOOP: &str = "examples/graph/review-loop.yaml";

/// Run `spur graph ARGS…` and return (exit code, stdout, stderr redacted).
fn graph(project: &Spur, args: &[&str]) -> (i32, String, String) {
    let out = project.arg("graph").args(args).run();
    (
        out.exit_code().unwrap_or(-1),
        out.stdout().to_owned(),
        out.stderr_redacted(),
    )
}

/// `text` with mermaid entities (`#58;`) removed.
fn without_entities(text: &str) -> String {
    let mut rest = text;
    let mut out = String::new();
    while let Some(start) = rest.find('#') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(';') {
            rest = &after[digits + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn review_loop() -> String {
    repo_path(REVIEW_LOOP).display().to_string()
}

#[test]
fn draws_dot_by_default_with_distinct_terminals_and_ranked_guard_labels() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &[&review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
    insta::assert_snapshot!(stdout);
}

#[test]
fn draws_a_mermaid_state_diagram_with_escaped_labels() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &["--format", "mermaid", &review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    // Characters that end or break a mermaid label never appear raw after ` : `.
    for line in stdout.lines().filter(|l| l.contains(" : ")) {
        let label = without_entities(line.split_once(" : ").unwrap().1);
        for c in [':', ';', '"', '<', '>', '|', '[', ']', '#'] {
            assert!(!label.contains(c), "raw {c:?} in label: {line}");
        }
    }
    insta::assert_snapshot!(stdout);
}

#[test]
fn describes_the_graph_and_its_analysis_as_json() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &["--format", "json", &review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(document.get("paths").is_none(), "paths only with --paths");
    insta::assert_snapshot!(stdout);
}

#[test]
fn json_reports_cycles_dead_ends_and_unreachable_states() {
    let project = Spur::new().file(
        "trap.yaml",
        "name: trap\ninitialState: test\nterminalStates: [done]\nstates:\n  - id: test\n  - id: fix\n  - id: retest\n  - id: island\n  - id: done\ntransitions:\n  - from: test\n    to: done\n    guard: { kind: shell, options: { command: make test } }\n  - from: test\n    to: fix\n  - from: fix\n    to: retest\n  - from: retest\n    to: fix\n  - from: island\n    to: done\n",
    );
    let (code, stdout, stderr) = graph(&project, &["--format", "json", "trap.yaml"]);
    assert_eq!(
        code, 0,
        "the graph is drawn even when `spur check` would fail: {stderr}"
    );
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(document["cycles"], serde_json::json!([["fix", "retest"]]));
    assert_eq!(
        document["cannotTerminate"],
        serde_json::json!(["fix", "retest"])
    );
    assert_eq!(document["unreachable"], serde_json::json!(["island"]));
    assert_eq!(document["shadowed"], serde_json::json!([]));
}

#[test]
fn lists_simple_paths_to_each_terminal() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &["--paths", &review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
    insta::assert_snapshot!(stdout);
}

#[test]
fn a_path_limit_of_one_says_path_not_paths() {
    let project = Spur::new();
    let (code, _, stderr) = graph(&project, &["--paths", "--max-paths", "1", &review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "note: stopped after 1 path; more may exist (raise --max-paths to see more)\n"
    );
}

#[test]
fn says_when_the_path_list_stopped_early() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &["--paths", "--max-paths", "2", &review_loop()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "note: stopped after 2 paths; more may exist (raise --max-paths to see more)\n"
    );
    insta::assert_snapshot!(stdout);
}

#[test]
fn puts_paths_in_the_json_document_with_the_truncation_flag() {
    let project = Spur::new();
    let (code, stdout, _) = graph(
        &project,
        &[
            "--format",
            "json",
            "--paths",
            "--max-paths",
            "1",
            &review_loop(),
        ],
    );
    assert_eq!(code, 0);
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!(document["paths"], @r#"
    {
      "limit": 1,
      "paths": [
        [
          "precheck",
          "implement",
          "review",
          "approve",
          "done"
        ]
      ],
      "truncated": true
    }
    "#);

    let (_, stdout, _) = graph(&project, &["--format", "json", "--paths", &review_loop()]);
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(document["paths"]["truncated"], false);
    assert_eq!(document["paths"]["paths"].as_array().unwrap().len(), 3);
}

#[test]
fn refuses_to_draw_paths_as_dot_or_mermaid() {
    let project = Spur::new();
    for format in ["dot", "mermaid"] {
        let (code, stdout, stderr) =
            graph(&project, &["--paths", "--format", format, &review_loop()]);
        assert_eq!(code, 2);
        assert_eq!(stdout, "");
        assert!(stderr.contains("spur::graph::paths-format"), "{stderr}");
    }
}

#[test]
fn a_pipeline_with_load_errors_is_not_drawn() {
    let project = Spur::new();
    project.file(
        "p.yaml",
        "name: p\ninitialState: a\nstates:\n  - id: a\n    pause: maybe\ntransitions: []\n",
    );
    let (code, stdout, stderr) = graph(&project, &["p.yaml"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("pause"),
        "the loader's error is shown: {stderr}"
    );
    assert!(
        stderr.contains("spur::graph::invalid-pipeline") && stderr.contains("p.yaml"),
        "{stderr}"
    );
}

#[test]
fn an_unreadable_pipeline_is_a_usage_error() {
    let project = Spur::new();
    let (code, stdout, stderr) = graph(&project, &["missing.yaml"]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert!(stderr.contains("spur::load::unreadable"), "{stderr}");
}

#[test]
fn transitions_to_unknown_states_are_left_out_with_a_note() {
    let project = Spur::new();
    project.file(
        "p.yaml",
        "name: p\ninitialState: a\nstates:\n  - id: a\n  - id: b\ntransitions:\n  - from: a\n    to: b\n  - from: a\n    to: ghost\n",
    );
    let (code, stdout, stderr) = graph(&project, &["p.yaml"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("s0 -> s1"), "{stdout}");
    assert!(!stdout.contains("ghost"), "{stdout}");
    assert_eq!(
        stderr,
        "note: transition 1 (a → ghost) is not drawn: there is no state `ghost` (see `spur check`)\n"
    );
}

#[test]
fn an_unknown_initial_state_draws_no_start_and_lists_no_paths() {
    let project = Spur::new();
    project.file(
        "p.yaml",
        "name: p\ninitialState: nowhere\nstates:\n  - id: a\n  - id: b\ntransitions:\n  - from: a\n    to: b\n",
    );
    let (code, stdout, stderr) = graph(&project, &["p.yaml"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("start"), "{stdout}");
    let (code, stdout, _) = graph(&project, &["--paths", "p.yaml"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "p: no paths: the initial state `nowhere` does not exist\n"
    );
}

/// Every pipeline in `examples/` (YAML files with top-level `initialState:` and `states:`,
/// outside `examples/broken/` and folders named `invalid…`, which hold deliberately wrong
/// files) renders in every format, and Graphviz accepts the DOT
/// when `dot` is installed.
#[test]
fn renders_every_pipeline_in_examples() {
    let mut pipelines = Vec::new();
    collect_pipelines(&repo_path("examples"), &mut pipelines);
    pipelines.sort();
    let corpus = pipelines
        .iter()
        .filter(|p| p.starts_with(repo_path("examples/corpus")))
        .count();
    assert_eq!(corpus, 15, "the 15 corpus pipelines are in examples/corpus");

    let dot = Process::new("dot").arg("-V").output().is_ok();
    if !dot {
        println!("note: graphviz `dot` not installed; DOT output is not fed to `dot -Tsvg`");
    }
    let project = Spur::new();
    for pipeline in &pipelines {
        let path = pipeline.display().to_string();
        for format in ["dot", "mermaid", "json"] {
            let (code, stdout, stderr) = graph(&project, &["--format", format, &path]);
            assert_eq!(code, 0, "{path} as {format}: {stderr}");
            assert!(!stdout.is_empty(), "{path} as {format}");
            if format == "json" {
                serde_json::from_str::<serde_json::Value>(&stdout).unwrap();
            }
            if format == "dot" && dot {
                assert_dot_accepts(&path, &stdout);
            }
        }
        let (code, stdout, stderr) = graph(&project, &["--paths", &path]);
        assert_eq!(code, 0, "{path} --paths: {stderr}");
        assert!(stdout.contains("simple path"), "{path}: {stdout}");
    }
}

fn assert_dot_accepts(path: &str, dot_text: &str) {
    use std::io::Write;
    let mut child = Process::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot_text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "dot rejects the DOT of {path}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("<svg"));
}

fn collect_pipelines(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with("invalid") || name == "broken") {
                collect_pipelines(&path, out);
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let top_level = |key: &str| text.lines().any(|l| l.starts_with(key));
            if top_level("initialState:") && top_level("states:") {
                out.push(path);
            }
        }
    }
}

/// `spur graph RUN --format svg|dot`: the run's pipeline with the transitions it took and
/// the state it is in marked; a state id with markup is escaped.
#[test]
fn a_run_is_drawn_over_its_pipeline_with_its_path_and_current_state() {
    let project = Spur::new().file(
        "p.yaml",
        "name: drawn\ninitialState: a\n\
         states: [{id: a}, {id: '<b>', pause: true}, {id: end}, {id: other}]\n\
         transitions:\n\
         \x20 - {from: a, to: '<b>', guard: {kind: always}}\n\
         \x20 - {from: '<b>', to: end, guard: {kind: always}}\n\
         \x20 - {from: a, to: other, guard: {kind: never}}\n",
    );
    let paused = project
        .args(["run", "p.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let id = paused["runId"].as_str().unwrap_or_default().to_owned();

    let (code, svg, stderr) = graph(&project, &[&id, "--format", "svg"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(
        svg.contains("<g class=\"state pause visited current\" data-state=\"&lt;b&gt;\">"),
        "{svg}"
    );
    assert!(!svg.contains("<b>"), "the id is escaped: {svg}");
    assert!(
        svg.contains("<g class=\"edge taken\" data-transition=\"0\">"),
        "{svg}"
    );
    assert!(
        svg.contains("<g class=\"edge shadowed\" data-transition=\"2\">"),
        "not taken, and never can be: {svg}"
    );
    assert!(svg.contains("data-state=\"other\""), "{svg}");
    assert!(!svg.contains("class=\"state terminal success visited\" data-state=\"other\""));

    let (code, dot, _) = graph(&project, &["latest"]);
    assert_eq!(code, 0);
    assert!(
        dot.contains("s0 -> s1 [label=\"1. always\", color=\"#1565c0\", penwidth=2.5];"),
        "{dot}"
    );
    assert!(dot.contains("penwidth=4, color=\"#ef6c00\"]"), "{dot}");

    // A pipeline file is drawn without a path; a name that is neither a file nor a run
    // says the file is missing.
    let (code, plain, _) = graph(&project, &["p.yaml", "--format", "svg"]);
    assert_eq!(code, 0);
    assert!(
        !plain.contains(" current\"") && !plain.contains("edge taken"),
        "{plain}"
    );
    let (code, _, stderr) = graph(&project, &["nothing-here.yaml"]);
    assert_eq!(code, 2, "{stderr}");
}
