//! The verify report: per-finding detail first, then the summary table
//! `| Gate | Status | Findings (B/W/I) |`, then the actionable findings (WARN and BLOCK
//! only) with the recommended fix, then what to do next. Skipped gates are called out at
//! the top so a missing gate is never mistaken for a passing one.

use std::fmt::Write as _;

use super::evidence::{cell, finding_line};
use super::finding::tally;
use super::gate_result::GateResult;
use super::outcome::{ActionableFinding, Summary};
use super::status::GateStatus;

/// What the report is about.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReportHeader<'a> {
    pub(crate) run: &'a str,
    pub(crate) task: Option<&'a str>,
    pub(crate) gate: Option<&'a str>,
}

pub(crate) fn render_report(
    header: ReportHeader<'_>,
    gates: &[GateResult],
    actionable: &[ActionableFinding],
) -> String {
    let summary = Summary::of(gates);
    let mut md = String::new();
    let subject = header
        .task
        .map_or_else(|| "project".to_owned(), |t| format!("task {t}"));
    let _ = writeln!(md, "# Verify report — {subject}\n");
    let _ = writeln!(md, "Run `{}`.", header.run);
    if let Some(gate) = header.gate {
        let _ = writeln!(md, "Only gate `{gate}` was run (`--gate`).");
    }
    let skipped: Vec<String> = gates
        .iter()
        .filter(|g| g.status == GateStatus::Skip)
        .map(|g| {
            format!(
                "`{}` ({})",
                g.name,
                g.skipped.map_or("skipped", |s| s.as_str())
            )
        })
        .collect();
    if summary.ran() == 0 {
        md.push_str("\n> **No gate ran: nothing was verified.** Enable gates in `.spur/config.yaml` under `verify.gates`.\n");
    }
    if !skipped.is_empty() {
        let _ = writeln!(
            md,
            "\n> **SKIPPED ({}):** {} — not verified.",
            skipped.len(),
            skipped.join(", ")
        );
    }

    md.push_str("\n## Findings\n");
    let mut any_detail = false;
    for gate in gates.iter().filter(|g| g.status != GateStatus::Skip) {
        let worth_detail = gate.status != GateStatus::Pass
            || gate.flip
            || gate
                .findings
                .iter()
                .any(|f| f.severity != super::finding::FindingSeverity::Info);
        if !worth_detail {
            continue;
        }
        any_detail = true;
        let _ = writeln!(md, "\n### {} — {}\n", gate.name, status_text(gate));
        if let Some(reason) = &gate.reason {
            let _ = writeln!(md, "{reason}.\n");
        }
        if let Some(code) = gate.exit_code.filter(|c| *c != 0) {
            let _ = writeln!(md, "Exit code {code}.\n");
        }
        if gate.flip {
            md.push_str("The verdict flipped since the last run: confidence is low.\n\n");
        }
        if gate.unactionable {
            md.push_str("**Unactionable:** this FAIL has no finding with a `file:line` locator; re-investigate from the evidence.\n\n");
        }
        for finding in &gate.findings {
            let _ = writeln!(md, "- {}", finding_line(finding));
        }
        if let Some(evidence) = &gate.evidence {
            let _ = writeln!(
                md,
                "{}Evidence: `{}`",
                if gate.findings.is_empty() { "" } else { "\n" },
                evidence.markdown
            );
        }
    }
    if !any_detail {
        md.push_str("\nNo findings.\n");
    }

    if gates.is_empty() {
        md.push_str("\n## Summary\n\nNo gate is configured.\n");
    } else {
        md.push_str("\n## Summary\n\n| Gate | Status | Findings (B/W/I) |\n|---|---|---|\n");
    }
    for gate in gates {
        let findings = if gate.status == GateStatus::Skip {
            "–".to_owned()
        } else {
            let (b, w, i) = tally(&gate.findings);
            format!("{b}/{w}/{i}")
        };
        let _ = writeln!(
            md,
            "| {} | {} | {findings} |",
            gate.name,
            cell(&status_text(gate))
        );
    }

    if !actionable.is_empty() {
        md.push_str("\n## Actionable findings\n\n| # | Gate | Severity | File | Finding | Recommended Fix |\n|---|---|---|---|---|---|\n");
        for a in actionable {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                a.number,
                a.gate,
                a.severity.as_str(),
                a.file.as_deref().map_or_else(|| "(none)".to_owned(), cell),
                cell(&a.finding),
                cell(&a.fix)
            );
        }
        let manual = actionable.iter().filter(|a| a.manual).count();
        let with_fix = actionable.len() - manual;
        let _ = writeln!(
            md,
            "\n{with_fix} of {} actionable findings {} a recommended fix; {}.",
            actionable.len(),
            if with_fix == 1 { "has" } else { "have" },
            match manual {
                0 => "none needs human judgment".to_owned(),
                n if n == actionable.len() => {
                    "all need manual review: no automated resolution is possible".to_owned()
                }
                1 => "1 needs manual review".to_owned(),
                n => format!("{n} need manual review"),
            }
        );
    }

    let _ = writeln!(md, "\n## Next\n\n{}", next_step(&summary));
    md
}

fn status_text(gate: &GateResult) -> String {
    let mut text = match gate.status {
        GateStatus::Skip => format!(
            "**SKIP** ({})",
            gate.skipped.map_or("skipped", |s| s.as_str())
        ),
        status => status.to_string(),
    };
    let mut notes = Vec::new();
    if gate.flaky {
        notes.push("flaky");
    }
    if gate.flip {
        notes.push("flipped");
    }
    if gate.confidence == Some(super::status::Confidence::Low) {
        notes.push("low confidence");
    }
    if gate.unactionable {
        notes.push("unactionable");
    }
    if !notes.is_empty() {
        let _ = write!(text, " ({})", notes.join(", "));
    }
    text
}

fn next_step(summary: &Summary) -> &'static str {
    if summary.ran() == 0 {
        "Nothing was verified: enable gates, then run `spur verify` again."
    } else if summary.fail + summary.error > 0 {
        "Blocked: fix the FAIL and ERROR gates, then run `spur verify` again."
    } else if summary.warn > 0 {
        "Warnings only: review them, then fix or proceed."
    } else {
        "All gates that ran pass."
    }
}
