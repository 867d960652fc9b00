//! Load + check of generated linear pipelines (1,000 and 5,000 states): the cost should
//! grow linearly with the pipeline. `minimal`: states with an id and unguarded transitions.
//! `rich`: each state runs a templated shell action and each transition has a templated
//! shell guard, as real pipelines do (about 230 bytes per state).

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use spur_engine::pipeline;
use spur_engine::source::SourceFile;

fn minimal_chain(states: usize) -> String {
    let mut yaml = String::from("name: chain\ninitialState: s0\nstates:\n");
    for i in 0..states {
        yaml.push_str(&format!("  - id: s{i}\n"));
    }
    yaml.push_str("transitions:\n");
    for i in 1..states {
        yaml.push_str(&format!("  - from: s{}\n    to: s{i}\n", i - 1));
    }
    yaml
}

fn rich_chain(states: usize) -> String {
    let mut yaml = String::from("name: chain\ninitialState: s0\nvars:\n  wbs: \"0001\"\nstates:\n");
    for i in 0..states {
        yaml.push_str(&format!(
            "  - id: s{i}\n    onEnter:\n      - kind: shell\n        options:\n          command: echo ${{vars.wbs}} step {i}\n"
        ));
    }
    yaml.push_str("transitions:\n");
    for i in 1..states {
        yaml.push_str(&format!(
            "  - from: s{}\n    to: s{i}\n    guard:\n      kind: shell\n      options:\n        command: test -f .spur/run/${{vars.wbs}}-{i}\n",
            i - 1
        ));
    }
    yaml
}

fn load_and_check(c: &mut Criterion) {
    let mut group = c.benchmark_group("load_check");
    for (shape, chain) in [
        ("minimal", minimal_chain as fn(usize) -> String),
        ("rich", rich_chain),
    ] {
        for states in [1_000usize, 5_000] {
            let source = SourceFile::new("chain.yaml", chain(states));
            group.throughput(Throughput::Elements(states as u64));
            group.bench_with_input(BenchmarkId::new(shape, states), &source, |b, source| {
                b.iter(|| {
                    let loaded = pipeline::load(source).expect("loads");
                    let diagnostics = pipeline::check(&loaded.pipeline);
                    assert!(diagnostics.is_empty() && loaded.diagnostics.is_empty());
                    diagnostics.len()
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, load_and_check);
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
