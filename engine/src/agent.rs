//! Agents as spur runs them: what `agents:` of `.spur/config.yaml` says about one
//! ([`entry`]), the presets for known agent CLIs ([`preset`]) with their slash-command
//! dialects ([`slash_command`]), the argv an `agent.run` step starts ([`invocation`]),
//! the readiness check behind `spur agent doctor` and `doctor.probe` ([`doctor`],
//! [`login_probe`]), and the built-in stand-in agent of the `stub` preset ([`stub`]).

pub mod doctor;
pub(crate) mod entry;
pub(crate) mod invocation;
pub mod login_probe;
pub mod preset;
pub(crate) mod slash_command;
pub mod stub;
