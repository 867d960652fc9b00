//! Scheduling overhead of `run_gates`: 200 trivial gates (`true`) against the same 200
//! commands spawned one after another by a shell. Run with `cargo bench --bench verify`.

use std::path::Path;
use std::process::Command;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use spur_engine::state_dir::StateDir;
use spur_engine::verify::{run_gates, VerifyRequest};
use spur_guards::process::ProcessSpec;

const GATES: usize = 200;

fn project(read_only: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = String::from("verify:\n  gates:\n");
    for i in 0..GATES {
        config.push_str(&format!(
            "    g{i:03}: {{command: 'true', readOnly: {read_only}}}\n"
        ));
    }
    std::fs::create_dir_all(dir.path().join(".spur")).expect("state dir");
    std::fs::write(dir.path().join(".spur/config.yaml"), config).expect("config");
    dir
}

fn verify(root: &Path) {
    let request = VerifyRequest::new(StateDir::at(root.join(".spur")));
    let outcome = run_gates(&request).expect("verify runs");
    assert!(outcome.passed && outcome.summary.pass == GATES);
}

fn forget_ledger(root: &Path) {
    // Each iteration starts from the same ledger size, as a real run would.
    let _ = std::fs::remove_file(root.join(".spur/run/_project-verdicts.jsonl"));
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("verify_200_true_gates");
    group.sample_size(10);
    group.bench_function("sh_sequential_200x_sh_c_true", |b| {
        b.iter(|| {
            let status = Command::new("sh")
                .args([
                    "-c",
                    "i=0; while [ $i -lt 200 ]; do sh -c true; i=$((i+1)); done",
                ])
                .status()
                .expect("sh");
            assert!(status.success());
        });
    });
    // The process execution alone (spur_guards::process, as every gate uses it), to tell
    // the cost of running a process from the cost of scheduling and recording a gate.
    group.bench_function("guards_process_200x_sh_c_true", |b| {
        b.iter(|| {
            for _ in 0..GATES {
                let outcome = ProcessSpec::shell("true")
                    .timeout(Duration::from_secs(60))
                    .run();
                assert!(outcome.success());
            }
        });
    });
    for (name, read_only) in [
        ("spur_writer_gates_sequential", false),
        ("spur_read_only_gates_parallel", true),
    ] {
        let dir = project(read_only);
        group.bench_function(name, |b| {
            b.iter_batched(
                || forget_ledger(dir.path()),
                |()| verify(dir.path()),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
