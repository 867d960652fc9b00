//! One entry of `agents:` in `.spur/config.yaml`: how spur runs the agent of that name.
//!
//! ```yaml
//! agents:
//!   claude: { preset: claude }                       # the preset's headless invocation
//!   opus:   { preset: claude, args: [--model, opus] } # … with arguments of your own
//!   mine:   { command: "./my-agent.sh --fast" }       # shell text; the input is appended
//!   both:   { preset: codex, command: "codex exec" }  # the command wins over the preset
//! ```
//!
//! An explicit `command` wins over the preset's invocation; the preset still writes
//! slash-command inputs for its CLI and tells `spur agent doctor` how to check it.

use crate::agent::preset::Preset;
use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::yaml::{Loader, Loose, Node, UnknownKeys};

/// The keys an entry may hold.
pub(crate) const ENTRY_KEYS: &[&str] = &["preset", "command", "args"];

/// How to run one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentEntry {
    /// `preset:`, the CLI this agent is.
    pub(crate) preset: Option<Preset>,
    /// `command:`, shell text the input is appended to (as `"$@"`); wins over the preset.
    pub(crate) command: Option<String>,
    /// `args:`, arguments added before the input.
    pub(crate) args: Vec<String>,
}

/// Read the entry `value` of agent `name`, every problem reported to `cx`; `None` when
/// something was wrong with it.
pub(crate) fn read_entry(cx: &mut Loader<'_>, value: &Node, name: &str) -> Option<AgentEntry> {
    let what = format!("agent `{name}`");
    let fields = cx.fields_with(value, &what, ENTRY_KEYS, UnknownKeys::Warn)?;
    let errors_before = error_count(cx);
    let preset = fields.get("preset").and_then(|node| {
        let Loose(written) = cx.read::<Loose<String>>(node, &format!("`preset` of {what}"))?;
        match written.parse::<Preset>() {
            Ok(preset) => Some(preset),
            Err(()) => {
                let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
                let d = Diagnostic::error(
                    cx.codes.wrong_type,
                    cx.source,
                    node.pointed(),
                    format!("`preset` of {what} is `{written}`, not a preset spur knows"),
                )
                .label("unknown preset");
                let d = match did_you_mean(&written, names.iter().copied()) {
                    Some(near) => d.help(format!("did you mean `{near}`?")),
                    None => d.help(format!("presets: {}", names.join(", "))),
                };
                cx.push(d);
                None
            }
        }
    });
    let command = fields
        .get("command")
        .and_then(|node| cx.read::<Loose<String>>(node, &format!("`command` of {what}")))
        .map(|Loose(c)| c);
    let args = match fields.get("args") {
        Some(node) => cx
            .items(
                node,
                &format!("`args` of {what}"),
                "a list of strings",
                |cx, item, i| {
                    cx.read::<Loose<String>>(item, &format!("`args[{i}]` of {what}"))
                        .map(|Loose(a)| a)
                },
            )
            .unwrap_or_default(),
        None => Vec::new(),
    };
    if error_count(cx) > errors_before {
        return None;
    }
    if preset.is_none() && command.is_none() {
        let d = Diagnostic::error(
            cx.codes.missing_key,
            cx.source,
            fields.anchor(),
            format!("{what} has neither `preset` nor `command`"),
        )
        .label(format!("{what} needs one of them"))
        .help(format!(
            "add `preset: NAME` ({}) or `command: \"…\"`",
            Preset::ALL.map(Preset::name).join(", ")
        ));
        cx.push(d);
        return None;
    }
    Some(AgentEntry {
        preset,
        command,
        args,
    })
}

fn error_count(cx: &Loader<'_>) -> usize {
    cx.diagnostics.iter().filter(|d| d.is_error()).count()
}
