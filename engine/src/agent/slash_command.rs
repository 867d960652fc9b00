//! Slash commands across agent CLIs. A pipeline writes an agent step's input the way
//! Claude Code reads it — `/implement 0592`, or `/plugin:command args` — and each preset
//! turns that into what its CLI understands:
//!
//! | preset | `/implement 0592` | `/sp:dev-run 0592` |
//! |---|---|---|
//! | claude, gemini, stub | `/implement 0592` | `/sp:dev-run 0592` |
//! | codex | `$implement 0592` (a skill mention) | `$sp-dev-run 0592` |
//! | opencode | `run --command implement 0592` | `run --command sp-dev-run 0592` |
//! | aider | `implement 0592` (aider's own `/` commands are fixed) | `sp-dev-run 0592` |
//!
//! Anything else is passed as written: only a `/` followed by a command name (letters,
//! digits, `.`, `_`, `-`, one optional `namespace:`), then a space or the end, is a slash
//! command — `/tmp/x is missing` is not.

use super::preset::Preset;

/// The prompt a preset passes: text, or (opencode) a command with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// Text the CLI reads as a prompt.
    Text(String),
    /// A command the CLI runs by name (`opencode run --command NAME ARGS`).
    Command { name: String, args: String },
}

impl Prompt {
    /// `input` as `preset` must be given it.
    pub(crate) fn for_preset(preset: Preset, input: &str) -> Prompt {
        let Some(slash) = SlashCommand::parse(input) else {
            return Prompt::Text(input.to_owned());
        };
        let with_args = |head: String| {
            if slash.args.is_empty() {
                head
            } else {
                format!("{head} {}", slash.args)
            }
        };
        match preset {
            Preset::Claude | Preset::Gemini | Preset::Stub => Prompt::Text(input.to_owned()),
            Preset::Codex => Prompt::Text(with_args(format!("${}", slash.flat_name()))),
            Preset::Opencode => Prompt::Command {
                name: slash.flat_name(),
                args: slash.args.to_owned(),
            },
            Preset::Aider => Prompt::Text(with_args(slash.flat_name())),
        }
    }

    /// The text that goes in the prompt's place (a command's arguments).
    pub(crate) fn text(&self) -> &str {
        match self {
            Prompt::Text(text) => text,
            Prompt::Command { args, .. } => args,
        }
    }
}

/// `/namespace:name args` taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlashCommand<'a> {
    pub(crate) namespace: Option<&'a str>,
    pub(crate) name: &'a str,
    /// What follows the name, leading blanks removed.
    pub(crate) args: &'a str,
}

impl<'a> SlashCommand<'a> {
    /// `input` as a slash command, when it is one.
    pub(crate) fn parse(input: &'a str) -> Option<Self> {
        let rest = input.strip_prefix('/')?;
        let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
        let (head, args) = rest.split_at(end);
        let (namespace, name) = match head.split_once(':') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, head),
        };
        let word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        if !word(name) || !namespace.is_none_or(word) {
            return None;
        }
        Some(SlashCommand {
            namespace,
            name,
            args: args.trim_start(),
        })
    }

    /// `namespace-name`, or `name`: how CLIs without namespaces name an installed command.
    fn flat_name(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{ns}-{}", self.name),
            None => self.name.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(preset: Preset, input: &str) -> String {
        Prompt::for_preset(preset, input).text().to_owned()
    }

    #[test]
    fn each_preset_writes_a_slash_command_its_own_way() {
        for preset in [Preset::Claude, Preset::Gemini, Preset::Stub] {
            assert_eq!(text(preset, "/implement 0592"), "/implement 0592");
        }
        assert_eq!(text(Preset::Codex, "/implement 0592"), "$implement 0592");
        assert_eq!(
            text(Preset::Codex, "/sp:dev-run 0592 --auto"),
            "$sp-dev-run 0592 --auto"
        );
        assert_eq!(text(Preset::Aider, "/review 0592"), "review 0592");
        assert_eq!(
            Prompt::for_preset(Preset::Opencode, "/sp:verify  0592"),
            Prompt::Command {
                name: "sp-verify".into(),
                args: "0592".into()
            }
        );
        assert_eq!(text(Preset::Codex, "/fix"), "$fix");
    }

    #[test]
    fn only_a_command_name_after_the_slash_makes_a_slash_command() {
        for input in [
            "/tmp/x is missing",
            "/ leading space",
            "/a:b:c x",
            "/:x",
            "/x:",
            "no slash",
            "",
            "/é",
        ] {
            assert_eq!(text(Preset::Codex, input), input, "{input:?}");
            assert_eq!(
                Prompt::for_preset(Preset::Opencode, input),
                Prompt::Text(input.to_owned()),
                "{input:?}"
            );
        }
        assert_eq!(text(Preset::Codex, "/run\tnow"), "$run now");
    }
}
