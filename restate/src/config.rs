//! `engine:` of `.spur/config.yaml`: where `spur run` sends runs. Absent (or
//! `kind: local`): runs stay on this machine.

use serde::Deserialize;

/// Which engine runs a project's pipelines.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EngineConfig {
    /// This machine, `.spur/` (the default).
    Local,
    /// A Restate server: its ingress (runs) and admin (registration) URLs.
    Restate {
        /// e.g. `http://127.0.0.1:8080`.
        ingress: String,
        /// e.g. `http://127.0.0.1:9070`.
        #[serde(default)]
        admin: Option<String>,
    },
}

#[derive(Deserialize)]
struct Top {
    #[serde(default)]
    engine: Option<EngineConfig>,
}

/// The engine `config_yaml` (the text of `.spur/config.yaml`) names; local when none.
pub fn engine_of(config_yaml: &str) -> Result<EngineConfig, String> {
    if config_yaml.trim().is_empty() {
        return Ok(EngineConfig::Local);
    }
    let top: Top = serde_saphyr::from_str(config_yaml).map_err(|e| e.to_string())?;
    Ok(top.engine.unwrap_or(EngineConfig::Local))
}
