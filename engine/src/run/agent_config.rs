//! The `agents:` key of `.spur/config.yaml`: agent name → how `agent.run` runs it (a
//! preset, a command, or both: `crate::agent::entry`), and `defaults.agent`: the agent of an
//! `agent.run` that names none. Only these are read here (other keys belong to other parts
//! of spur).
//!
//! ```yaml
//! agents:
//!   claude: { preset: claude }
//!   stub:   { command: "./stub-agent.sh" }
//! defaults:
//!   agent: claude        # or {name: claude, timeoutMs: …}
//! ```

use std::collections::HashMap;
use std::path::Path;

use crate::agent::entry::{read_entry, AgentEntry};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceFile, Span};
use crate::store::bounded_read::read_string;
use crate::store::state_dir::MAX_CONFIG_BYTES;
use crate::yaml::{parse_config, Codes, Loader, Loose, Node, NodeValue, UnknownKeys};

/// What is wrong with `agents:` is reported as text (the action's error), under one code.
const CODES: Codes = Codes {
    wrong_type: Code::RunAgentConfig,
    missing_key: Code::RunAgentConfig,
    unknown_key: Code::RunAgentConfig,
    duplicate_key: Code::RunAgentConfig,
};

/// Looking up an agent failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AgentLookupError {
    /// The file could not be read (not a regular file, too large, not UTF-8…).
    Unreadable(String),
    /// The file is not YAML, or `agents:` is not what it should be: every finding, one
    /// `line L, column C: …` each, joined by `; `.
    Invalid(String),
}

impl std::fmt::Display for AgentLookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentLookupError::Unreadable(e) | AgentLookupError::Invalid(e) => f.write_str(e),
        }
    }
}

/// What `.spur/config.yaml` says about agents.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct AgentsConfig {
    /// Every agent with its entry, in file order.
    pub(crate) agents: Vec<(String, AgentEntry)>,
    /// `defaults.agent`: the agent of an `agent.run` that names none.
    pub(crate) default_agent: Option<String>,
    /// What spur ignores (an unknown key, with did-you-mean), one line each.
    pub(crate) warnings: Vec<String>,
}

impl AgentsConfig {
    /// The entry of `agent`, when mapped.
    pub(crate) fn agent(&self, agent: &str) -> Option<&AgentEntry> {
        self.agents
            .iter()
            .find(|(name, _)| name == agent)
            .map(|(_, entry)| entry)
    }
}

/// Read the agents of the config file at `path`: `Ok(None)` when there is no file. Any
/// error in `agents:` or the default agent fails the whole read, so that a broken entry is
/// never half-read.
pub(crate) fn read_agents_config(path: &Path) -> Result<Option<AgentsConfig>, AgentLookupError> {
    let text = match read_string(path, MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(AgentLookupError::Unreadable(e.to_string())),
    };
    let source = SourceFile::new(path, text);
    let root = match parse_config(source.text()) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Some(AgentsConfig::default())),
        Err(e) => {
            let (line, column) = source.line_column(e.span().offset);
            return Err(AgentLookupError::Invalid(format!(
                "line {line}, column {column}: {e}"
            )));
        }
    };
    let mut cx = Loader::new(&source, CODES);
    let agents = read_agents(&mut cx, &root);
    let default_agent = read_default_agent(&mut cx, &root);
    let findings: Vec<String> = cx.diagnostics.iter().map(Diagnostic::one_line).collect();
    if cx.diagnostics.iter().any(Diagnostic::is_error) {
        // The warnings too: an unknown key is often the misspelt missing one.
        return Err(AgentLookupError::Invalid(findings.join("; ")));
    }
    Ok(Some(AgentsConfig {
        agents,
        default_agent,
        warnings: findings,
    }))
}

