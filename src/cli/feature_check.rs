//! `spur feature check [ID] [--as STATUS] [--strict] [--json]`: the structural check of
//! one feature file, or of every one. Exit 0 when all pass, 1 when one fails, 2 when a
//! feature cannot be found or read.

use std::process::ExitCode;

use spur_engine::feature::{
    canonical_feature_status, check_feature, list_features, locate_feature, FeatureCheckOptions,
    Severity, FEATURE_STATUSES,
};
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The feature id (every feature when omitted).
    id: Option<String>,
    /// Check as this status: the one the feature is about to enter.
    #[arg(long = "as", value_name = "STATUS")]
    as_status: Option<String>,
    /// Every warning is an error.
    #[arg(long)]
    strict: bool,
    /// Print one JSON array instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let root = state_dir.project_root();
    if let Some(raw) = &args.as_status {
        if canonical_feature_status(raw).is_none() {
            return Err(Failure::usage(miette::miette!(
                code = spur_engine::diagnostic::Code::FeatureInvalid,
                help = format!("the feature statuses are {}", FEATURE_STATUSES.join(", ")),
                "{raw:?} is not a feature status"
            )));
        }
    }
    let targets: Vec<(String, std::path::PathBuf)> = match &args.id {
        Some(id) => vec![(
            id.clone(),
            locate_feature(root, id).map_err(Failure::usage)?,
        )],
        None => list_features(root)
            .into_iter()
            .map(|f| (f.id, f.path))
            .collect(),
    };
    let options = FeatureCheckOptions {
        as_status: args.as_status.as_deref(),
        strict: args.strict,
    };
    let mut reports = Vec::new();
    for (id, path) in targets {
        reports.push(check_feature(state_dir, &id, &path, options).map_err(Failure::usage)?);
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&reports).unwrap_or_default()
        );
    } else {
        for r in &reports {
            outln!(
                "{} ({}): {}",
                r.id,
                r.status,
                if r.pass { "PASS" } else { "FAIL" }
            );
            for f in &r.findings {
                let tag = match f.severity {
                    Severity::Error => "ERR",
                    Severity::Warning => "WARN",
                };
                let section = if f.section.is_empty() {
                    String::new()
                } else {
                    format!(" {}", f.section)
                };
                outln!(
                    "  [{tag}] {}{section} ({}:{}): {}",
                    f.layer,
                    r.file,
                    f.line,
                    f.message
                );
            }
        }
    }
    Ok(ExitCode::from(if reports.iter().all(|r| r.pass) {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}
