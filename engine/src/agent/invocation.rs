//! The process an `agent.run` step starts for an agent entry and an input: the preset's
//! argv (no shell), or the entry's own `command` run by `sh -c` with the input as its last
//! argument (`"$@"`), as spur has always run commands.

use super::entry::AgentEntry;
use super::slash_command::Prompt;

/// A program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
}

/// How `entry` runs `input`. `spur_bin` is the spur executable, which the `stub` preset
/// runs; without it the stub cannot start.
pub(crate) fn invocation(
    entry: &AgentEntry,
    input: &str,
    spur_bin: Option<&str>,
) -> Result<Invocation, String> {
    if let Some(command) = &entry.command {
        // The preset still writes a slash command for its CLI; a command opencode would
        // run by name (`--command`) cannot be one appended argument, so it stays as written.
        let prompt = match entry.preset.map(|p| Prompt::for_preset(p, input)) {
            Some(Prompt::Text(text)) => text,
            Some(Prompt::Command { .. }) | None => input.to_owned(),
        };
        let mut args = vec![
            "-c".to_owned(),
            format!("{command} \"$@\""),
            "spur-agent".to_owned(),
        ];
        args.extend(entry.args.iter().cloned());
        args.push(prompt);
        return Ok(Invocation {
            program: "sh".to_owned(),
            args,
        });
    }
    let Some(preset) = entry.preset else {
        return Err("the agent has neither `preset` nor `command`".to_owned());
    };
    let program = match (preset.program(), spur_bin) {
        (Some(program), _) => program.to_owned(),
        (None, Some(spur)) => spur.to_owned(),
        (None, None) => {
            return Err(
                "the `stub` preset runs spur itself, and this run does not know where spur is \
                 ($SPUR_BIN is not set)"
                    .to_owned(),
            )
        }
    };
    Ok(Invocation {
        program,
        args: preset.args(&Prompt::for_preset(preset, input), &entry.args),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::preset::Preset;

    fn entry(preset: Option<Preset>, command: Option<&str>, args: &[&str]) -> AgentEntry {
        AgentEntry {
            preset,
            command: command.map(str::to_owned),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    #[test]
    fn a_command_wins_over_the_preset_and_gets_the_translated_input_last() {
        let inv = invocation(
            &entry(
                Some(Preset::Codex),
                Some("codex exec --full-auto"),
                &["-m", "o3"],
            ),
            "/implement 0592",
            None,
        )
        .unwrap();
        assert_eq!(inv.program, "sh");
        assert_eq!(
            inv.args,
            [
                "-c",
                "codex exec --full-auto \"$@\"",
                "spur-agent",
                "-m",
                "o3",
                "$implement 0592"
            ]
        );
        let plain = invocation(&entry(None, Some("./a.sh"), &[]), "/implement 1", None).unwrap();
        assert_eq!(plain.args.last().map(String::as_str), Some("/implement 1"));
        let opencode = invocation(
            &entry(Some(Preset::Opencode), Some("opencode run"), &[]),
            "/implement 1",
            None,
        )
        .unwrap();
        assert_eq!(
            opencode.args.last().map(String::as_str),
            Some("/implement 1")
        );
    }

    #[test]
    fn the_stub_runs_spur_and_needs_to_know_where_it_is() {
        let stub = entry(Some(Preset::Stub), None, &[]);
        let inv = invocation(&stub, "/review 1", Some("/opt/spur")).unwrap();
        assert_eq!(inv.program, "/opt/spur");
        assert_eq!(inv.args, ["agent", "stub", "--", "/review 1"]);
        assert!(invocation(&stub, "x", None)
            .unwrap_err()
            .contains("$SPUR_BIN"));
    }
}
