//! The rules a written gate must follow to become a [`Gate`]: a valid name, one way to
//! run, no empty command, known needs, a non-zero timeout, a known severity, paths inside
//! the project. A standard gate fills in what is left out.

use std::path::PathBuf;
use std::time::Duration;

use super::raw::RawGate;
use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::source::{Located, Span};
use crate::verify::config_error::ConfigProblems;
use crate::verify::gate::{Gate, GateCommand, GateSeverity, DEFAULT_TIMEOUT};
use crate::verify::standard_gates::standard_gate;

/// The gate `raw` describes, or `None` when a rule is broken (reported in `errors`).
/// `configured` names every gate of the file.
pub(super) fn check_gate(
    name: &Located<String>,
    raw: &RawGate,
    configured: &[&str],
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<Gate> {
    let before = errors.len();
    let name_span = name.span;
    if crate::wbs::Wbs::parse(&name.value).is_err() {
        errors.push(problems.invalid_gate_name(&name.value, name_span));
    }
    let standard = standard_gate(&name.value);

    let command = match (&raw.command, &raw.executable) {
        (Some(c), Some(e)) => {
            errors.push(problems.command_conflict(&name.value, c.span, e.span));
            None
        }
        (Some(c), None) => {
            if let Some((span, _)) = &raw.args {
                errors.push(problems.args_without_executable(&name.value, *span));
            }
            non_empty(c, "command", &name.value, problems, errors).map(GateCommand::Shell)
        }
        (None, Some(e)) => {
            non_empty(e, "executable", &name.value, problems, errors).map(|exe| GateCommand::Exec {
                executable: exe,
                args: raw
                    .args
                    .as_ref()
                    .map(|(_, args)| args.clone())
                    .unwrap_or_default(),
            })
        }
        (None, None) => {
            if let Some((span, _)) = &raw.args {
                errors.push(problems.args_without_executable(&name.value, *span));
            }
            Some(GateCommand::Exec {
                executable: format!("spur-gate-{}", name.value),
                args: Vec::new(),
            })
        }
    };

    let (needs, needs_span): (Vec<(String, Span)>, Span) = match &raw.needs {
        Some((span, needs)) => (
            needs.iter().map(|n| (n.value.clone(), n.span)).collect(),
            *span,
        ),
        // A standard gate waits for the standard gates before it that are configured.
        None => (
            standard
                .map(|s| {
                    s.needs
                        .iter()
                        .filter(|n| configured.contains(n))
                        .map(|n| ((*n).to_owned(), name_span))
                        .collect()
                })
                .unwrap_or_default(),
            name_span,
        ),
    };
    for (need, span) in &needs {
        if !configured.contains(&need.as_str()) {
            let help = did_you_mean(need, configured.iter().copied())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("configured gates: {}", configured.join(", ")));
            errors.push(problems.unknown_need(&name.value, need, help, *span));
        }
    }

    let timeout = match &raw.timeout_ms {
        None => DEFAULT_TIMEOUT,
        Some(t) if t.value == 0 => {
            errors.push(problems.zero(
                "timeoutMs",
                "timeoutMs is how long the gate may run, in milliseconds (default 600000)",
                t.span,
            ));
            DEFAULT_TIMEOUT
        }
        Some(t) => Duration::from_millis(t.value),
    };

    let severity = match &raw.severity {
        None => GateSeverity::Blocker,
        Some(s) => GateSeverity::parse(&s.value).unwrap_or_else(|| {
            let names = GateSeverity::ALL.map(GateSeverity::as_str);
            let help = did_you_mean(&s.value, names.iter().copied())
                .map(|m| format!("did you mean `{m}`?"))
                .unwrap_or_else(|| format!("use one of: {}", names.join(", ")));
            errors.push(problems.invalid_severity(&name.value, &s.value, help, s.span));
            GateSeverity::Blocker
        }),
    };

    let expect_file = project_path(
        raw.expect_file.as_ref(),
        "expectFile",
        &name.value,
        problems,
        errors,
    );
    let findings_file = project_path(
        raw.findings_file.as_ref(),
        "findingsFile",
        &name.value,
        problems,
        errors,
    );

    if errors.len() > before {
        return None;
    }
    Some(Gate {
        name: name.value.clone(),
        command: command?,
        needs: needs.into_iter().map(|(n, _)| n).collect(),
        timeout,
        read_only: raw
            .read_only
            .unwrap_or_else(|| standard.is_some_and(|s| s.read_only)),
        severity,
        enabled: raw.enabled.unwrap_or(true),
        expect_file,
        findings_file,
        span: name_span,
        needs_span,
    })
}

fn non_empty(
    value: &Located<String>,
    field: &'static str,
    gate: &str,
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<String> {
    if value.value.trim().is_empty() {
        errors.push(problems.empty_command(gate, field, value.span));
        None
    } else {
        Some(value.value.clone())
    }
}

/// A path relative to the project root that cannot leave it.
fn project_path(
    value: Option<&Located<String>>,
    field: &'static str,
    gate: &str,
    problems: ConfigProblems<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    let value = value?;
    let path = PathBuf::from(&value.value);
    let inside = !value.value.is_empty()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if inside {
        Some(path)
    } else {
        errors.push(problems.path_outside_project(gate, field, value.span));
        None
    }
}
