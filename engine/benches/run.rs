//! Per-transition overhead of the runner: a 5,000-transition loop (a → b → a …, `always`
//! guards, no actions) run to its iteration bound, with the journal's fsync on and off.
//! Each transition journals guard-evaluated + transition + state-entered; with fsync on,
//! the transition record is fsync'd (one fsync per transition, the physical floor).
//!
//! Run: `cargo bench -p spur-engine --bench run`; per-transition = reported time / 5,000.

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use spur_engine::pipeline::{load, CheckedPipeline};
use spur_engine::run::{self, Durability, RunSettings, SilentObserver};
use spur_engine::source::SourceFile;
use spur_engine::store::state_dir::StateDir;

const TRANSITIONS: u32 = 5_000;

fn pipeline() -> CheckedPipeline {
    let text = format!(
        "name: loop\ninitialState: a\niterationBound: {TRANSITIONS}\n\
         states: [{{id: a}}, {{id: b}}, {{id: end}}]\n\
         transitions:\n\
         \x20 - {{from: a, to: b, guard: {{kind: always}}}}\n\
         \x20 - {{from: b, to: a, guard: {{kind: always}}}}\n\
         \x20 - {{from: b, to: end, guard: {{kind: never}}}}\n"
    );
    let loaded = load(&SourceFile::new("loop.yaml", text)).expect("loads");
    CheckedPipeline::new(loaded).expect("checks").0
}

/// One whole run; returns the transitions it took.
fn run_once(checked: &CheckedPipeline, settings: &RunSettings) -> u32 {
    let outcome = run::start(
        run::StartRequest {
            pipeline: checked,
            pipeline_path: "loop.yaml".into(),
            vars: Default::default(),
            force_done_reason: None,
        },
        settings,
        &mut SilentObserver,
        &mut run::TaskDoneGate,
    )
    .expect("runs");
    outcome.iterations
}

fn bench(c: &mut Criterion) {
    let checked = pipeline();
    let mut group = c.benchmark_group("run_5000_transitions");
    for (name, durability, samples, time) in [
        ("fsync_off", Durability::Unsafe, 20, 10),
        ("fsync_on", Durability::Fsync, 10, 60),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let settings = RunSettings {
            // The key of its chains beside the project, never in the home of who benches.
            state_dir: StateDir::at(dir.path().join(".spur"))
                .with_key_file(spur_engine::store::chain_key::KeyFile::at(
                    dir.path().join("key"),
                ))
                .with_protected_dir(dir.path().join(".spur/protected")),
            durability,
            path_prefix: None,
            spur_bin: None,
            timeouts: Default::default(),
            http_allow: Default::default(),
            policy: spur_engine::policy::PolicySource::Project,
            run_socket: None,
            jq: spur_guards::jq::JqSandbox::in_process(),
        };
        assert_eq!(run_once(&checked, &settings), TRANSITIONS);
        group.sample_size(samples);
        group.measurement_time(Duration::from_secs(time));
        group.bench_function(name, |b| b.iter(|| run_once(&checked, &settings)));
    }
    group.finish();
}

criterion_group!(benches, bench);
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
