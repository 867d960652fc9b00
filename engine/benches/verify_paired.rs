//! The verify benchmark's comparison measured in pairs: `run_gates` on 200 trivial gates
//! (`true`) against the same 200 commands spawned one after another by a shell, each round
//! running both back to back (the order alternating), and the ratio of the two times
//! kept. `benches/verify.rs` times each case in its own block of seconds, and on a machine
//! whose speed drifts by more than the margin between blocks the ratio of two block means
//! says little; the median of per-round ratios does not have that problem.
//!
//!     cargo bench -p spur-engine --bench verify_paired            (60 rounds per kind)
//!     SPUR_BENCH_ROUNDS=200 cargo bench -p spur-engine --bench verify_paired
//!
//! Prints, for writer gates (one after another) and read-only gates (in parallel), the
//! median ratio to `sh` and a distribution-free 95% confidence interval of that median.

use std::path::Path;
use std::time::{Duration, Instant};

#[path = "common/verify_gates.rs"]
mod verify_gates;
use verify_gates::{forget_ledger, project, sh_loop, verify};

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter this bench ignores.
    let rounds = std::env::var("SPUR_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse::<usize>().ok())
        .filter(|&r| r >= 10)
        .unwrap_or(60);
    for (kind, read_only) in [("writer gates", false), ("read-only gates", true)] {
        let dir = project(read_only);
        let ratios = paired_ratios(dir.path(), rounds);
        let (median, low, high) = median_with_interval(ratios);
        println!(
            "verify_paired/{kind}: spur/sh median {median:.3} (95% CI {low:.3}-{high:.3}) over {rounds} rounds"
        );
    }
}

fn time(run: impl FnOnce()) -> Duration {
    let started = Instant::now();
    run();
    started.elapsed()
}

/// One run of the gates, from the same ledger size every time.
fn spur(root: &Path) -> Duration {
    forget_ledger(root);
    time(|| verify(root))
}

fn paired_ratios(root: &Path, rounds: usize) -> Vec<f64> {
    spur(root); // warm up: the first run creates the evidence and run directories
    time(sh_loop);
    (0..rounds)
        .map(|round| {
            let (spur_time, sh_time) = if round % 2 == 0 {
                (spur(root), time(sh_loop))
            } else {
                let sh_time = time(sh_loop);
                (spur(root), sh_time)
            };
            spur_time.as_secs_f64() / sh_time.as_secs_f64()
        })
        .collect()
}

/// The median and the order statistics that bound it with 95% confidence (the binomial
/// interval: no assumption about the distribution of the ratios).
fn median_with_interval(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    let half_width = 0.98 * (n as f64).sqrt();
    let low = ((n as f64 / 2.0 - half_width).floor().max(0.0)) as usize;
    let high = ((n as f64 / 2.0 + half_width).ceil() as usize).min(n - 1);
    (median, values[low], values[high])
}
