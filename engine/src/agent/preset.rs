//! Presets: the headless invocation of each agent CLI spur knows, so that a project writes
//! `agents: { claude: { preset: claude } }` instead of a command line. A preset says which
//! program to start, the flags that make it run one prompt without a terminal and without
//! asking for permission to edit files, where the prompt goes, how a slash command is
//! written for it ([`super::slash_command`]), and how `spur agent doctor` asks its version
//! and whether it is logged in. The book's Agents page has the table and the sources.
//!
//! The prompt is always the last argument, after `--` where the CLI takes it as a
//! positional argument, or as `--flag=VALUE` where it takes it as a flag's value: a prompt
//! that starts with `-` is never read as a flag.

use std::fmt;
use std::str::FromStr;

use super::slash_command::Prompt;

/// A known agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Claude Code (`claude -p`).
    Claude,
    /// OpenAI Codex CLI (`codex exec`).
    Codex,
    /// Gemini CLI (`gemini --prompt=…`).
    Gemini,
    /// opencode (`opencode run`).
    Opencode,
    /// aider (`aider --message=…`).
    Aider,
    /// spur's own stand-in agent (`spur agent stub`), for trying a pipeline without one.
    Stub,
}

/// How `spur agent doctor` asks an agent CLI whether it is logged in: a command that
/// changes nothing, and what its output says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoginProbe {
    /// The arguments after the program.
    pub(crate) args: &'static [&'static str],
}

impl Preset {
    /// Every preset, in the order the book lists them.
    pub const ALL: [Preset; 6] = [
        Preset::Claude,
        Preset::Codex,
        Preset::Gemini,
        Preset::Opencode,
        Preset::Aider,
        Preset::Stub,
    ];