/// `defaults.agent`: a name, or a mapping whose `name` is one (its `timeoutMs` is the step
/// timeouts' business, `run/step_timeouts.rs`, which also reports unknown keys there).
fn read_default_agent(cx: &mut Loader<'_>, root: &Node) -> Option<String> {
    let top = cx.fields_with(
        root,
        "the configuration file",
        &["defaults"],
        UnknownKeys::Ignore,
    )?;
    let defaults = top.get("defaults").filter(|n| n.value != NodeValue::Null)?;
    let fields = cx.fields_with(defaults, "`defaults`", &["agent"], UnknownKeys::Ignore)?;
    let agent = fields.get("agent")?;
    let name = match &agent.value {
        NodeValue::Null => return None,
        NodeValue::Map(_) => {
            let inner =
                cx.fields_with(agent, "`defaults.agent`", &["name"], UnknownKeys::Ignore)?;
            cx.read::<Loose<String>>(inner.get("name")?, "`defaults.agent.name`")?
        }
        _ => cx.read::<Loose<String>>(agent, "`defaults.agent`")?,
    };
    Some(name.0).filter(|n| !n.is_empty())
}

/// Every agent of `agents:` with its entry, in file order (null or absent: none).
fn read_agents(cx: &mut Loader<'_>, root: &Node) -> Vec<(String, AgentEntry)> {
    let Some(top) = cx.fields_with(
        root,
        "the configuration file",
        &["agents"],
        UnknownKeys::Ignore,
    ) else {
        return Vec::new();
    };
    let entries = match top.get("agents").map(|n| (n, &n.value)) {
        None | Some((_, NodeValue::Null)) => return Vec::new(),
        Some((_, NodeValue::Map(entries))) => entries,
        Some((node, _)) => {
            cx.wrong_type(
                node,
                "`agents`",
                "a mapping of agent name to `{preset: …}` or `{command: …}`",
            );
            return Vec::new();
        }
    };
    let mut seen: HashMap<String, Span> = HashMap::with_capacity(entries.len());
    let mut agents = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let Some(Loose(name)) = cx.read::<Loose<String>>(key, "an agent name") else {
            continue;
        };
        if let Some(first) = seen.get(&name) {
            cx.duplicate_key(key.span, &name, "`agents`", *first);
            continue;
        }
        seen.insert(name.clone(), key.span);
        if let Some(entry) = read_entry(cx, value, &name) {
            agents.push((name, entry));
        }
    }
    agents
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::preset::Preset;

    /// The entry of `agent` (`None`: no file, or not mapped) and the warnings.
    fn lookup_at(
        path: &Path,
        agent: &str,
    ) -> Result<Option<(AgentEntry, Vec<String>)>, AgentLookupError> {
        Ok(read_agents_config(path)?
            .and_then(|c| c.agent(agent).map(|e| (e.clone(), c.warnings.clone()))))
    }

    fn lookup(
        text: &str,
        agent: &str,
    ) -> Result<Option<(AgentEntry, Vec<String>)>, AgentLookupError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, text).unwrap();
        lookup_at(&path, agent)
    }

    fn command(text: &str, agent: &str) -> Option<String> {
        lookup(text, agent).unwrap().and_then(|(e, _)| e.command)
    }

    fn invalid(text: &str) -> String {
        match lookup(text, "a") {
            Err(AgentLookupError::Invalid(why)) => why,
            other => panic!("{text:?} must be invalid, got {other:?}"),
        }
    }

    #[test]
    fn reads_the_agents_key_and_treats_an_absent_file_as_unmapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        assert_eq!(read_agents_config(&path), Ok(None));
        std::fs::write(&path, "agents:\n  a: { command: \"run-a\" }\n").unwrap();
        assert_eq!(
            lookup_at(&path, "a").unwrap().unwrap().0.command.as_deref(),
            Some("run-a")
        );
        assert_eq!(lookup_at(&path, "b"), Ok(None));
    }

    #[test]
    fn an_entry_is_a_preset_a_command_or_both_with_args() {
        let (entry, _) = lookup("agents:\n  a: {preset: codex, args: [--model, 5]}\n", "a")
            .unwrap()
            .unwrap();
        assert_eq!(
            entry,
            AgentEntry {
                preset: Some(Preset::Codex),
                command: None,
                args: vec!["--model".into(), "5".into()],
            }
        );
        let (both, _) = lookup("agents: {a: {preset: stub, command: ./x}}\n", "a")
            .unwrap()
            .unwrap();
        assert_eq!(both.preset, Some(Preset::Stub));
        assert_eq!(both.command.as_deref(), Some("./x"));
    }

    #[test]
    fn an_unknown_preset_or_an_entry_with_neither_is_an_error() {
        assert_eq!(
            invalid("agents:\n  a: {preset: cladue}\n"),
            "line 2, column 15: `preset` of agent `a` is `cladue`, not a preset spur knows \
             (did you mean `claude`?)"
        );
        assert!(invalid("agents:\n  a: {args: [x]}\n")
            .contains("agent `a` has neither `preset` nor `command`"),);
        assert!(invalid("agents:\n  a: {preset: claude, args: x}\n")
            .contains("`args` of agent `a` must be a list of strings"));
    }

    #[test]
    fn the_default_agent_is_defaults_agent_or_its_name() {
        let read = |text: &str| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("config.yaml");
            std::fs::write(&path, text).unwrap();
            read_agents_config(&path).unwrap().unwrap().default_agent
        };
        assert_eq!(
            read("defaults: {agent: claude}\n").as_deref(),
            Some("claude")
        );
        assert_eq!(
            read("defaults: {agent: {name: stub, timeoutMs: 5}}\n").as_deref(),
            Some("stub")
        );
        assert_eq!(read("defaults: {agent: {timeoutMs: 5}}\n"), None);
        assert_eq!(read("agents: {a: {command: x}}\n"), None);
    }

    #[test]
    fn an_unknown_key_is_a_warning_and_any_error_in_agents_fails_every_lookup() {
        let (found, warnings) = lookup("agents:\n  a: {command: run-a, comand: x}\n", "a")
            .unwrap()
            .unwrap();
        assert_eq!(found.command.as_deref(), Some("run-a"));
        assert_eq!(
            warnings,
            ["line 2, column 23: unknown key `comand` in agent `a` (did you mean `command`?)"]
        );
        assert_eq!(
            invalid("agents:\n  a: {command: run-a}\n  b: {comand: x}\n"),
            "line 3, column 7: unknown key `comand` in agent `b` (did you mean `command`?); \
             line 3, column 6: agent `b` has neither `preset` nor `command` (add `preset: NAME` \
             (claude, codex, gemini, opencode, aider, stub) or `command: \"…\"`)"
        );
        assert!(
            invalid("agents:\n  a: {command: one}\n  a: {command: two}\n")
                .contains("duplicate key `a` in `agents`")
        );
    }

    #[test]
    fn other_sections_do_not_matter_and_scalars_read_loosely() {
        let text = "verify: {gates: {x: 1, x: 2}, ignored: true}\nbase: &b {command: 5}\nagents:\n  a: {<<: *b}\n";
        assert_eq!(command(text, "a").as_deref(), Some("5"));
        assert_eq!(command("agents:\n", "a"), None);
        assert!(matches!(
            lookup("agents: [a]\n", "a"),
            Err(AgentLookupError::Invalid(_))
        ));
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
            read_agents_config(&fifo),
            Err(AgentLookupError::Unreadable(
                "it is a FIFO, not a regular file".to_owned()
            ))
        );
        let zero = dir.path().join("zero.yaml");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert_eq!(
            read_agents_config(&zero),
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
        let Err(AgentLookupError::Unreadable(why)) = read_agents_config(&path) else {
            panic!("an oversized config must be unreadable")
        };
        assert!(why.contains("larger than the 1048576-byte limit"), "{why}");
    }
}
