//! The runs the engine knows, read as `spur runs`, `spur trace` and `spur ui` show them:
//! each run's records from its `SpurRun` workflow, summed up by the engine's own
//! [`summary_of`] (the reader of local journals uses the same).

use spur_engine::run::journal::Record;
use spur_engine::run::runs_list::{summary_of, RunSummary};
use spur_engine::run::RunId;

use crate::client::{self, ClientError};

/// The runs the engine at `ingress` knows, newest first (a run whose records the engine
/// no longer keeps, or whose id is not a run id, is left out).
pub fn run_summaries(ingress: &str) -> Result<Vec<RunSummary>, ClientError> {
    let ids = client::runs(ingress)?;
    let mut runs = Vec::new();
    for id in ids.iter().rev() {
        let Ok(run_id) = RunId::parse(id) else {
            continue;
        };
        let records = client::records(ingress, id)?;
        if let Some(summary) = summary_of(&run_id, &records) {
            runs.push(summary);
        }
    }
    Ok(runs)
}

/// The records of run `run_id` on the engine at `ingress`; `None` when the engine does not
/// know the run (it keeps no records of it).
pub fn run_records(ingress: &str, run_id: &str) -> Result<Option<Vec<Record>>, ClientError> {
    let records = client::records(ingress, run_id)?;
    Ok(if records.is_empty() {
        None
    } else {
        Some(records)
    })
}
