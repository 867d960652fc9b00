//! Where the runs shown come from: this machine's state directory, or a Restate server
//! (`engine: {kind: restate, …}` in `.spur/config.yaml`, or `spur ui --engine restate
//! --ingress URL`). Each is read with the readers the CLI uses: local journals through
//! `run::runs_list` (bounded, validating, seals checked), the engine's runs through
//! `spur_restate::fleet_runs` (what `spur runs` and `spur trace` read there).

use std::path::PathBuf;

use spur_engine::run::journal::{Event, JournalFormat, Record};
use spur_engine::run::runs_list::{list_runs, read_run, RunSummary};
use spur_engine::run::{recorded_pipeline, RunId};
use spur_engine::store::state_dir::StateDir;
use spur_restate::fleet_runs;

/// Which engine's runs `spur ui` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// The runs of the state directory (`.spur/runs/`).
    Local,
    /// The runs of the Restate server at this ingress URL.
    Restate {
        /// The ingress URL.
        ingress: String,
    },
}

/// One run's records as read, with what cannot be vouched for in them.
pub(crate) struct RunRecords {
    pub(crate) records: Vec<Record>,
    /// A note on the journal's seals (cannot be verified, unkeyed).
    pub(crate) journal_note: Option<String>,
}

/// The runs, newest first.
pub(crate) fn list(state_dir: &StateDir, engine: &Engine) -> Result<Vec<RunSummary>, String> {
    match engine {
        Engine::Local => Ok(list_runs(state_dir)),
        Engine::Restate { ingress } => fleet_runs::run_summaries(ingress)
            .map_err(|e| format!("cannot list the runs of the engine at {ingress}: {e}")),
    }
}

/// Run `id`'s records (`Err`: why there are none to show).
pub(crate) fn read(
    state_dir: &StateDir,
    engine: &Engine,
    id: &RunId,
) -> Result<RunRecords, String> {
    match engine {
        Engine::Local => {
            let content = read_run(state_dir, id).map_err(|e| e.to_string())?;
            let journal_note = match (&content.format, &content.unverifiable) {
                (JournalFormat::Current, Some(u)) => {
                    Some(format!("cannot be verified from seq {}: {}", u.seq, u.why))
                }
                (JournalFormat::Unkeyed, _) => Some(
                    "not sealed with a key (format 1): nothing shows it was not rewritten".into(),
                ),
                _ => None,
            };
            Ok(RunRecords {
                records: content.records,
                journal_note,
            })
        }
        Engine::Restate { ingress } => match fleet_runs::run_records(ingress, id.as_str()) {
            Ok(Some(records)) => Ok(RunRecords {
                records,
                journal_note: None,
            }),
            Ok(None) => Err(format!("no run {id} on the engine at {ingress}")),
            Err(e) => Err(format!("cannot read run {id} on the engine: {e}")),
        },
    }
}

/// The pipeline file run `id` was started with, as its `run-started` record names it. A
/// fleet run names the file on the machine that sent it (the fleet shares one checkout
/// layout, book: *Running a fleet*).
pub(crate) fn pipeline_path(
    state_dir: &StateDir,
    engine: &Engine,
    id: &RunId,
    records: &[Record],
) -> Result<PathBuf, String> {
    match engine {
        Engine::Local => recorded_pipeline(state_dir, id).map_err(|e| e.to_string()),
        Engine::Restate { .. } => match records.first().map(|r| &r.event) {
            Some(Event::RunStarted { pipeline, .. }) => Ok(PathBuf::from(pipeline)),
            _ => Err("the run's records do not start with run-started".into()),
        },
    }
}
