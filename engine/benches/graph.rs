//! TransitionGraph: building it and running every analysis grows linearly with states +
//! transitions. Pipelines of 100, 1 000 and 10 000 states, each state with three transitions
//! (a shell guard forward, a jq guard back, an unconditional one to `failed`).

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use spur_engine::graph::{to_dot, TransitionGraph};
use spur_engine::pipeline::{
    Guard, OnError, OptionValue, Options, Pipeline, State, Transition, DEFAULT_ITERATION_BOUND,
};
use spur_engine::source::{Located, SourceFile, Span};

fn loc<T>(value: T) -> Located<T> {
    Located::new(value, Span::default())
}

fn guard(kind: &str, key: &str, value: &str) -> Option<Guard> {
    let options = Options {
        entries: vec![(
            loc(key.to_owned()),
            OptionValue::String(loc(value.to_owned())),
        )],
        span: Span::default(),
    };
    Some(Guard::new(loc(kind.to_owned()), options, Span::default()))
}

fn pipeline(n: usize) -> Pipeline {
    let id = |i: usize| format!("s{i}");
    let mut states: Vec<State> = (0..n)
        .map(id)
        .chain(["done".to_owned(), "failed".to_owned()])
        .map(|name| State {
            id: loc(name),
            description: None,
            pause: false,
            on_enter: Vec::new(),
            on_exit: Vec::new(),
            span: Span::default(),
        })
        .collect();
    states.shrink_to_fit();
    let transition = |from: String, to: String, guard: Option<Guard>| Transition {
        from: loc(from),
        to: loc(to),
        description: None,
        trigger: None,
        guard,
        terminal_reason: None,
        span: Span::default(),
    };
    let mut transitions = Vec::with_capacity(3 * n);
    for i in 0..n {
        let next = if i + 1 < n {
            id(i + 1)
        } else {
            "done".to_owned()
        };
        transitions.push(transition(
            id(i),
            next,
            guard("shell", "command", "test -f ok"),
        ));
        transitions.push(transition(
            id(i),
            id(i.saturating_sub(1)),
            guard("jq", "expr", ".x"),
        ));
        transitions.push(transition(id(i), "failed".to_owned(), None));
    }
    Pipeline {
        source: SourceFile::new("bench.yaml", ""),
        dialect: Default::default(),
        name: loc("bench".to_owned()),
        version: None,
        description: None,
        initial_state: loc("s0".to_owned()),
        terminal_states: vec![loc("done".to_owned()), loc("failed".to_owned())],
        failure_states: vec![loc("failed".to_owned())],
        iteration_bound: loc(DEFAULT_ITERATION_BOUND),
        default_on_error: loc(OnError::Fail),
        vars: Vec::new(),
        env_allow: Vec::new(),
        secrets: Vec::new(),
        states,
        transitions,
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph");
    for n in [100, 1_000, 10_000] {
        let p = pipeline(n);
        group.bench_with_input(BenchmarkId::new("new", n), &p, |b, p| {
            b.iter(|| TransitionGraph::new(p))
        });
        let g = TransitionGraph::new(&p);
        group.bench_with_input(BenchmarkId::new("analyses", n), &g, |b, g| {
            b.iter(|| {
                (
                    g.unreachable_states(),
                    g.states_that_cannot_terminate(),
                    g.cycles(),
                    g.shadowed_transitions(),
                )
            })
        });
        group.bench_with_input(BenchmarkId::new("to_dot", n), &(&p, &g), |b, (p, g)| {
            b.iter(|| to_dot(p, g))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
