//! `spur feature update ID [STATUS] [--field K --value V] [--section NAME --from-file F]`
//! and `spur feature sync ID [--dry-run] [--force]`: a feature's status moves only as a
//! request to its lifecycle instance (`feature:<id>` of `.spur/workflows/feature-lifecycle.yaml`
//! or the shipped copy), re-seeded from the file's `status:`, its guards deciding; into
//! `done` spur also brings `spur feature check ID --as done`, so a feature is never done
//! over a task the done gate has not certified. The file's `status:` is written after.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::diagnostic::Code;
use spur_engine::feature::{
    canonical_feature_status, check_feature, linked_tasks, locate_feature, propose,
    FeatureCheckOptions, Proposal, FEATURE_STATUSES,
};
use spur_engine::lifecycle::{
    project_lifecycle, request_transition, EntityKey, EntityKind, RequestOutcome, TransitionRequest,
};
use spur_engine::run::TaskDoneGate;
use spur_engine::store::bounded_read::read_bounded;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task_file::{TaskDocument, FEATURE_SECTIONS};

use super::failure::exit;
use super::feature::FeatureRef;
use super::task_lifecycle::lifecycle_settings;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The feature id.
    id: String,
    /// The new status (backlog, active, verifying, blocked, done, cancelled).
    status: Option<String>,
    /// A frontmatter field to set (with --value): priority, name, tags….
    #[arg(long, requires = "value", value_name = "KEY")]
    field: Option<String>,
    /// The field's new value.
    #[arg(long, requires = "field", value_name = "VALUE")]
    value: Option<String>,
    /// Replace this section (with --from-file): Goal, Scope, Acceptance Criteria, Tasks, Notes, History.
    #[arg(long, requires = "from_file", value_name = "NAME")]
    section: Option<String>,
    /// The file holding the section's new body.
    #[arg(long, requires = "section", value_name = "FILE")]
    from_file: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// The feature id.
    id: String,
    /// Say what would change; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also move a verifying or done feature back to active when its tasks reopened.
    #[arg(long)]
    force: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UpdateJson {
    #[serde(rename = "ref")]
    entity: FeatureRef,
    event_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    from_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to_status: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

const SECTION_FILE_LIMIT: u64 = 1024 * 1024;

pub fn update(args: UpdateArgs, state_dir: &StateDir) -> CliResult {
    let root = state_dir.project_root();
    let path = locate_feature(root, &args.id).map_err(Failure::usage)?;
    if args.status.is_none() && args.field.is_none() && args.section.is_none() {
        return Err(Failure::usage(miette::miette!(
            code = Code::FeatureInvalid,
            help = "spur feature update ID STATUS, --field K --value V, or --section NAME --from-file F",
            "nothing to update"
        )));
    }
    let mut result = UpdateJson {
        entity: FeatureRef::new(&args.id, &path),
        event_name: "feature.updated",
        from_status: None,
        to_status: None,
        warnings: Vec::new(),
    };
    if let (Some(section), Some(from_file)) = (&args.section, &args.from_file) {
        let bytes = read_bounded(from_file, SECTION_FILE_LIMIT).map_err(|e| {
            Failure::usage(miette::miette!(
                code = Code::FeatureInvalid,
                "cannot read {}: {e}",
                from_file.display()
            ))
        })?;
        let body = String::from_utf8(bytes).map_err(|_| {
            Failure::usage(miette::miette!(
                code = Code::FeatureInvalid,
                "{} is not UTF-8",
                from_file.display()
            ))
        })?;
        let document = TaskDocument::read(&path).map_err(Failure::usage)?;
        let write = document
            .replace_section_of(section, &body, FEATURE_SECTIONS)
            .map_err(Failure::usage)?;
        for stripped in &write.stripped {
            result.warnings.push(format!(
                "a heading was taken out of the section: {stripped}"
            ));
        }
        stamp(write.document)?
            .write()
            .map_err(|e| Failure::with_code(e, exit::FAILED))?;
        if !args.json {
            for w in &result.warnings {
                eprintln!("warning: {w}");
            }
            outln!("Updated section '{section}' in feature {}", args.id);
        }
    }
    if let (Some(field), Some(value)) = (&args.field, &args.value) {
        if field == "status" || field == "id" {
            return Err(Failure::usage(miette::miette!(
                code = Code::FeatureInvalid,
                help = "the status moves through `spur feature update ID STATUS`; the id is the file's",
                "--field {field} cannot be set"
            )));
        }
        let document = TaskDocument::read(&path).map_err(Failure::usage)?;
        let (document, _) = document.set_field(field, value).map_err(Failure::usage)?;
        stamp(document)?
            .write()
            .map_err(|e| Failure::with_code(e, exit::FAILED))?;
        if !args.json {
            outln!("Updated {field} on feature {}", args.id);
        }
    }
    if let Some(status) = &args.status {
        let (from, to) = transition(state_dir, &args.id, &path, status)?;
        if !args.json {
            outln!("{}: {from} → {to}", args.id);
        }
        result.event_name = "feature.transitioned";
        result.from_status = Some(from);
        result.to_status = Some(to);
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn stamp(document: TaskDocument) -> Result<TaskDocument, Failure> {
    if document
        .frontmatter()
        .is_some_and(|f| f.get("updated_at").is_some())
    {
        let now = spur_engine::store::timestamp::now();
        return Ok(document
            .set_field("updated_at", &now)
            .map_err(Failure::usage)?
            .0);
    }
    Ok(document)
}

/// The file's status, canonical (`backlog` when it has none).
fn file_status(path: &Path) -> Result<String, Failure> {
    let document = TaskDocument::read(path).map_err(Failure::usage)?;
    Ok(document
        .status_text()
        .and_then(|s| canonical_feature_status(&s))
        .unwrap_or("backlog")
        .to_owned())
}

/// Move feature `id` into `status` through its lifecycle; `(from, to)` on success, a
/// refusal is exit 1.
fn transition(
    state_dir: &StateDir,
    id: &str,
    path: &Path,
    status: &str,
) -> Result<(String, String), Failure> {
    let to = canonical_feature_status(status).ok_or_else(|| {
        Failure::usage(miette::miette!(
            code = Code::FeatureInvalid,
            help = format!("the feature statuses are {}", FEATURE_STATUSES.join(", ")),
            "{status:?} is not a feature status"
        ))
    })?;
    let from = file_status(path)?;
    if from == to {
        return Ok((from, to.to_owned()));
    }
    let lifecycle = project_lifecycle(state_dir, EntityKind::Feature).map_err(Failure::usage)?;
    let entity = EntityKey::parse(&format!("feature:{id}"))
        .map_err(|e| Failure::usage(miette::miette!(code = Code::FeatureInvalid, "{e}")))?;
    let settings = lifecycle_settings(state_dir, None)?;
    let feature_path = path.to_path_buf();
    // A feature is done only over tasks the done gate certified, whatever the guards say.
    let check = |target: &str| {
        if target != "done" {
            return Ok(());
        }
        let report = check_feature(
            state_dir,
            id,
            &feature_path,
            FeatureCheckOptions {
                as_status: Some("done"),
                strict: false,
            },
        )
        .map_err(|e| e.to_string())?;
        if report.pass {
            return Ok(());
        }
        let errors: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity == spur_engine::feature::Severity::Error)
            .map(|f| format!("{} {}", f.code, f.message))
            .collect();
        Err(format!(
            "`spur feature check {id} --as done` does not pass — {}",
            errors.join("; ")
        ))
    };
    let answer = request_transition(
        &TransitionRequest {
            pipeline: &lifecycle.pipeline,
            pipeline_path: lifecycle.path.clone(),
            entity,
            to: to.to_owned(),
            current: Some(from.clone()),
            vars: Vec::new(),
            force_done_reason: None,
            structural_check: Some(&check),
        },
        &settings,
        &mut TaskDoneGate,
    )
    .map_err(super::task_lifecycle::status_change_failure)?;
    match answer.outcome {
        RequestOutcome::Denied => {
            let detail = answer
                .denied
                .map(|d| d.detail)
                .unwrap_or_else(|| "refused".to_owned());
            Err(Failure::with_code(
                miette::miette!(
                    code = Code::FeatureRefused,
                    help = format!(
                        "`spur feature check {id} --as {to}` shows each finding; `spur lifecycle show` the request"
                    ),
                    "feature {id} stays {from}: {detail}"
                ),
                exit::FAILED,
            ))
        }
        RequestOutcome::Allowed | RequestOutcome::Unchanged => {
            let document = TaskDocument::read(path).map_err(Failure::usage)?;
            let (document, _) = document.set_field("status", to).map_err(Failure::usage)?;
            stamp(document)?
                .write()
                .map_err(|e| Failure::with_code(e, exit::FAILED))?;
            Ok((from, to.to_owned()))
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SyncJson {
    proposal: Proposal,
    applied: bool,
    dry_run: bool,
    hops: Vec<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    denied: Option<String>,
}

/// The lifecycle's forward path between two statuses, hop by hop.
fn hops(from: &str, to: &str) -> Vec<&'static str> {
    const FORWARD: [&str; 4] = ["backlog", "active", "verifying", "done"];
    let at = |s: &str| FORWARD.iter().position(|f| *f == s);
    match (at(from), at(to)) {
        (Some(a), Some(b)) if b > a => FORWARD.get(a + 1..=b).unwrap_or_default().to_vec(),
        _ if to == "active" => vec!["active"],
        _ => Vec::new(),
    }
}

pub fn sync(args: SyncArgs, state_dir: &StateDir) -> CliResult {
    let path = locate_feature(state_dir.project_root(), &args.id).map_err(Failure::usage)?;
    let from = file_status(&path)?;
    let tasks = linked_tasks(state_dir, &args.id);
    let proposal = propose(&args.id, &from, &tasks);
    let mut doc = SyncJson {
        applied: false,
        dry_run: args.dry_run,
        hops: Vec::new(),
        denied: None,
        proposal,
    };
    let wanted = doc.proposal.to != doc.proposal.from
        && !args.dry_run
        && (!doc.proposal.reopen || args.force);
    if wanted {
        let mut at = from.clone();
        for hop in hops(&from, &doc.proposal.to) {
            match transition(state_dir, &args.id, &path, hop) {
                Ok(_) => {
                    doc.hops.push([at.clone(), hop.to_owned()]);
                    at = hop.to_owned();
                }
                Err(failure) => {
                    doc.denied = Some(format!("{at} → {hop} refused: {}", failure.report));
                    break;
                }
            }
        }
        doc.applied = !doc.hops.is_empty();
    }
    let tag = if doc.applied {
        "UPDATED"
    } else if doc.proposal.from == doc.proposal.to {
        "NOOP"
    } else {
        "SKIPPED"
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        outln!(
            "Feature {}: [{tag}] {} -> {} ({})",
            args.id,
            doc.proposal.from,
            doc.proposal.to,
            doc.proposal.reason
        );
        if let Some(denied) = &doc.denied {
            outln!("  {denied}");
        }
    }
    Ok(ExitCode::from(if doc.denied.is_some() {
        exit::FAILED
    } else {
        exit::SUCCESS
    }))
}
