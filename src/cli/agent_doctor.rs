//! `spur agent doctor [AGENT]… [--json]`: a table of the agents (found, version, logged in)
//! with the reason and a hint under each unusable one, or `{"agents": […]}`. Exit 0 when
//! every agent checked is usable, 1 when one is not (or none is configured), 2 when
//! `agents:` cannot be read.

use std::process::ExitCode;

use spur_engine::agent::doctor::{doctor, AgentCheck, AgentStatus, DoctorReport, DoctorRequest};
use spur_engine::agent::login_probe::Login;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check only these agents (names under `agents:`); default: every configured agent.
    #[arg(value_name = "AGENT")]
    agents: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, state_dir: StateDir) -> CliResult {
    let mut request = DoctorRequest::new(state_dir);
    request.only = args.agents;
    request.spur_bin = std::env::current_exe().ok();
    let report = doctor(&request).map_err(Failure::usage)?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        human(&report);
    }
    Ok(if report.all_usable() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILED)
    })
}

fn human(report: &DoctorReport) {
    if report.agents.is_empty() {
        outln!(
            "no agents under `agents:` in {}: add one (`agents: {{ claude: {{ preset: claude }} }}`), or run `spur init`",
            report.config.display()
        );
        return;
    }
    let rows: Vec<[String; 6]> = report
        .agents
        .iter()
        .map(|a| {
            [
                if a.usable { "✓" } else { "✗" }.to_owned(),
                a.agent.clone(),
                a.status.as_str().to_owned(),
                a.preset.map_or("—".to_owned(), |p| p.to_string()),
                a.version.clone().unwrap_or_else(|| "—".to_owned()),
                login(a).to_owned(),
            ]
        })
        .collect();
    let header = [
        " ".to_owned(),
        "AGENT".to_owned(),
        "STATUS".to_owned(),
        "PRESET".to_owned(),
        "VERSION".to_owned(),
        "LOGIN".to_owned(),
    ];
    let width = |i: usize| {
        std::iter::once(&header)
            .chain(&rows)
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..6).map(width).collect();
    let line = |r: &[String; 6]| {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}", w = *w))
            .collect();
        cells.join("  ").trim_end().to_owned()
    };
    outln!("{}", line(&header));
    for (row, check) in rows.iter().zip(&report.agents) {
        outln!("{}", line(row));
        if let Some(path) = &check.path {
            outln!("    at:   {path}");
        }
        if let Some(error) = &check.error {
            outln!("    why:  {error}");
        }
        if let Some(hint) = check.hint.as_deref().filter(|h| !h.is_empty()) {
            outln!("    hint: {hint}");
        }
        if check.status == AgentStatus::Unchecked {
            outln!("    note: its command is shell text; spur does not run it to check it");
        }
    }
    let usable = report.agents.iter().filter(|a| a.usable).count();
    outln!();
    outln!(
        "{usable} usable, {} not usable",
        report.agents.len() - usable
    );
}

/// The LOGIN column: what the status command said, `?` when it said nothing clear, `—`
/// when there is nothing to ask.
fn login(check: &AgentCheck) -> &'static str {
    match (check.authenticated, &check.probe) {
        (Login::Authenticated, _) => "logged in",
        (Login::Unauthenticated, _) => "logged out",
        (Login::Unknown, Some(_)) => "?",
        (Login::Unknown, None) => "—",
    }
}
