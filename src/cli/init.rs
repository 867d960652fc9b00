//! `spur init [--agent PRESET] [--json]`: scaffold a project in the current directory —
//! `.spur/config.yaml`, the standard task pipeline (the file spur ships, embedded here so
//! it is the same text) and a sample task — and print the command that runs the sample.
//! Writes nothing when any of the files exists (exit 2, listing them).

use std::process::ExitCode;

use spur_engine::agent::preset::Preset;
use spur_engine::scaffold::{detect_preset, Scaffold};
use spur_engine::store::timestamp;

use super::{CliResult, Failure};

/// The task pipeline spur ships.
const TASK_PIPELINE: &str = include_str!("../../pipelines/task-pipeline.yaml");

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent: claude, codex, gemini, opencode, aider or stub (spur's stand-in).
    /// Default: the first of those CLIs found on PATH, else stub.
    #[arg(long, value_name = "PRESET", value_parser = parse_preset)]
    agent: Option<Preset>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_preset(s: &str) -> Result<Preset, String> {
    s.parse().map_err(|()| {
        format!(
            "not a preset: {s:?} (one of {})",
            Preset::ALL.map(Preset::name).join(", ")
        )
    })
}

pub fn run(args: Args) -> CliResult {
    let root = std::env::current_dir().map_err(|e| {
        Failure::usage(miette::miette!(
            code = spur_engine::diagnostic::Code::UsageCwd,
            "cannot read the current directory: {e}"
        ))
    })?;
    let (preset, found) = match args.agent {
        Some(p) => (p, None),
        None => detect_preset(None),
    };
    let today = timestamp::now();
    let scaffold = Scaffold::new(preset, TASK_PIPELINE, &today);
    scaffold.write(&root).map_err(Failure::usage)?;
    let created: Vec<String> = scaffold
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    if args.json {
        let doc = serde_json::json!({
            "agent": preset.name(),
            "created": created,
            "next": ["spur agent doctor", scaffold.next],
        });
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    let why = match (args.agent, &found, preset) {
        (Some(_), _, _) => String::new(),
        (None, Some(path), _) => format!(" (found {})", path.display()),
        (None, None, _) => " (spur's stand-in: no agent CLI found on PATH)".to_owned(),
    };
    outln!("spur init: agent {preset}{why}");
    for path in &created {
        outln!("  created {path}");
    }
    outln!("next:");
    outln!("  spur agent doctor");
    outln!("  {}", scaffold.next);
    Ok(ExitCode::SUCCESS)
}
