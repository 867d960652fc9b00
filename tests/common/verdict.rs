//! Writing a task's verdict artifact the way spur's own writers do, so that the task ledger
//! records it as spur's and the done gate's provenance check accepts it. (A test that puts
//! the file in place with `Spur::file` or `Spur::fixture` gets an artifact written outside
//! spur, which the gate denies by default.)

use super::Spur;

/// Make `artifact` (JSON text) task `wbs`'s verdict artifact through spur: `spur verify --wbs
/// W` creates an artifact (its merge is one of spur's writers; it runs whatever gates the
/// project configures), then a `json.update` run replaces it with `artifact` (another
/// writer, which records the write because what it read was spur's). The artifact ends
/// pretty-printed, not byte for byte `artifact`.
pub fn write_verdict_through_spur(project: &Spur, wbs: &str, artifact: &str) {
    write_verdict_through_spur_in(project, ".spur", wbs, artifact);
}

/// [`write_verdict_through_spur`] with the state directory `state_dir` (relative to the
/// project).
pub fn write_verdict_through_spur_in(project: &Spur, state_dir: &str, wbs: &str, artifact: &str) {
    let path = format!("{state_dir}/run/{wbs}-verdict.json");
    // Verify's merge into an artifact spur did not write is not recorded: start afresh.
    let _ = std::fs::remove_file(project.join(&path));
    let expr: String = artifact
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect();
    project.file(
        ".spur-test/write-verdict.yaml",
        format!(
            "name: write-verdict\ninitialState: write\nterminalStates: [written]\n\
             states:\n  - id: write\n    onEnter:\n      - kind: json.update\n        options:\n\
             \x20         path: {path}\n          expr: |\n{expr}  - id: written\n\
             transitions: [{{from: write, to: written}}]\n"
        ),
    );
    // After the pipeline file is written: verify records the tree it ran at, and the done
    // gate holds the task to it (only the state dir may change after).
    project
        .args(["verify", "--state-dir", state_dir, "--wbs", wbs])
        .run();
    project
        .args([
            "run",
            ".spur-test/write-verdict.yaml",
            "--state-dir",
            state_dir,
        ])
        .run()
        .success();
}

/// [`write_verdict_through_spur`] with a repository file (e.g. `examples/verdicts/pass.json`).
pub fn fixture_verdict_through_spur(project: &Spur, wbs: &str, repo_rel: &str) {
    fixture_verdict_through_spur_in(project, ".spur", wbs, repo_rel);
}

/// [`fixture_verdict_through_spur`] with the state directory `state_dir`.
pub fn fixture_verdict_through_spur_in(project: &Spur, state_dir: &str, wbs: &str, repo_rel: &str) {
    let text = std::fs::read_to_string(super::repo_path(repo_rel)).expect("read fixture");
    write_verdict_through_spur_in(project, state_dir, wbs, &text);
}
