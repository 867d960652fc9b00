//! `spur policy approve [--json]` and `spur policy show [--json]`: the gate's policy (the
//! `verify` and `doneGate` sections of `.spur/config.yaml`) that a person approved, kept
//! sealed in the protected state (`spur_engine::policy::approval`). Runs and gate decisions
//! outside runs refuse a config whose policy is not the approved one; a person reviews the
//! change and approves it here. A step never does: refused from inside a run.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;
use spur_engine::diagnostic::Code;
use spur_engine::policy::approval::{self, Approval};
use spur_engine::policy::{short, Policy, PolicyError};
use spur_engine::run::nested_call::{APPROVAL_REFUSAL, RUN_SOCKET_VAR};
use spur_engine::store::audit::current_user;
use spur_engine::store::state_dir::StateDir;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PolicyCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum PolicyCommand {
    /// Approve the gate's policy of .spur/config.yaml as it is now (a person's act; refused
    /// from a step of a run). Prints what changed since the approval it replaces.
    Approve {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the approved policy, the config's, and whether they match (exit 0 when they
    /// do, 1 when not or when nothing usable is approved).
    Show {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    match args.command {
        PolicyCommand::Approve { json } => approve(&state_dir, json),
        PolicyCommand::Show { json } => show(&state_dir, json),
    }
}

/// An approval or policy as `--json` shows it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyJson<'a> {
    sha256: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    policy: Value,
}

impl<'a> PolicyJson<'a> {
    fn approved(approval: &'a Approval) -> Self {
        Self {
            sha256: approval.policy().sha256(),
            at: Some(approval.at()),
            by: Some(approval.by()),
            path: None,
            policy: approval.policy().tree(),
        }
    }

    fn config(state_dir: &StateDir, policy: &'a Policy) -> Self {
        Self {
            sha256: policy.sha256(),
            at: None,
            by: None,
            path: Some(state_dir.config_path().display().to_string()),
            policy: policy.tree(),
        }
    }
}

/// The earlier approval, as `approve` and `show` read it: the record, none, or why it
/// approves nothing (`tampered`, `unverifiable`, `unusable`).
enum Earlier {
    Approved(Approval),
    None,
    Unusable(&'static str, PolicyError),
}

impl Earlier {
    fn read(state_dir: &StateDir) -> Self {
        match approval::read(state_dir) {
            Ok(Some(approval)) => Earlier::Approved(approval),
            Ok(None) => Earlier::None,
            Err(e) => {
                let kind = match &e {
                    PolicyError::ApprovalTampered { .. } => "tampered",
                    PolicyError::ApprovalUnverifiable { .. } => "unverifiable",
                    _ => "unusable",
                };
                Earlier::Unusable(kind, e)
            }
        }
    }

    /// `approved`, `none`, or why it is not.
    fn state(&self) -> &'static str {
        match self {
            Earlier::Approved(_) => "approved",
            Earlier::None => "none",
            Earlier::Unusable(kind, _) => kind,
        }
    }

    fn problem(&self) -> Option<String> {
        match self {
            Earlier::Unusable(_, e) => Some(e.to_string()),
            _ => None,
        }
    }

    fn approval(&self) -> Option<&Approval> {
        match self {
            Earlier::Approved(approval) => Some(approval),
            _ => None,
        }
    }
}

fn config_policy(state_dir: &StateDir) -> Result<Policy, Failure> {
    approval::config_policy(state_dir).map_err(|e| Failure::usage(miette::Report::new(e)))
}

/// A step of a run has the run's socket, or its id, in its environment.
fn in_a_run() -> bool {
    [RUN_SOCKET_VAR, "SPUR_RUN_ID"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

fn approve(state_dir: &StateDir, json: bool) -> CliResult {
    if in_a_run() {
        return Err(Failure::usage(miette::miette!(
            code = Code::PolicyApprovalFromStep,
            help = "a person reviews .spur/config.yaml and runs `spur policy approve` outside the run",
            "`spur policy approve` from a step of a run ({RUN_SOCKET_VAR} or SPUR_RUN_ID is set): {APPROVAL_REFUSAL}"
        )));
    }
    let policy = config_policy(state_dir)?;
    let earlier = Earlier::read(state_dir);
    let unchanged = earlier
        .approval()
        .is_some_and(|a| a.policy().sha256() == policy.sha256());
    let approved = match (unchanged, earlier.approval()) {
        (true, Some(approval)) => approval.clone(),
        _ => approval::approve(state_dir, &policy, &current_user())
            .map_err(|e| Failure::with_code(miette::Report::new(e), exit::FAILED))?,
    };
    let changes = match earlier.approval() {
        Some(before) if !unchanged => policy.described_changes_since(before.policy()),
        _ => Vec::new(),
    };
    if json {
        let document = serde_json::json!({
            "approved": PolicyJson::approved(&approved),
            "changed": !unchanged,
            "replaced": earlier.approval().filter(|_| !unchanged).map(PolicyJson::approved),
            "replacedProblem": earlier.problem(),
            "changes": changes,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let config = state_dir.config_path();
    if unchanged {
        outln!(
            "the gate's policy of {} ({}) is approved already, by {} at {}; nothing to do",
            config.display(),
            short(approved.policy().sha256()),
            approved.by(),
            approved.at()
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "approved the gate's policy of {}: {}, by {} at {}",
        config.display(),
        short(approved.policy().sha256()),
        approved.by(),
        approved.at()
    );
    print_fields(approved.policy());
    match &earlier {
        Earlier::Approved(before) => {
            outln!(
                "what changed since the approval it replaces ({}, by {} at {}):",
                short(before.policy().sha256()),
                before.by(),
                before.at()
            );
            for change in &changes {
                outln!("  {change}");
            }
        }
        Earlier::None => {}
        Earlier::Unusable(_, e) => outln!("it replaces an approval that approved nothing: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn show(state_dir: &StateDir, json: bool) -> CliResult {
    let policy = config_policy(state_dir)?;
    let earlier = Earlier::read(state_dir);
    let matches = earlier
        .approval()
        .is_some_and(|a| a.policy().sha256() == policy.sha256());
    let changes = match earlier.approval() {
        Some(approved) if !matches => policy.described_changes_since(approved.policy()),
        _ => Vec::new(),
    };
    let code = ExitCode::from(if matches { exit::SUCCESS } else { exit::FAILED });
    if json {
        let document = serde_json::json!({
            "approval": earlier.state(),
            "problem": earlier.problem(),
            "approved": earlier.approval().map(PolicyJson::approved),
            "config": PolicyJson::config(state_dir, &policy),
            "matches": matches,
            "changes": changes,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
        return Ok(code);
    }
    match &earlier {
        Earlier::Approved(approved) => {
            outln!(
                "approved: {}, by {} at {}",
                short(approved.policy().sha256()),
                approved.by(),
                approved.at()
            );
            if !matches {
                print_fields(approved.policy());
            }
        }
        Earlier::None => outln!(
            "approved: nothing yet (the first `spur run` or gate decision approves the config's \
             policy; or run `spur policy approve`)"
        ),
        Earlier::Unusable(kind, e) => outln!("approved: nothing usable ({kind}): {e}"),
    }
    outln!(
        "config:   {} ({})",
        short(policy.sha256()),
        state_dir.config_path().display()
    );
    print_fields(&policy);
    if matches {
        outln!("the config's policy is the approved one");
    } else if let Some(approved) = earlier.approval() {
        outln!(
            "the config's policy is NOT the approved one; what changed since {}:",
            short(approved.policy().sha256())
        );
        for change in &changes {
            outln!("  {change}");
        }
        outln!("review .spur/config.yaml; if the change is yours, run `spur policy approve`");
    } else {
        outln!("review .spur/config.yaml, then run `spur policy approve`");
    }
    Ok(code)
}

/// The policy's values, one per line, indented.
fn print_fields(policy: &Policy) {
    let fields = policy.described_fields();
    if fields.is_empty() {
        outln!("  (no verify or doneGate section: no verify gates, the gate's defaults)");
    }
    for field in fields {
        outln!("  {field}");
    }
}
