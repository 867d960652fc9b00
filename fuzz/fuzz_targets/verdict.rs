//! Verdict parser + aggregation: any bytes parse to one of the four outcomes without a
//! panic; a valid artifact aggregates, its effective verdict is never better than the
//! stored or the computed one, and its canonical JSON reads back as the same artifact.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use spur_engine::verdict::{aggregate, parse_artifact, ArtifactOutcome, Evaluation, Verdict};

fuzz_target!(|data: &[u8]| {
    let outcome = parse_artifact(data);
    let evaluation = Evaluation::new(Path::new("fuzz-verdict.json"), outcome.clone(), Some("T1"));
    let ArtifactOutcome::Valid(artifact) = outcome else {
        assert_eq!(evaluation.effective, Verdict::Unknown);
        return;
    };
    let computed = aggregate(&artifact);
    assert!(evaluation.effective >= artifact.verdict);
    assert!(evaluation.effective >= computed.verdict);
    assert_eq!(evaluation.computed_verdict(), Some(computed.verdict));
    match parse_artifact(artifact.to_json().as_bytes()) {
        ArtifactOutcome::Valid(again) => {
            assert_eq!(again, artifact, "canonical JSON must read back the same");
            assert_eq!(aggregate(&again), computed);
        }
        other => panic!("canonical JSON of a valid artifact is {other:?}"),
    }
});
