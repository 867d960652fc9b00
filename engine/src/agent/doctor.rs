//! `spur agent doctor` and the `doctor.probe` action: for each agent of `.spur/config.yaml`
//! (or the ones named), is its program found on PATH, does it print a version (the
//! preset's version flag), and is it logged in (the preset's status command; see
//! [`super::login_probe`]). An agent is usable when its program is found, answers with a
//! version, and does not say it is logged out. Each unusable agent carries the reason and
//! one next step.
//!
//! The checks run programs spur would run anyway for the agent (`--version`, a status
//! command); an agent given as shell text (`command:`) is only looked up, never run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use spur_process::{ProcessSpec, ProcessStatus};

use super::entry::AgentEntry;
use super::login_probe::{first_line, probe_login, Login, ProbeReport};
use super::preset::Preset;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::run::agent_config::{read_agents_config, AgentLookupError};
use crate::store::state_dir::StateDir;

/// How long `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of its output kept.
const VERSION_CAPTURE: usize = 64 * 1024;

/// What to check, and where.
#[derive(Debug, Clone)]
pub struct DoctorRequest {
    /// The project's state directory (its `config.yaml` holds `agents:`).
    pub state_dir: StateDir,
    /// The agents to check, by name; empty: every configured agent.
    pub only: Vec<String>,
    /// The PATH to search; `None`: this process's.
    pub path: Option<OsString>,
    /// Variables added to the environment of the commands the check runs (a run's).
    pub env: Vec<(String, String)>,
    /// The spur executable (what the `stub` preset runs).
    pub spur_bin: Option<PathBuf>,
}

impl DoctorRequest {
    /// Check every configured agent of `state_dir` with this process's PATH.
    pub fn new(state_dir: StateDir) -> Self {
        Self {
            state_dir,
            only: Vec::new(),
            path: None,
            env: Vec::new(),
            spur_bin: None,
        }
    }

    fn var(&self, name: &str) -> Option<String> {
        match self.env.iter().rev().find(|(k, _)| k == name) {
            Some((_, v)) => Some(v.clone()),
            None => std::env::var(name).ok(),
        }
    }
}

/// The outcome: one check per agent, in config order (or the order asked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorReport {
    /// The checks.
    pub agents: Vec<AgentCheck>,
    /// The config file that was read.
    #[serde(skip)]
    pub config: PathBuf,
}

impl DoctorReport {
    /// Whether every agent checked is usable (and there was at least one).
    pub fn all_usable(&self) -> bool {
        !self.agents.is_empty() && self.agents.iter().all(|a| a.usable)
    }
}

/// Where an agent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentStatus {
    /// Found, answers, not logged out.
    Usable,
    /// Given as shell text spur does not look into; nothing was run.
    Unchecked,
    /// Its program is not on PATH (or the file it names is not there).
    Missing,
    /// Found, but `--version` failed or printed no version.
    Broken,
    /// Found and answers, but says it is not logged in.
    LoggedOut,
    /// No entry for the name under `agents:`.
    Unconfigured,
}

impl AgentStatus {
    /// The status as written.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Usable => "usable",
            AgentStatus::Unchecked => "unchecked",
            AgentStatus::Missing => "missing",
            AgentStatus::Broken => "broken",
            AgentStatus::LoggedOut => "logged-out",
            AgentStatus::Unconfigured => "unconfigured",
        }
    }
}

/// The check of one agent. Field names follow the reference's `spur agent doctor --json`
/// (`agent`, `installed`, `version`, `authenticated`, `usable`, `error`), so pipelines
/// that read them with jq keep working.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCheck {
    /// The agent's name under `agents:`.
    pub agent: String,
    /// Its preset, if any.
    pub preset: Option<Preset>,
    /// The program looked up (a preset's, or the first word of `command:`).
    pub program: Option<String>,
    /// Where it was found.
    pub path: Option<String>,
    /// Whether the program was found; `None` when nothing was looked up.
    pub installed: Option<bool>,
    /// The first line the program's `--version` printed.
    pub version: Option<String>,
    /// Whether it is logged in.
    pub authenticated: Login,
    /// What the status command said, when one ran (or the credential variable found).
    pub probe: Option<ProbeReport>,
    /// Where it stands.
    pub status: AgentStatus,
    /// Whether a run can use it.
    pub usable: bool,
    /// Why it is not usable.
    pub error: Option<String>,
    /// What to do about it.
    pub hint: Option<String>,
}

