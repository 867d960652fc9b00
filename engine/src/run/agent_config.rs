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

use crate::store::bounded_read::read_string;
use crate::store::state_dir::MAX_CONFIG_BYTES;

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
    let text = match read_string(path, MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_missing() => return Err(AgentLookupError::Unmapped),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_agents_key_and_treats_an_absent_file_as_unmapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        assert_eq!(agent_command(&path, "a"), Err(AgentLookupError::Unmapped));
        std::fs::write(&path, "agents:\n  a: { command: \"run-a\" }\n").unwrap();
        assert_eq!(agent_command(&path, "a").unwrap().command, "run-a");
        assert_eq!(agent_command(&path, "b"), Err(AgentLookupError::Unmapped));
    }

    #[test]
    fn a_fifo_or_dev_zero_at_the_config_path_is_unreadable_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.yaml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(
            agent_command(&fifo, "a"),
            Err(AgentLookupError::Unreadable(
                "it is a FIFO, not a regular file".to_owned()
            ))
        );
        let zero = dir.path().join("zero.yaml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(
            agent_command(&zero, "a"),
            Err(AgentLookupError::Unreadable(
                "it is a character device, not a regular file".to_owned()
            ))
        );
    }

    #[test]
    fn an_oversized_config_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        let Err(AgentLookupError::Unreadable(why)) = agent_command(&path, "a") else {
            panic!("an oversized config must be unreadable")
        };
        assert!(why.contains("larger than the 1048576-byte limit"), "{why}");
    }
}
