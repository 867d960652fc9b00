//! Parse + aggregate of a verdict artifact with 100,000 rows (target: ≤ 100 ms).

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::Duration;

use spur_engine::verdict::{aggregate, parse_artifact, ArtifactOutcome, Verdict};

/// 40,000 requirements, 40,000 acceptance criteria, 20,000 checks; all passing, so every
/// rule examines every row.
fn artifact_with_100k_rows() -> String {
    let mut text = String::from(r#"{"wbs":"0592","verdict":"PASS","requirements":["#);
    for i in 0..40_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":"R{i}","status":"MET","evidence":"src/module_{i}.rs:{i}"}}"#
        ));
    }
    text.push_str(r#"],"acceptanceCriteria":["#);
    for i in 0..40_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"scenario":"Scenario: behaviour {i}","status":"met","evidenceType":"test+static-ref","evidence":"tests/t_{i}.rs:1"}}"#
        ));
    }
    text.push_str(r#"],"checks":["#);
    for i in 0..20_000 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"name":"check-{i}","status":"pass","severity":"major","evidence":"ok"}}"#
        ));
    }
    text.push_str("]}");
    text
}

/// CPU time of this thread, which a loaded machine does not inflate the way it inflates
/// wall-clock time (the reference machine runs several builds at once).
fn thread_cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct we pass; no other memory is touched.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn parse_and_aggregate(text: &str) -> Verdict {
    match parse_artifact(black_box(text.as_bytes())) {
        ArtifactOutcome::Valid(artifact) => aggregate(&artifact).verdict,
        other => panic!("fixture must be valid: {:?}", other.kind()),
    }
}

fn bench(c: &mut Criterion) {
    let text = artifact_with_100k_rows();
    let runs = 30;
    let start = thread_cpu_time();
    for _ in 0..runs {
        black_box(parse_and_aggregate(&text));
    }
    let per_run = (thread_cpu_time() - start) / runs;
    eprintln!(
        "verdict_100k_rows/parse_and_aggregate: {:.1} ms thread CPU time per run ({} bytes, mean of {runs})",
        per_run.as_secs_f64() * 1000.0,
        text.len()
    );
    let mut group = c.benchmark_group("verdict_100k_rows");
    group.sample_size(20);
    group.bench_function("parse_and_aggregate", |b| {
        b.iter(|| parse_and_aggregate(&text))
    });
    let ArtifactOutcome::Valid(artifact) = parse_artifact(text.as_bytes()) else {
        panic!("fixture must be valid")
    };
    group.bench_function("aggregate_only", |b| {
        b.iter(|| aggregate(black_box(&artifact)).verdict)
    });
    group.finish();
}

criterion_group!(benches, bench);
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