/// Why the check could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the agents of {}: {reason}", path.display())]
pub struct DoctorError {
    /// The config file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

coded_diagnostic! {
    DoctorError {
        Self { .. } => Code::RunAgentConfig,
            help("fix `agents:` in the file: `spur agent doctor` reads the entries `agent.run` runs");
    }
}

/// Check the agents `request` names (every configured one when it names none).
pub fn doctor(request: &DoctorRequest) -> Result<DoctorReport, DoctorError> {
    let config_path = request.state_dir.config_path();
    let config = match read_agents_config(&config_path) {
        Ok(config) => config.unwrap_or_default(),
        Err(AgentLookupError::Unreadable(reason) | AgentLookupError::Invalid(reason)) => {
            return Err(DoctorError {
                path: config_path,
                reason,
            })
        }
    };
    let names: Vec<String> = if request.only.is_empty() {
        config.agents.iter().map(|(name, _)| name.clone()).collect()
    } else {
        let mut names: Vec<String> = Vec::new();
        for name in &request.only {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    };
    let agents = names
        .iter()
        .map(|name| match config.agent(name) {
            Some(entry) => check(request, name, entry),
            None => unconfigured(name, &config_path),
        })
        .collect();
    Ok(DoctorReport {
        agents,
        config: config_path,
    })
}

fn unconfigured(name: &str, config: &Path) -> AgentCheck {
    let preset = name.parse::<Preset>().ok();
    let entry = match preset {
        Some(p) => format!("{{ preset: {p} }}"),
        None => "{ preset: NAME } or { command: \"…\" }".to_owned(),
    };
    AgentCheck {
        agent: name.to_owned(),
        preset: None,
        program: None,
        path: None,
        installed: None,
        version: None,
        authenticated: Login::Unknown,
        probe: None,
        status: AgentStatus::Unconfigured,
        usable: false,
        error: Some(format!(
            "no agent `{name}` under `agents:` in {}",
            config.display()
        )),
        hint: Some(format!(
            "add `agents: {{ {name}: {entry} }}` to {}",
            config.display()
        )),
    }
}

/// What the entry starts: the preset's program, or the first word of its command line.
enum Target {
    /// A name to look up on PATH.
    OnPath(String),
    /// A path (relative to the project root when not absolute).
    File(String),
    /// Spur itself (the stub).
    Spur,
    /// Shell text spur does not take apart.
    Opaque,
}

fn target(entry: &AgentEntry) -> Target {
    if let Some(command) = &entry.command {
        return command_word(command).map_or(Target::Opaque, |word| {
            if word.contains('/') {
                Target::File(word)
            } else {
                Target::OnPath(word)
            }
        });
    }
    match entry.preset.and_then(Preset::program) {
        Some(program) => Target::OnPath(program.to_owned()),
        None => Target::Spur,
    }
}

/// The program a command line starts, when it is a plain word: after any leading
/// `NAME=value` assignments, a first word without quotes, `$`, backquotes or other shell
/// syntax. `None` for anything else (spur does not evaluate shell text to check it).
fn command_word(command: &str) -> Option<String> {
    let word = command.split_whitespace().find(|w| !is_assignment(w))?;
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | '@' | ','));
    plain.then(|| word.to_owned())
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn check(request: &DoctorRequest, name: &str, entry: &AgentEntry) -> AgentCheck {
    let project_root = request.state_dir.project_root();
    let mut out = AgentCheck {
        agent: name.to_owned(),
        preset: entry.preset,
        program: None,
        path: None,
        installed: None,
        version: None,
        authenticated: Login::Unknown,
        probe: None,
        status: AgentStatus::Usable,
        usable: true,
        error: None,
        hint: None,
    };
    let found = match target(entry) {
        Target::Opaque => {
            out.status = AgentStatus::Unchecked;
            return out;
        }
        Target::Spur => {
            out.program = Some("spur".to_owned());
            out.installed = Some(request.spur_bin.is_some());
            out.version = Some(format!("spur {}", env!("CARGO_PKG_VERSION")));
            request.spur_bin.clone()
        }
        Target::OnPath(program) => {
            let found = spur_guards::find_executable(&program, request.path.as_deref());
            out.program = Some(program);
            found
        }
        Target::File(file) => {
            let path = project_root.join(&file);
            let found = is_executable(&path).then_some(path);
            out.program = Some(file);
            found
        }
    };
    let Some(found) = found else {
        return missing(out, entry, request);
    };
    out.installed = Some(true);
    out.path = Some(found.display().to_string());
    // A command line is only looked up: its flags are the user's, and running it could
    // start the agent itself.
    let Some(preset) = entry.preset.filter(|_| entry.command.is_none()) else {
        return out;
    };
    if let Some(args) = preset.version_args() {
        match version(&found, args, project_root, &request.env) {
            Ok(v) => out.version = Some(v),
            Err(why) => {
                out.status = AgentStatus::Broken;
                out.usable = false;
                out.error = Some(format!(
                    "`{} {}` {why}",
                    out.program.as_deref().unwrap_or("?"),
                    args.join(" ")
                ));
                out.hint = Some(format!(
                    "run that command to see what is wrong, or reinstall: {}",
                    preset.install_hint()
                ));
                return out;
            }
        }
    }
    let (login, probe) = probe_login(preset, &found, project_root, &request.env, &|n| {
        request.var(n)
    });
    out.authenticated = login;
    out.probe = probe;
    if login == Login::Unauthenticated {
        out.status = AgentStatus::LoggedOut;
        out.usable = false;
        // The command as the user would type it (the report keeps the path it ran).
        let said = match (out.probe.as_ref(), preset.login_probe()) {
            (Some(p), Some(probe)) => format!(
                ": `{} {}` said \"{}\"",
                out.program.as_deref().unwrap_or("?"),
                probe.args.join(" "),
                p.detail
            ),
            _ => String::new(),
        };
        out.error = Some(format!("{} is not logged in{said}", preset.name()));
        out.hint = Some(preset.login_hint().to_owned());
    }
    out
}

fn missing(mut out: AgentCheck, entry: &AgentEntry, request: &DoctorRequest) -> AgentCheck {
    out.installed = Some(false);
    out.status = AgentStatus::Missing;
    out.usable = false;
    let program = out.program.clone().unwrap_or_default();
    out.error = Some(if program == "spur" {
        "the spur executable is not known to this process".to_owned()
    } else if program.contains('/') {
        format!("`{program}` is not an executable file in the project")
    } else {
        let dirs = request
            .path
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .map_or(0, |p| {
                std::env::split_paths(&p)
                    .filter(|d| !d.as_os_str().is_empty())
                    .count()
            });
        format!("`{program}` is not on PATH ({dirs} directories searched)")
    });
    out.hint = Some(match (entry.preset, &entry.command) {
        (Some(preset), None) => format!(
            "{}, or set `agents.{}.command` in .spur/config.yaml",
            preset.install_hint(),
            out.agent
        ),
        _ => format!(
            "install `{program}`, or fix `agents.{}.command` in .spur/config.yaml",
            out.agent
        ),
    });
    out
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first line of `program args`, which must exit 0 and print something with a digit
/// in it; the reason otherwise (completing "`claude --version` …").
fn version(
    program: &Path,
    args: &[&str],
    cwd: &Path,
    env: &[(String, String)],
) -> Result<String, String> {
    let mut spec = ProcessSpec::new(program, args)
        .cwd(cwd)
        .timeout(VERSION_TIMEOUT)
        .capture_limit(VERSION_CAPTURE);
    for (k, v) in env {
        spec = spec.env(k, v);
    }
    let outcome = spec.run();
    let mut output = String::from_utf8_lossy(&outcome.stdout).into_owned();
    output.push('\n');
    output.push_str(&String::from_utf8_lossy(&outcome.stderr));
    match &outcome.status {
        ProcessStatus::Exited(0) => {}
        status => {
            let said = first_line(&String::from_utf8_lossy(&outcome.stderr));
            return Err(if said.is_empty() {
                status.to_string()
            } else {
                format!("{status}: {said}")
            });
        }
    }
    let line = first_line(&output);
    if line.chars().any(|c| c.is_ascii_digit()) {
        Ok(line)
    } else if line.is_empty() {
        Err("printed nothing".to_owned())
    } else {
        Err(format!("printed no version: {line}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_of_a_command_line_is_its_first_plain_word() {
        assert_eq!(command_word("claude -p").as_deref(), Some("claude"));
        assert_eq!(
            command_word("FOO=1 BAR=x ./agent.sh --fast").as_deref(),
            Some("./agent.sh")
        );
        assert_eq!(command_word("sh ./stub-agent.sh").as_deref(), Some("sh"));
        assert_eq!(command_word("\"$HOME/bin/agent\""), None);
        assert_eq!(command_word("$(which claude)"), None);
        assert_eq!(command_word("   "), None);
    }
}
