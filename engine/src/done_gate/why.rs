//! `spur task why W`: the gate's reasoning for a task without its decision — every check
//! the gate makes (ledger, verdict, policy, provenance, completeness, freshness), each with
//! its answer, not only the first that denies. Read only: no lock file, no record, no
//! policy snapshot, no key is made (`key_for_reading`), so the state directory and the
//! task file are byte-identical afterwards.

use serde::Serialize;

use crate::policy::PolicySource;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger;
use crate::verdict::{read_artifact_file, ArtifactOutcome, Evaluation, Verdict};
use crate::wbs::Wbs;

use super::{complete, deny_message, provenance, verified};

/// One check of the gate and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateCheck {
    /// `ledger`, `verdict`, `policy`, `provenance`, `completeness`, `freshness`.
    pub check: &'static str,
    /// Whether it lets the task through.
    pub ok: bool,
    /// What it found, for people.
    pub detail: String,
}

/// The gate's account of a task, as `spur task why --json` prints its `gate` part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateAccount {
    /// The task ledger says done through a sealed record of the gate.
    pub certified_done: bool,
    /// Whether `spur task update W done` would pass the gate now (outside a run).
    pub would_allow: bool,
    /// The artifact read.
    pub artifact: String,
    /// The verdict it stores, if it is valid.
    pub stored_verdict: Option<Verdict>,
    /// The verdict its rows recompute to, if it is valid.
    pub recomputed_verdict: Option<Verdict>,
    /// The harsher of the two (UNKNOWN when the artifact is missing or invalid).
    pub effective_verdict: Verdict,
    /// Every rule that fired on the rows (`rule N on …: …`).
    pub rules_fired: Vec<String>,
    /// Each check, in the gate's order.
    pub checks: Vec<GateCheck>,
}

/// The gate's account of `wbs`, read only, under the project's policy.
pub fn explain_done(state_dir: &StateDir, wbs: &Wbs) -> GateAccount {
    let mut checks = Vec::new();
    let path = state_dir.verdict_path(wbs);
    let read = read_artifact_file(&path, Some(state_dir.checkout_root()));
    let evaluation = Evaluation::new(&path, read.outcome, Some(wbs.as_str()));
    let mut account = GateAccount {
        certified_done: false,
        would_allow: false,
        artifact: path.display().to_string(),
        stored_verdict: evaluation.stored,
        recomputed_verdict: evaluation.computed_verdict(),
        effective_verdict: evaluation.effective,
        rules_fired: evaluation
            .computed
            .as_ref()
            .map(|a| {
                a.fired
                    .iter()
                    .map(|f| format!("{} on {}: {}", f.rule, f.subject, f.detail))
                    .collect()
            })
            .unwrap_or_default(),
        checks: Vec::new(),
    };
    let ledger = task_ledger::read(state_dir, wbs).and_then(|l| {
        l.intact()?;
        Ok(l)
    });
    let ledger = match ledger {
        Ok(ledger) => {
            account.certified_done = ledger.certified_done().is_some();
            checks.push(GateCheck {
                check: "ledger",
                ok: true,
                detail: if account.certified_done {
                    format!("task {wbs} is done: its ledger has the gate's sealed done record")
                } else {
                    format!(
                        "the task ledger is intact ({} record(s)), not done",
                        ledger.records.len()
                    )
                },
            });
            Some(ledger)
        }
        Err(e) => {
            checks.push(GateCheck {
                check: "ledger",
                ok: false,
                detail: format!("the task ledger cannot be trusted: {e}"),
            });
            None
        }
    };
    let verdict_ok = evaluation.effective == Verdict::Pass;
    checks.push(GateCheck {
        check: "verdict",
        ok: verdict_ok,
        detail: if verdict_ok {
            format!("verdict PASS in {} (stored and recomputed)", path.display())
        } else {
            deny_message(wbs, &evaluation)
        },
    });
    let policy = PolicySource::Project.resolve(state_dir);
    match &policy {
        Ok(p) => checks.push(
            match crate::policy::approval::require(state_dir, &p.policy) {
                // Nothing approved yet: the first decision approves it.
                Ok(_) => GateCheck {
                    check: "policy",
                    ok: true,
                    detail: format!(
                        "the project's policy {} (`.spur/config.yaml`)",
                        crate::policy::short(p.sha256())
                    ),
                },
                Err(e) => GateCheck {
                    check: "policy",
                    ok: false,
                    detail: e.to_string(),
                },
            },
        ),
        Err(e) => checks.push(GateCheck {
            check: "policy",
            ok: false,
            detail: format!("the done-gate policy cannot be read: {e}"),
        }),
    }
    if let (Some(ledger), Ok(policy)) = (&ledger, &policy) {
        checks.push(
            match provenance::check(wbs, &path, ledger, read.sha256.as_deref(), &policy.config) {
                Ok(provenance::Provenance::Spur) => GateCheck {
                    check: "provenance",
                    ok: true,
                    detail: "the artifact is the one spur last recorded writing".to_owned(),
                },
                Ok(provenance::Provenance::External) => GateCheck {
                    check: "provenance",
                    ok: true,
                    detail: "written outside spur, accepted by doneGate.externalVerdicts: allow"
                        .to_owned(),
                },
                Err(message) => GateCheck {
                    check: "provenance",
                    ok: false,
                    detail: message,
                },
            },
        );
        let completeness = match &evaluation.outcome {
            ArtifactOutcome::Valid(artifact) => {
                complete::check_complete(state_dir, wbs, artifact, &path)
            }
            _ => Err("no valid artifact to hold a row per requirement and criterion".to_owned()),
        };
        checks.push(GateCheck {
            check: "completeness",
            ok: completeness.is_ok(),
            detail: completeness.err().unwrap_or_else(|| {
                "every requirement and criterion of the task file has a row (or there is no task file)".to_owned()
            }),
        });
        let fresh = verified::check(state_dir, ledger, wbs, policy.config());
        checks.push(GateCheck {
            check: "freshness",
            ok: fresh.is_ok(),
            detail: match fresh {
                Ok(Some(_)) => {
                    "verified at the current tree: every required gate is PASS or WARN".to_owned()
                }
                Ok(None) => {
                    "nothing to verify: no verify gates and no criterion commands".to_owned()
                }
                Err(message) => message,
            },
        });
    }
    account.would_allow = account.certified_done || checks.iter().all(|c| c.ok);
    account.checks = checks;
    account
}
