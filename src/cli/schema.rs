//! `spur schema`: print the JSON Schema (draft 2020-12) of the pipeline format, for editors
//! (`# yaml-language-server: $schema=…`) and other tools.

use std::process::ExitCode;

use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Accepted for uniformity: the schema is JSON either way.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let _ = args.json;
    out!("{}", spur_engine::pipeline::SCHEMA_JSON);
    Ok(ExitCode::SUCCESS)
}
