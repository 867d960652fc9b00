//! Every counterexample a property test or a fuzz target ever found, kept by name so it is
//! searched for again on every run (book/src/guarantees.md lists them).

use spur_engine::verdict::{aggregate, parse_artifact, ArtifactOutcome};

fn reparse(text: &[u8]) -> spur_engine::verdict::Artifact {
    match parse_artifact(text) {
        ArtifactOutcome::Valid(artifact) => artifact,
        other => panic!("expected a valid artifact, got {other:?}"),
    }
}

/// fuzz target `verdict`, 2026-11-29: a large float in the free-form `source` changed by
/// one ulp each time the artifact was rewritten (serde_json parsed floats best-effort), so
/// the canonical JSON did not read back as the same artifact.
#[test]
fn fuzz_verdict_a_float_in_source_survives_rewriting_exactly() {
    let text = br#"{"wbs":"0592","verdict":"PASS",
        "requirements":[{"id":"R1","status":"MET","evidence":"src/lib.rs:1"}],
        "source":{"verdict":111111111111111111111111.0,"n":0.30000000000000004,"m":1e-7}}"#;
    let first = reparse(text);
    let second = reparse(first.to_json().as_bytes());
    assert_eq!(second, first);
    assert_eq!(aggregate(&second), aggregate(&first));
}

/// property `journal`, 2026-12-02 (keyed chains): a letter of the last journal line's `mac`
/// turned to upper case (byte ^ 0x20) was not refused. The MAC was compared as the bytes
/// its hex decodes to, in either case, and no later line names it. A seal is now lowercase
/// hex as spur writes it, or no seal; the same holds for the task ledger.
#[test]
fn journal_a_mac_spelt_in_upper_case_is_an_edit() {
    use crate::run_harness::Project;
    use spur_engine::done_gate::write_verdict;
    use spur_engine::store::data_lock::DataLock;
    use spur_engine::store::task_ledger::{self, VerdictWriter};
    use spur_engine::wbs::Wbs;

    /// The first lowercase letter of the `mac` of `line`, turned to upper case.
    fn upper_mac(line: &str) -> String {
        let at = line.rfind(r#""mac":""#).expect("a sealed line") + 7;
        let i = at
            + line[at..]
                .find(|c: char| c.is_ascii_lowercase())
                .expect("a hex letter");
        let mut edited = line.to_owned();
        edited.replace_range(i..=i, &line[i..=i].to_ascii_uppercase());
        edited
    }
    fn edit_last_line(path: &std::path::Path) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let last = lines.pop().unwrap();
        lines.push(upper_mac(&last));
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    let project = Project::new();
    let checked = project
        .checked(
            "name: hold\ninitialState: hold\nterminalStates: [end]\nstates:\n  - {id: hold, pause: true}\n  - {id: end}\ntransitions: [{from: hold, to: end}]\n",
        )
        .unwrap();
    let paused = project.run(&checked, &[], None).unwrap();
    edit_last_line(&project.journal_path(&paused.run_id));
    let refused = project.resume(&checked, &paused.run_id);
    assert!(refused.is_err(), "resumed an edited journal: {refused:?}");

    let wbs = Wbs::parse("T1").unwrap();
    let state = project.state_dir();
    let lock = DataLock::acquire(&state, &wbs).unwrap();
    write_verdict(&lock, &state, b"{}", VerdictWriter::TaskVerdict, None).unwrap();
    edit_last_line(&state.task_ledger_path(&wbs));
    let ledger = task_ledger::read(&state, &wbs).unwrap();
    assert!(ledger.intact().is_err(), "an edited ledger line was taken");
}
