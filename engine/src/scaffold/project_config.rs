//! The `.spur/config.yaml` `spur init` writes: the chosen agent with its preset, a verify
//! gate for the task pipeline's `test` state that passes until the project replaces it,
//! and the step timeouts spelled out, each section with commented examples.

use crate::agent::preset::Preset;

/// The config for a project whose agent is `preset`.
pub(super) fn text(preset: Preset) -> String {
    TEMPLATE.replace("{preset}", preset.name())
}

const TEMPLATE: &str = r#"# spur's configuration for this project, written by `spur init --agent {preset}`.
# `spur agent doctor` checks the agents; `spur verify` runs the gates. The book's Agents
# and Verify gates pages explain every key.

# How spur runs each agent a pipeline names. A preset is the headless invocation of a
# known agent CLI: claude, codex, gemini, opencode, aider, or stub (spur's stand-in: it
# writes NOTES.md and checks acceptance criteria by their commands). `command:` (shell
# text; the input is appended) replaces the preset's invocation; `args:` adds arguments.
agents:
  {preset}: { preset: {preset} }
  # claude: { preset: claude, args: [--model, opus] }
  # mine:   { command: "./scripts/my-agent.sh" }

# The project's checks. The task pipeline's `test` state runs the gate its `testGate` var
# names (`quality`); its `verify` state runs every gate, and a red gate stops the task
# from being certified done.
verify:
  gates:
    # A placeholder that passes: replace the command with the project's checks, e.g.
    #   quality: { command: "cargo clippy --all-targets -- -D warnings && cargo test" }
    #   quality: { command: "npm run lint && npm test" }
    quality: { command: "echo 'verify.gates.quality in .spur/config.yaml is a placeholder: replace it with your checks'" }
    # build: { command: "cargo build --all-targets" }
    # tests: { command: "cargo test", needs: [build] }

# How long a step may run when it sets no `timeoutMs` (milliseconds; these are spur's
# built-in defaults).
defaults:
  shell: { timeoutMs: 600000 }
  agent: { timeoutMs: 3600000 }
  guard: { timeoutMs: 60000 }
"#;
