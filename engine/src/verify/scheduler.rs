//! Runs gates in their topological order on a small pool of threads. A gate starts once
//! every gate it needs has finished, whatever they returned. A gate that may write
//! (`readOnly: false`) runs alone; read-only gates run side by side, at most `parallelism`
//! at once. Gates are taken in order, and a ready writer is a barrier: nothing after it
//! starts until it has run, so the order of side effects is the order of the config.

use std::num::NonZeroUsize;
use std::sync::{Condvar, Mutex, PoisonError};

use super::gate::Gate;

/// Run `run` once per gate (`gates` in topological order) and return the results in the
/// same order. Needs naming gates outside `gates` count as finished.
pub(crate) fn run_in_order<T: Send>(
    gates: &[Gate],
    parallelism: NonZeroUsize,
    run: &(dyn Fn(&Gate) -> T + Sync),
) -> Vec<T> {
    let board = Board {
        state: Mutex::new(State {
            phase: vec![Phase::Pending; gates.len()],
            running: 0,
            writer_running: false,
            results: (0..gates.len()).map(|_| None).collect(),
        }),
        changed: Condvar::new(),
    };
    // Writers run one at a time on one thread: a second worker only helps when some gate
    // may run beside another.
    let workers = if gates.iter().any(|g| g.read_only) {
        parallelism.get().min(gates.len()).max(1)
    } else {
        1
    };
    // The calling thread is one of the workers: a chain of writers runs on it with no
    // thread started at all.
    std::thread::scope(|scope| {
        for _ in 1..workers {
            // A worker that cannot be started leaves its gates to the others.
            let _ = std::thread::Builder::new().spawn_scoped(scope, || board.work(gates, run));
        }
        board.work(gates, run);
    });
    let state = board
        .state
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    state.results.into_iter().flatten().collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pending,
    Running,
    Finished,
}

struct State<T> {
    phase: Vec<Phase>,
    running: usize,
    writer_running: bool,
    results: Vec<Option<T>>,
}

struct Board<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
}

impl<T> Board<T> {
    fn work(&self, gates: &[Gate], run: &(dyn Fn(&Gate) -> T + Sync)) {
        let mut finished: Option<(usize, T)> = None;
        loop {
            let index = {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((i, result)) = finished.take() {
                    state.phase[i] = Phase::Finished;
                    state.running -= 1;
                    if !gates[i].read_only {
                        state.writer_running = false;
                    }
                    state.results[i] = Some(result);
                }
                loop {
                    if state.phase.iter().all(|p| *p != Phase::Pending) {
                        // Idle workers wait for work that will never come: release them.
                        self.changed.notify_all();
                        return;
                    }
                    if let Some(i) = next_startable(gates, &state) {
                        state.phase[i] = Phase::Running;
                        state.running += 1;
                        state.writer_running |= !gates[i].read_only;
                        // Wake one idle worker only when there is more to start now: a
                        // chain of writers then runs on one thread with no hand-offs.
                        if next_startable(gates, &state).is_some()
                            || state.phase.iter().all(|p| *p != Phase::Pending)
                        {
                            self.changed.notify_one();
                        }
                        break i;
                    }
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            finished = Some((index, run(&gates[index])));
        }
    }
}

/// The first pending gate whose needs are finished, if it may start now.
fn next_startable<T>(gates: &[Gate], state: &State<T>) -> Option<usize> {
    if state.writer_running {
        return None;
    }
    for (i, gate) in gates.iter().enumerate() {
        if state.phase[i] != Phase::Pending {
            continue;
        }
        let ready = gate.needs.iter().all(|need| {
            gates
                .iter()
                .position(|g| &g.name == need)
                .is_none_or(|j| state.phase[j] == Phase::Finished)
        });
        if !ready {
            continue;
        }
        if gate.read_only {
            return Some(i);
        }
        // A ready writer waits for the running gates to drain, and holds back every gate
        // after it.
        return (state.running == 0).then_some(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::source::Span;
    use crate::verify::gate::{GateCommand, GateSeverity};

    fn gate(name: &str, needs: &[&str], read_only: bool) -> Gate {
        Gate {
            name: name.into(),
            command: GateCommand::Shell("true".into()),
            needs: needs.iter().map(|n| (*n).to_owned()).collect(),
            timeout: Duration::from_secs(1),
            read_only,
            severity: GateSeverity::Blocker,
            enabled: true,
            expect_file: None,
            findings_file: None,
            span: Span::default(),
            needs_span: Span::default(),
        }
    }

    /// (start tick, finish tick, gates running when it started) per gate.
    fn record(gates: &[Gate], parallelism: usize) -> Vec<(String, usize, usize, usize)> {
        let tick = AtomicUsize::new(0);
        let running = AtomicUsize::new(0);
        run_in_order(
            gates,
            NonZeroUsize::new(parallelism).unwrap(),
            &|g: &Gate| {
                let beside = running.fetch_add(1, Ordering::SeqCst);
                let start = tick.fetch_add(1, Ordering::SeqCst);
                std::thread::yield_now();
                running.fetch_sub(1, Ordering::SeqCst);
                let finish = tick.fetch_add(1, Ordering::SeqCst);
                (g.name.clone(), start, finish, beside)
            },
        )
    }

    #[test]
    fn every_gate_starts_after_the_gates_it_needs_finished() {
        let gates = [
            gate("build", &[], false),
            gate("tests", &["build"], false),
            gate("security", &["tests"], true),
            gate("wiring", &["tests"], true),
            gate("semantic", &["security", "wiring"], true),
            gate("spec", &["semantic"], true),
        ];
        let results = record(&gates, 4);
        let names: Vec<_> = results.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["build", "tests", "security", "wiring", "semantic", "spec"]
        );
        let by_name = |n: &str| results.iter().find(|r| r.0 == n).unwrap();
        for g in &gates {
            for need in &g.needs {
                assert!(
                    by_name(need).2 < by_name(&g.name).1,
                    "{} started before {need} finished: {results:?}",
                    g.name
                );
            }
        }
    }

    #[test]
    fn a_writer_runs_alone_and_holds_back_later_gates() {
        let gates = [
            gate("r1", &[], true),
            gate("w", &[], false),
            gate("r2", &[], true),
        ];
        let results = record(&gates, 4);
        let w = &results[1];
        assert_eq!(
            w.3, 0,
            "the writer started beside another gate: {results:?}"
        );
        assert!(results[0].2 < w.1, "{results:?}");
        assert!(w.2 < results[2].1, "{results:?}");
    }

    #[test]
    fn read_only_gates_whose_needs_are_done_run_at_the_same_time() {
        // Each gate waits (bounded) until both have started: they can only both see the
        // other if they ran concurrently.
        let started = Arc::new((Mutex::new(0usize), Condvar::new()));
        let gates = [gate("a", &[], true), gate("b", &[], true)];
        let saw_other = run_in_order(&gates, NonZeroUsize::new(2).unwrap(), &|_: &Gate| {
            let (count, cv) = &*started;
            let mut n = count.lock().unwrap();
            *n += 1;
            cv.notify_all();
            let (n, _) = cv
                .wait_timeout_while(n, Duration::from_secs(10), |n| *n < 2)
                .unwrap();
            *n == 2
        });
        assert_eq!(saw_other, [true, true]);
    }

    #[test]
    fn parallelism_bounds_the_gates_running_at_once() {
        let gates: Vec<_> = (0..6).map(|i| gate(&format!("g{i}"), &[], true)).collect();
        let results = record(&gates, 2);
        assert!(results.iter().all(|r| r.3 < 2), "{results:?}");
        assert_eq!(results.len(), 6);
    }
}
