//! `spur task why WBS [--json]`: a read-only account of why a task is or is not done — its
//! status and certification, what its task file claims, where its lifecycle instance
//! stands and whether the lifecycle has an edge into done from there, `spur task check
//! --as done`, and every check of the done gate with its answer. Nothing is written: no
//! ledger record, no lock file, no view, no key. Exit 0 when the task is done, 1 when not,
//! 2 when the wbs is not one.

use std::process::ExitCode;

use serde::Serialize;
use spur_engine::done_gate::{explain_done, GateAccount};
use spur_engine::lifecycle::{self, project_lifecycle, EntityKey, EntityKind};
use spur_engine::store::certification;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task::file_status::{claim, FileClaim};
use spur_engine::task::lifecycle_gate::{lifecycle_document, structural_check};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs).
    wbs: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The task's lifecycle, as far as done is concerned.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LifecycleAccount {
    pipeline: String,
    path: String,
    /// Where its instance stands (`None`: no instance yet).
    instance_state: Option<String>,
    /// The status the next request starts from (the ledger's).
    from: String,
    /// Whether the lifecycle has an edge from there into done.
    edge_to_done: bool,
    detail: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StructureAccount {
    ok: bool,
    detail: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WhyJson {
    wbs: String,
    done: bool,
    status: String,
    certification: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    certification_detail: Option<String>,
    file: Option<String>,
    file_status: Option<String>,
    lifecycle: Option<LifecycleAccount>,
    structure: Option<StructureAccount>,
    gate: GateAccount,
    /// What stands between the task and done, one line each (empty when done).
    reasons: Vec<String>,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let check = certification::check(state_dir, &wbs);
    let status = check.record.status.clone();
    let document = lifecycle_document(state_dir, &wbs).ok().flatten();
    let root = state_dir.project_root();
    let file = document.as_ref().map(|d| {
        d.path()
            .strip_prefix(root)
            .unwrap_or(d.path())
            .display()
            .to_string()
    });
    let file_status = document.as_ref().and_then(|d| d.status_text());
    let gate = explain_done(state_dir, &wbs);
    let done = gate.certified_done;
    let mut reasons = Vec::new();
    if let Some(claimed) = &file_status {
        match claim(&status, Some(claimed)) {
            FileClaim::UncertifiedDone => reasons.push(format!(
                "its task file says `status: {claimed}`, but only the done gate's record is done"
            )),
            FileClaim::Wins(s) => reasons.push(format!(
                "its task file says {s}: recorded at spur's next touch (file wins)"
            )),
            _ => {}
        }
    }
    let (lifecycle, structure) = match &document {
        Some(document) if !done => {
            let lifecycle = lifecycle_account(state_dir, &wbs, status.as_str());
            if let Some(l) = &lifecycle {
                if !l.edge_to_done {
                    reasons.push(l.detail.clone());
                }
            }
            let structure = match structural_check(document, &wbs, status.as_str(), "done", root) {
                Ok(()) => StructureAccount {
                    ok: true,
                    detail: format!("`spur task check {wbs} --as done` passes"),
                },
                Err(refused) => {
                    reasons.push(refused.to_string());
                    StructureAccount {
                        ok: false,
                        detail: refused.to_string(),
                    }
                }
            };
            (lifecycle, Some(structure))
        }
        _ => (None, None),
    };
    if !done {
        reasons.extend(
            gate.checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{}: {}", c.check, c.detail)),
        );
    }
    let doc = WhyJson {
        wbs: wbs.to_string(),
        done,
        status: status.to_string(),
        certification: check.certification.as_str(),
        certification_detail: check.detail.clone(),
        file,
        file_status,
        lifecycle,
        structure,
        gate,
        reasons,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        render(&doc);
    }
    Ok(ExitCode::from(if doc.done {
        exit::SUCCESS
    } else {
        exit::FAILED
    }))
}

fn lifecycle_account(state_dir: &StateDir, wbs: &Wbs, from: &str) -> Option<LifecycleAccount> {
    let lifecycle = match project_lifecycle(state_dir, EntityKind::Task) {
        Ok(l) => l,
        Err(e) => {
            return Some(LifecycleAccount {
                pipeline: "task-lifecycle".to_owned(),
                path: String::new(),
                instance_state: None,
                from: from.to_owned(),
                edge_to_done: false,
                detail: format!("the task lifecycle cannot be used: {e}"),
            })
        }
    };
    let pipeline = lifecycle.pipeline.pipeline();
    let instance_state = lifecycle::show(state_dir, &lifecycle.pipeline, &EntityKey::of_task(wbs))
        .ok()
        .and_then(|v| v.state);
    let out: Vec<&str> = pipeline
        .transitions
        .iter()
        .filter(|t| t.from.value == from)
        .map(|t| t.to.value.as_str())
        .collect();
    let edge_to_done = out.contains(&"done");
    let detail = if edge_to_done {
        format!("{} has an edge {from} → done", pipeline.name.value)
    } else if out.is_empty() {
        format!("{} has no transition out of {from}", pipeline.name.value)
    } else {
        format!(
            "{} has no transition {from} → done; from {from} it goes to: {}",
            pipeline.name.value,
            out.join(", ")
        )
    };
    Some(LifecycleAccount {
        pipeline: pipeline.name.value.clone(),
        path: lifecycle.path.display().to_string(),
        instance_state,
        from: from.to_owned(),
        edge_to_done,
        detail,
    })
}

fn render(doc: &WhyJson) {
    if doc.done {
        outln!("task {} is done (certified by the done gate)", doc.wbs);
    } else {
        outln!("task {} is not done (status {})", doc.wbs, doc.status);
    }
    outln!("  certification: {}", doc.certification);
    if let (Some(file), Some(status)) = (&doc.file, &doc.file_status) {
        outln!("  file: {file} (status: {status})");
    }
    for reason in doc
        .reasons
        .iter()
        .filter(|r| r.starts_with("its task file says"))
    {
        outln!("    {reason}");
    }
    if let Some(l) = &doc.lifecycle {
        let mark = if l.edge_to_done { "✓" } else { "✗" };
        let at = l
            .instance_state
            .as_deref()
            .map(|s| format!("; its instance stands in {s}"))
            .unwrap_or_default();
        outln!("  {mark} lifecycle: {}{at}", l.detail);
    }
    if let Some(s) = &doc.structure {
        outln!("  {} structure: {}", if s.ok { "✓" } else { "✗" }, s.detail);
    }
    let g = &doc.gate;
    let stored = g
        .stored_verdict
        .map(|v| v.to_string())
        .unwrap_or_else(|| "-".into());
    let recomputed = g
        .recomputed_verdict
        .map(|v| v.to_string())
        .unwrap_or_else(|| "-".into());
    outln!(
        "  verdict {} (stored {stored}, recomputed {recomputed}) in {}",
        g.effective_verdict,
        g.artifact
    );
    for rule in &g.rules_fired {
        outln!("    {rule}");
    }
    for c in &g.checks {
        outln!(
            "  {} {}: {}",
            if c.ok { "✓" } else { "✗" },
            c.check,
            c.detail
        );
    }
    if !doc.done {
        outln!(
            "  gate: {}",
            if g.would_allow {
                "would allow `spur task update` to done now"
            } else {
                "would deny"
            }
        );
    }
}
