//! Whether an agent CLI is logged in, asked in a way that changes nothing: its own status
//! command where it has one (`claude auth status`, `codex login status`, `opencode auth
//! list`), else whether a credential variable it reads is set (gemini), else nothing.
//!
//! Only an explicit "not logged in" makes an agent unusable. A status command that fails
//! without saying so, says something else, or cannot run is `unknown`: a CLI that renamed
//! its status command must not stop every run (the reference's tri-state, for the same
//! reason).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use spur_process::{ProcessSpec, ProcessStatus};

use super::preset::Preset;

/// How long a status command may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of its output kept.
const PROBE_CAPTURE: usize = 64 * 1024;
/// The most of its output quoted back.
const DETAIL_CHARS: usize = 200;

/// Whether the agent is logged in, as the reference spells it in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Login {
    /// The CLI says it is logged in (or a credential it reads is set).
    Authenticated,
    /// The CLI says it is not logged in.
    Unauthenticated,
    /// No way to tell, or the answer was not clear.
    Unknown,
}

/// What the status command said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeReport {
    /// The command, program first.
    pub command: Vec<String>,
    /// Its exit code; `None` when it did not exit (timed out, killed, could not start).
    pub exit_code: Option<i32>,
    /// The first line of what it printed, or why it did not finish.
    pub detail: String,
}

/// Ask `program` (the preset's CLI, at its found path) whether it is logged in. `env`
/// is added to the environment the command sees; `var` reads a variable as the agent
/// would see it.
pub(crate) fn probe_login(
    preset: Preset,
    program: &Path,
    cwd: &Path,
    env: &[(String, String)],
    var: &dyn Fn(&str) -> Option<String>,
) -> (Login, Option<ProbeReport>) {
    if let Some(name) = preset
        .credential_env()
        .iter()
        .find(|name| var(name).is_some_and(|v| !v.trim().is_empty()))
    {
        let report = ProbeReport {
            command: Vec::new(),
            exit_code: None,
            detail: format!("{name} is set"),
        };
        return (Login::Authenticated, Some(report));
    }
    let Some(probe) = preset.login_probe() else {
        return (Login::Unknown, None);
    };
    let mut spec = ProcessSpec::new(program, probe.args)
        .cwd(cwd)
        .timeout(PROBE_TIMEOUT)
        .capture_limit(PROBE_CAPTURE);
    for (k, v) in env {
        spec = spec.env(k, v);
    }
    let outcome = spec.run();
    let mut output = String::from_utf8_lossy(&outcome.stdout).into_owned();
    output.push('\n');
    output.push_str(&String::from_utf8_lossy(&outcome.stderr));
    let (exit_code, login, detail) = match &outcome.status {
        ProcessStatus::Exited(code) => {
            (Some(*code), classify(preset, &output), first_line(&output))
        }
        other => (None, Login::Unknown, other.to_string()),
    };
    let mut command = vec![program.display().to_string()];
    command.extend(probe.args.iter().map(|a| (*a).to_owned()));
    (
        login,
        Some(ProbeReport {
            command,
            exit_code,
            detail,
        }),
    )
}

/// What a status command's output says: a negative phrase first (`not logged in` holds
/// `logged in`), then a positive one.
pub(crate) fn classify(preset: Preset, output: &str) -> Login {
    let text = normalise(output);
    let (negative, positive): (&[&str], &[&str]) = match preset {
        // `claude auth status` prints JSON with `loggedIn`.
        Preset::Claude => (
            &[
                "not logged in",
                "not authenticated",
                "logged out",
                "unauthenticated",
                "\"loggedin\":false",
            ],
            &["\"loggedin\":true", "logged in", "authenticated"],
        ),
        Preset::Codex => (
            &[
                "not logged in",
                "not authenticated",
                "logged out",
                "unauthenticated",
            ],
            &["logged in", "authenticated"],
        ),
        Preset::Opencode => (
            &[
                "0 credentials",
                "no credentials",
                "not logged in",
                "not authenticated",
            ],
            &[" credential"],
        ),
        Preset::Gemini | Preset::Aider | Preset::Stub => (&[], &[]),
    };
    if negative.iter().any(|p| text.contains(p)) {
        Login::Unauthenticated
    } else if positive.iter().any(|p| text.contains(p)) {
        Login::Authenticated
    } else {
        Login::Unknown
    }
}

/// Lower case, `-`/`_` as spaces, runs of blanks as one space, and no blank after `:` (so
/// that `"loggedIn": false` and `"loggedIn":false` read the same).
fn normalise(output: &str) -> String {
    let lowered: String = output
        .to_lowercase()
        .chars()
        .map(|c| if matches!(c, '-' | '_') { ' ' } else { c })
        .collect();
    let collapsed = lowered.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(" {}", collapsed.replace(": ", ":"))
}

/// The first non-blank line, cut to [`DETAIL_CHARS`] characters.
pub(crate) fn first_line(output: &str) -> String {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(DETAIL_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_phrase_wins_over_the_positive_one_it_contains() {
        assert_eq!(
            classify(Preset::Codex, "Not logged in"),
            Login::Unauthenticated
        );
        assert_eq!(
            classify(Preset::Codex, "Logged in using ChatGPT"),
            Login::Authenticated
        );
        assert_eq!(
            classify(Preset::Claude, "{\n  \"loggedIn\": false\n}"),
            Login::Unauthenticated
        );
        assert_eq!(
            classify(
                Preset::Claude,
                "{\"loggedIn\": true, \"authMethod\": \"claude.ai\"}"
            ),
            Login::Authenticated
        );
        assert_eq!(
            classify(
                Preset::Opencode,
                "Credentials ~/.local/share/opencode/auth.json\n0 credentials"
            ),
            Login::Unauthenticated
        );
        assert_eq!(
            classify(Preset::Opencode, "● Anthropic oauth\n└ 1 credentials"),
            Login::Authenticated
        );
    }

    #[test]
    fn output_that_says_neither_is_unknown() {
        assert_eq!(
            classify(Preset::Claude, "error: unknown command 'auth'"),
            Login::Unknown
        );
        assert_eq!(classify(Preset::Aider, "not logged in"), Login::Unknown);
    }
}
