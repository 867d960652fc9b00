//! The `agents:` key of `.spur/config.yaml`: agent name → the command `agent.run` runs.
//! Only that key is read here (other keys belong to other parts of spur).
//!
//! ```yaml
//! agents:
//!   claude: { command: "claude -p" }
//!   stub:   { command: "./stub-agent.sh" }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct AgentCommand {
    /// Shell text; the templated `input` is appended as one argument (`"$@"`).
    pub command: String,
}

#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    agents: BTreeMap<String, AgentCommand>,
}

/// Looking up an agent failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentLookupError {
    Unreadable(String),
    Invalid(String),
    Unmapped,
}

/// The command for `agent` from the config file at `path`.
pub fn agent_command(path: &Path, agent: &str) -> Result<AgentCommand, AgentLookupError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AgentLookupError::Unmapped)
        }
        Err(e) => return Err(AgentLookupError::Unreadable(e.to_string())),
    };
    if text.trim().is_empty() {
        return Err(AgentLookupError::Unmapped);
    }
    let config: ConfigFile =
        serde_saphyr::from_str(&text).map_err(|e| AgentLookupError::Invalid(e.to_string()))?;
    config
        .agents
        .get(agent)
        .cloned()
        .ok_or(AgentLookupError::Unmapped)
}