    /// The preset's name as written in `.spur/config.yaml`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Codex => "codex",
            Preset::Gemini => "gemini",
            Preset::Opencode => "opencode",
            Preset::Aider => "aider",
            Preset::Stub => "stub",
        }
    }

    /// The program looked up on PATH; `None` for the stub, which is spur itself.
    pub fn program(self) -> Option<&'static str> {
        match self {
            Preset::Claude => Some("claude"),
            Preset::Codex => Some("codex"),
            Preset::Gemini => Some("gemini"),
            Preset::Opencode => Some("opencode"),
            Preset::Aider => Some("aider"),
            Preset::Stub => None,
        }
    }

    /// The arguments that run `prompt` headless, with the user's `extra` arguments before
    /// the prompt.
    pub(crate) fn args(self, prompt: &Prompt, extra: &[String]) -> Vec<String> {
        let owned = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let text = prompt.text();
        let mut args = match self {
            // `-p` is the print (headless) switch; the prompt is positional. acceptEdits
            // lets it edit files without asking; other tools stay as the user's settings
            // allow (a prompt it cannot answer is a denial in print mode). stream-json
            // (which needs --verbose in print mode) reports usage as it goes, the answer
            // and the cost at the end (`crate::cost::agent_output`).
            Preset::Claude => owned(&[
                "-p",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Write",
                "Edit",
                "--output-format",
                "stream-json",
                "--verbose",
            ]),
            // `exec` runs one prompt; it is read-only unless given a writable sandbox.
            // `--json` prints its events, each turn's usage among them.
            Preset::Codex => owned(&["exec", "--json", "--sandbox", "workspace-write"]),
            // `--prompt` is headless mode; auto_edit approves file edits only. `json` is
            // the answer and the tokens per model, at the end.
            Preset::Gemini => owned(&["--approval-mode", "auto_edit", "--output-format", "json"]),
            // `run` sends one message; a slash command becomes `--command NAME` with the
            // rest as the message. `--format json` prints its events, each step's tokens
            // and cost among them.
            Preset::Opencode => match prompt {
                Prompt::Command { name, .. } => {
                    owned(&["run", "--format", "json", "--command", name])
                }
                Prompt::Text(_) => owned(&["run", "--format", "json"]),
            },
            // `--message` processes one message and exits; `--yes-always` answers its
            // confirmations; the pipeline, not aider, decides what gets committed. aider
            // has no machine-readable output: its `Tokens: … Cost: …` lines are read.
            Preset::Aider => owned(&["--yes-always", "--no-auto-commits"]),
            Preset::Stub => owned(&["agent", "stub"]),
        };
        args.extend(extra.iter().cloned());
        match self {
            Preset::Gemini => args.push(format!("--prompt={text}")),
            Preset::Aider => args.push(format!("--message={text}")),
            Preset::Opencode if text.is_empty() => {}
            _ => {
                args.push("--".to_owned());
                args.push(text.to_owned());
            }
        }
        args
    }

    /// The arguments that print the CLI's version; `None` for the stub (spur's own).
    pub(crate) fn version_args(self) -> Option<&'static [&'static str]> {
        match self {
            Preset::Stub => None,
            _ => Some(&["--version"]),
        }
    }

    /// The CLI's own login-status command, where it has one.
    pub(crate) fn login_probe(self) -> Option<LoginProbe> {
        match self {
            Preset::Claude => Some(LoginProbe {
                args: &["auth", "status"],
            }),
            Preset::Codex => Some(LoginProbe {
                args: &["login", "status"],
            }),
            Preset::Opencode => Some(LoginProbe {
                args: &["auth", "list"],
            }),
            Preset::Gemini | Preset::Aider | Preset::Stub => None,
        }
    }

    /// Environment variables whose non-empty value is a credential the CLI uses (for the
    /// CLIs without a login-status command).
    pub(crate) fn credential_env(self) -> &'static [&'static str] {
        match self {
            Preset::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            _ => &[],
        }
    }

    /// What to do when the program is not on PATH.
    pub(crate) fn install_hint(self) -> &'static str {
        match self {
            Preset::Claude => "install Claude Code (`npm install -g @anthropic-ai/claude-code`)",
            Preset::Codex => "install the Codex CLI (`npm install -g @openai/codex`)",
            Preset::Gemini => "install the Gemini CLI (`npm install -g @google/gemini-cli`)",
            Preset::Opencode => "install opencode (see https://opencode.ai/docs)",
            Preset::Aider => "install aider (see https://aider.chat/docs/install.html)",
            Preset::Stub => "the stub is spur itself; run spur from its installed path",
        }
    }

    /// What to do when the CLI says it is not logged in.
    pub(crate) fn login_hint(self) -> &'static str {
        match self {
            Preset::Claude => "log in with `claude auth login` (or set ANTHROPIC_API_KEY)",
            Preset::Codex => "log in with `codex login` (or set OPENAI_API_KEY)",
            Preset::Opencode => "log in with `opencode auth login`",
            Preset::Gemini => "run `gemini` once to sign in, or set GEMINI_API_KEY",
            Preset::Aider | Preset::Stub => "",
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL.into_iter().find(|p| p.name() == s).ok_or(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(preset: Preset, input: &str, extra: &[&str]) -> Vec<String> {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        preset.args(&Prompt::for_preset(preset, input), &extra)
    }

    #[test]
    fn every_preset_reads_back_from_its_name() {
        for preset in Preset::ALL {
            assert_eq!(preset.name().parse::<Preset>(), Ok(preset));
        }
        assert!("Claude".parse::<Preset>().is_err());
    }

    #[test]
    fn a_prompt_that_looks_like_a_flag_stays_the_prompt() {
        assert_eq!(
            args(Preset::Codex, "--help", &[]),
            [
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "--",
                "--help"
            ]
        );
        assert_eq!(
            args(Preset::Aider, "-x", &[]).last().map(String::as_str),
            Some("--message=-x")
        );
        assert_eq!(
            args(Preset::Gemini, "--yolo", &[])
                .last()
                .map(String::as_str),
            Some("--prompt=--yolo")
        );
    }

    #[test]
    fn extra_arguments_come_before_the_prompt() {
        assert_eq!(
            args(Preset::Claude, "hi", &["--model", "opus"]),
            [
                "-p",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Write",
                "Edit",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "opus",
                "--",
                "hi"
            ]
        );
    }

    #[test]
    fn opencode_runs_a_slash_command_as_its_command() {
        assert_eq!(
            args(Preset::Opencode, "/implement 0592", &[]),
            [
                "run",
                "--format",
                "json",
                "--command",
                "implement",
                "--",
                "0592"
            ]
        );
        assert_eq!(
            args(Preset::Opencode, "/review", &[]),
            ["run", "--format", "json", "--command", "review"]
        );
        assert_eq!(
            args(Preset::Opencode, "say hi", &[]),
            ["run", "--format", "json", "--", "say hi"]
        );
    }
}
