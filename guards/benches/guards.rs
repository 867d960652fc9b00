//! Guard costs:
//! - a native jq guard (in a jq worker process, as spur runs it; and in process) vs the same
//!   check as a shell guard calling jq; compiling a filter (jaq's library parsed once);
//! - a shell guard through `process::run` vs spawning `sh -c true` with std directly
//!   (target ≤ 1.15×).
//!
//! Run: `cargo bench -p spur-guards --bench guards`. The shell-with-jq case uses the first
//! `jq` on PATH (a system jq when installed, else put spur's shim first on PATH).

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use spur_guards::jq::{JqLimits, JqProgram, JqSandbox};
use spur_guards::{jq_guard_passes, shell_guard};

fn jq_guards(c: &mut Criterion) {
    let verdict = json!({
        "wbs": "1.2",
        "verdict": "PASS",
        "requirements": [{"id": "R1", "status": "MET", "evidence": "src/a.rs:10"}],
    });
    let program = JqProgram::compile(r#".verdict == "PASS""#, &[]).expect("compiles");
    let limits = JqLimits::default();
    let worker = JqSandbox::worker(env!("CARGO_BIN_EXE_spur-guards-jq-worker"), []);
    let in_process = JqSandbox::in_process();
    assert!(jq_guard_passes(&worker, &program, &verdict, &[], &limits).passed);

    let mut group = c.benchmark_group("jq_guard");
    group.bench_function("compile", |b| {
        b.iter(|| JqProgram::compile(r#".verdict == "PASS""#, &[]))
    });
    group.bench_function("native_in_worker", |b| {
        b.iter(|| jq_guard_passes(&worker, &program, &verdict, &[], &limits))
    });
    group.bench_function("native_in_process", |b| {
        b.iter(|| jq_guard_passes(&in_process, &program, &verdict, &[], &limits))
    });

    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("f.json"), verdict.to_string()).expect("write verdict");
    let command = r#"test "$(jq -r .verdict f.json)" = PASS"#;
    assert!(
        shell_guard(command, &[], Some(dir.path()), None).passed,
        "needs jq on PATH"
    );
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("shell_calling_jq", |b| {
        b.iter(|| shell_guard(command, &[], Some(dir.path()), None))
    });
    group.finish();
}

fn spawn_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("std_command_sh_c_true", |b| {
        b.iter(|| {
            Command::new("sh")
                .args(["-c", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("sh runs")
        })
    });
    group.bench_function("shell_guard_true", |b| {
        b.iter(|| shell_guard("true", &[], None, None))
    });
    group.bench_function("shell_guard_true_with_timeout", |b| {
        b.iter(|| shell_guard("true", &[], None, Some(Duration::from_secs(30))))
    });
    group.finish();
}

criterion_group!(benches, jq_guards, spawn_cost);
criterion_main!(benches);
