//! Every error of `.spur/config.yaml` at once. Each section has its own reader (`defaults`:
//! `run::step_timeouts`; `verify` and `doneGate`: `verify::config`; `secrets`:
//! `run::secret_config`; `http`: `run::http_allow`; `agents`: `run::agent_config`; `engine`: `run::engine_config`; `budgets` and `prices`:
//! `cost::config`), each reporting every finding of
//! its section; a command that stops over one section reports the others' too, so that
//! one edit fixes them all.

use crate::diagnostic::Code;
use crate::run::step_timeouts::StepTimeouts;
use crate::store::state_dir::StateDir;
use crate::verify::config::VerifyConfig;

/// An error of `agents:`, as its reader says it.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the agents of {path}: {message}")]
struct AgentsError {
    path: String,
    message: String,
}

impl miette::Diagnostic for AgentsError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(Code::RunAgentConfig))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(
            "fix `agents:` in the file: `spur agent doctor` reads the entries `agent.run` runs",
        ))
    }
}

/// The errors of every section of the project's `.spur/config.yaml` (none without the
/// file), section by section.
pub fn config_errors(state_dir: &StateDir) -> Vec<miette::Report> {
    let mut errors = Vec::new();
    if let Err(e) = StepTimeouts::load(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = VerifyConfig::load(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = crate::run::http_allow::HttpAllowList::load(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = crate::cost::config::CostConfig::load(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = crate::run::secret_config::config_secrets(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = crate::run::engine_config::EngineConfig::load(state_dir) {
        errors.push(miette::Report::new(e));
    }
    if let Err(e) = crate::run::agent_config::read_agents_config(&state_dir.config_path()) {
        errors.push(miette::Report::new(AgentsError {
            path: state_dir.config_path().display().to_string(),
            message: e.to_string(),
        }));
    }
    errors
}
