//! How `spur run`, `continue` and `retry` say why a run failed and what to do next.

use std::path::Path;

use spur_engine::run::explain::FailureExplanation;
use spur_engine::run::journal::Phase;

/// The explanation under the outcome line, then one next step.
pub fn render(why: &FailureExplanation, run_id: &str) {
    if let Some(d) = &why.description {
        let of = why
            .description_of
            .as_deref()
            .map(|o| format!(" ({o})"))
            .unwrap_or_default();
        outln!("  why{of}: {}", one_line(d));
    }
    for g in &why.guards {
        let reason = g
            .reason
            .as_deref()
            .map(|r| format!(": {}", one_line(r)))
            .unwrap_or_default();
        outln!(
            "  guard {} → {} ({}) did not pass{reason}",
            why.state,
            g.to,
            g.kind
        );
    }
    if let Some(gate) = &why.done_gate {
        outln!("  done gate denied: {}", one_line(gate));
    }
    for a in &why.actions {
        let list = match a.phase {
            Phase::Enter => "onEnter",
            Phase::Exit => "onExit",
        };
        let what = if a.ok { "exited non-zero" } else { "failed" };
        let message = a
            .message
            .as_deref()
            .map(|m| format!(": {}", one_line(without_kind(&a.kind, m))))
            .unwrap_or_default();
        outln!(
            "  action {} {list}[{}] {} {what}{message}",
            why.state,
            a.index,
            a.kind
        );
        if let Some(log) = &a.log {
            outln!("    log: {}", shown_path(log));
        }
        for line in &a.tail {
            outln!("    │ {line}");
        }
    }
    match &why.retry_from {
        Some(state) => outln!(
            "  next: fix the cause above, then `spur retry {run_id}` (goes on from {state}, running its onEnter again)"
        ),
        None => outln!("  next: fix the cause above, then start a new run with `spur run`"),
    }
}

/// A description folded onto one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `path` relative to the current directory when it is under it.
pub fn shown_path(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// An action's error or message without the `kind: ` its text may start with (the line
/// names the kind already).
pub fn without_kind<'e>(kind: &str, text: &'e str) -> &'e str {
    text.strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(text)
}
