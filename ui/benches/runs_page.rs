//! The runs page over 1,000 runs: what `GET /` does — every journal of the state directory
//! read and checked (`list_runs`), then the page rendered — and the rendering alone. Goal:
//! ≤ 200 ms for the whole page.
//!
//! Run: `cargo bench -p spur-ui --bench runs_page`.

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use spur_engine::pipeline::{load, CheckedPipeline};
use spur_engine::run::runs_list::list_runs;
use spur_engine::run::{self, Durability, RunSettings, SilentObserver};
use spur_engine::source::SourceFile;
use spur_engine::store::state_dir::StateDir;
use spur_ui::{render_runs_page, RunFilter};

const RUNS: usize = 1_000;

fn pipeline() -> CheckedPipeline {
    let text = "name: three-states\ninitialState: a\n\
         states: [{id: a}, {id: b}, {id: end}]\n\
         transitions:\n\
         \x20 - {from: a, to: b, guard: {kind: always}}\n\
         \x20 - {from: b, to: end, guard: {kind: always}}\n";
    let loaded = load(&SourceFile::new("three.yaml", text.to_owned())).expect("loads");
    CheckedPipeline::new(loaded).expect("checks").0
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = RunSettings {
        // The key of its chains beside the project, never in the home of who benches.
        state_dir: StateDir::at(dir.path().join(".spur"))
            .with_key_file(spur_engine::store::chain_key::KeyFile::at(
                dir.path().join("key"),
            ))
            .with_protected_dir(dir.path().join(".spur/protected")),
        durability: Durability::Unsafe,
        path_prefix: None,
        spur_bin: None,
        timeouts: Default::default(),
        http_allow: Default::default(),
        policy: spur_engine::policy::PolicySource::Project,
        run_socket: None,
        jq: spur_guards::jq::JqSandbox::in_process(),
    };
    let checked = pipeline();
    for _ in 0..RUNS {
        run::start(
            run::StartRequest {
                pipeline: &checked,
                pipeline_path: "three.yaml".into(),
                vars: Default::default(),
                force_done_reason: None,
            },
            &settings,
            &mut SilentObserver,
            &mut run::TaskDoneGate,
        )
        .expect("runs");
    }
    let state_dir = settings.state_dir.clone();
    assert_eq!(list_runs(&state_dir).len(), RUNS);
    let now = jiff::Timestamp::now();
    let filter = RunFilter::default();
    let mut group = c.benchmark_group("runs_page_1000_runs");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("read_journals_and_render", |b| {
        b.iter(|| render_runs_page(&list_runs(&state_dir), &filter, now).len())
    });
    let runs = list_runs(&state_dir);
    group.bench_function("render_only", |b| {
        b.iter(|| render_runs_page(&runs, &filter, now).len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
