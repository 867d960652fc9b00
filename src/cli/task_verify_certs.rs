//! `spur task verify-certs [--dir D] [--allowed-signers F] [--accept HOW]… [--json]`: every
//! task file under `docs/tasks*/` that claims done must have a valid signed done
//! certificate. Exit 0 when all do, 1 naming every one that does not, 2 when the check
//! cannot be made (no `allowed_signers`, bad configuration). Meant for CI.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::done_certificate::{verify_certs, CertsReport, VerifyCertsOptions};
use spur_engine::done_gate::AllowReason;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The certificate directory (default: doneGate.certificates.dir, else docs/tasks/.certs).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The OpenSSH allowed_signers file (default: doneGate.certificates.allowedSigners, else
    /// <dir>/allowed_signers).
    #[arg(long)]
    allowed_signers: Option<PathBuf>,
    /// Also accept tasks that got done this way (a PASS is always accepted); repeatable.
    #[arg(long, value_enum)]
    accept: Vec<Accept>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// How a task may have got done, beyond a PASS.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Accept {
    /// A PASS in an artifact written outside spur (doneGate.externalVerdicts: allow).
    External,
    /// A forced override (--force-done --reason), audited.
    Forced,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let mut accept = vec![AllowReason::Pass];
    accept.extend(args.accept.iter().map(|a| match a {
        Accept::External => AllowReason::External,
        Accept::Forced => AllowReason::Forced,
    }));
    accept.dedup();
    let options = VerifyCertsOptions {
        dir: args.dir,
        allowed_signers: args.allowed_signers,
        accept,
    };
    let report = verify_certs(state_dir, &options).map_err(Failure::usage)?;
    let failed = report.failures().count();
    if args.json {
        outln!("{}", json(&report, failed));
    } else {
        human(&report, failed);
    }
    Ok(ExitCode::from(if failed == 0 {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}

/// The `--json` document: the report with `ok` and the counts first.
fn json(report: &CertsReport, failed: usize) -> String {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Document<'a> {
        ok: bool,
        claimed_done: usize,
        failed: usize,
        #[serde(flatten)]
        report: &'a CertsReport,
    }
    let document = Document {
        ok: failed == 0,
        claimed_done: report.tasks.len(),
        failed,
        report,
    };
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

fn human(report: &CertsReport, failed: usize) {
    for task in &report.tasks {
        let wbs = task.wbs.as_deref().unwrap_or("?");
        match (&task.signed_by, &task.failure) {
            (Some(signed), _) => outln!(
                "ok      {wbs}  {}  signed by {} ({}), {}",
                task.task_file,
                signed.principal,
                signed.key,
                signed.reason
            ),
            (None, Some(failure)) => {
                outln!("FAILED  {wbs}  {}  [{}]", task.task_file, failure.code);
                outln!("        {}", failure.message);
            }
            (None, None) => {}
        }
    }
    let total = report.tasks.len();
    let noun = if total == 1 {
        "task file claims"
    } else {
        "task files claim"
    };
    if failed == 0 {
        outln!(
            "{total} {noun} done; every one has a valid certificate (allowed signers: {})",
            report.allowed_signers
        );
    } else {
        outln!(
            "{total} {noun} done; {failed} without a valid certificate (allowed signers: {})",
            report.allowed_signers
        );
    }
}
