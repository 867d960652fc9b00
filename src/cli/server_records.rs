//! `--engine restate` for the commands that read the done gate's records (`spur task
//! show`, `spur audit verify`): a fleet's task ledgers and audit chain live on the server
//! (the `Task` and `Audit` objects), not in this machine's protected state. They are laid
//! out in a private directory as the local protected state is, and read by the same code;
//! what those commands print names the engine instead of that directory
//! ([`ServerRecords::shown`]).

use spur_engine::run::fleet_state::write_lines;
use spur_engine::store::state_dir::StateDir;
use spur_engine::wbs::Wbs;
use spur_restate::client;

use super::engine_run::engine_failure;
use super::Failure;

/// The server's records laid out as a state directory (removed on drop). It has no task
/// views: on a fleet the ledger alone is the status.
pub struct ServerRecords {
    _dir: tempfile::TempDir,
    /// The state directory to read them from: the project's tree, the server's records.
    pub state: StateDir,
    ingress: String,
}

impl ServerRecords {
    /// `text` (a path, a finding) with the private copy's paths named as what they are:
    /// records on the engine at its ingress (`engine http://…: audit.jsonl`), not a
    /// directory that is gone once the command ends.
    pub fn shown(&self, text: &str) -> String {
        let protected = format!("{}/", self.state.protected_dir().display());
        text.replace(&protected, &format!("engine {}: ", self.ingress))
    }
}

/// The server's ledgers of `tasks` (every task it holds when `None`) and audit chain.
pub fn read(
    state_dir: &StateDir,
    ingress: &str,
    tasks: Option<&[Wbs]>,
) -> Result<ServerRecords, Failure> {
    let failed = |what: &str, e: &dyn std::fmt::Display| engine_failure(what, e);
    let dir = tempfile::Builder::new()
        .prefix("spur-server-records-")
        .tempdir()
        .map_err(|e| failed("cannot make a private directory", &e))?;
    let state = StateDir::at(dir.path().join(".spur"))
        .with_protected_dir(dir.path().join("protected"))
        .with_key_file(state_dir.key_file().clone())
        .with_tree(state_dir.project_root());
    let wbs_list: Vec<String> = match tasks {
        Some(tasks) => tasks.iter().map(|w| w.as_str().to_owned()).collect(),
        None => client::tasks(ingress).map_err(|e| failed("cannot read the engine's tasks", &e))?,
    };
    for wbs in &wbs_list {
        let Ok(parsed) = Wbs::parse(wbs) else {
            continue;
        };
        let records = client::task_records(ingress, wbs)
            .map_err(|e| failed(&format!("cannot read task {wbs} on the engine"), &e))?;
        write_lines(&state.task_ledger_path(&parsed), &records.ledger)
            .map_err(|e| failed("cannot lay out the server's records", &e))?;
    }
    let audit =
        client::audit_lines(ingress).map_err(|e| failed("cannot read the audit chain", &e))?;
    write_lines(&state.audit_path(), &audit)
        .map_err(|e| failed("cannot lay out the server's records", &e))?;
    Ok(ServerRecords {
        _dir: dir,
        state,
        ingress: ingress.to_owned(),
    })
}
