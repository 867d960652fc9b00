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
