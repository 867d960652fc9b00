//! Scheduling overhead of `run_gates`: 200 trivial gates (`true`) against the same 200
//! commands spawned one after another by a shell. Run with `cargo bench --bench verify`.

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use spur_process::ProcessSpec;

#[path = "common/verify_gates.rs"]
mod verify_gates;
use verify_gates::{forget_ledger, project, sh_loop, verify, GATES};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("verify_200_true_gates");
    group.sample_size(10);
    group.bench_function("sh_sequential_200x_sh_c_true", |b| {
        b.iter(sh_loop);
    });
    // The process execution alone (spur_process, as every gate uses it), to tell
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
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
