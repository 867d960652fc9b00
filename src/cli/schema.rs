//! `spur schema`: print the JSON Schema (draft 2020-12) of the pipeline format, for editors
//! (`# yaml-language-server: $schema=…`) and other tools.

use std::process::ExitCode;

use super::CliResult;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    out!("{}", spur_engine::pipeline::SCHEMA_JSON);
    Ok(ExitCode::SUCCESS)
}
