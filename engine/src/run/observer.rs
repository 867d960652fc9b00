//! How the CLI follows a run: the engine reports each journal record as it is written and
//! asks the operator through the observer. The engine itself never prints.

use super::actions::HitlQuestion;
use super::journal::Record;

/// What the runner tells as it goes (each journal record) and asks (hitl questions).
pub trait RunObserver {
    /// The run `run_id` is about to write its first record (a new run) or its next one (a
    /// resumed or retried run): said before anything runs, so the id is known even if the
    /// run is stopped at once.
    fn run_id(&mut self, _run_id: &str) {}

    /// A journal record was written (in seq order).
    fn record(&mut self, _record: &Record) {}

    /// Ask the operator an hitl question. `None` means no one can answer now (no
    /// terminal): the run pauses and `spur continue --answer` supplies the answer.
    fn ask(&mut self, _question: &HitlQuestion) -> Option<String> {
        None
    }
}

/// Follows nothing and answers nothing (tests, benchmarks, `--json` without a terminal).
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentObserver;

impl RunObserver for SilentObserver {}
