//! Where the policy changed between decisions: every sealed record of the task ledgers that
//! names the policy it was made under (a `done`, a `verified` record), in time order, and
//! each place where the hash differs from the decision before it, with what changed when
//! both snapshots are at hand.

use serde::Serialize;

use crate::policy::{short, Policy};
use crate::store::ledger_record::LedgerEntry;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger;

/// A decision that names its policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyDecision {
    /// When (RFC 3339 UTC).
    pub at: String,
    /// The task.
    pub wbs: String,
    /// What was decided: `done (pass)`, `verified (verify run …)`.
    pub decision: String,
    /// The policy's sha256.
    pub policy: String,
}

/// A decision made under another policy than the decision before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyChange {
    /// The decision before.
    pub previous: PolicyDecision,
    /// The decision under the new policy.
    pub decision: PolicyDecision,
    /// What changed, key by key; `None` when a snapshot is missing or was edited.
    pub changes: Option<Vec<String>>,
}

impl PolicyChange {
    /// One line for people.
    pub fn describe(&self) -> String {
        let what = match &self.changes {
            Some(changes) => changes.join(", "),
            None => "(a snapshot of the protected state's policies/ is missing or was edited: what changed is not known)"
                .to_owned(),
        };
        format!(
            "{} task {} {} under policy {}; before it, {} task {} {} under {}: {what}",
            self.decision.at,
            self.decision.wbs,
            self.decision.decision,
            short(&self.decision.policy),
            self.previous.at,
            self.previous.wbs,
            self.previous.decision,
            short(&self.previous.policy),
        )
    }
}

/// Every decision of the state directory's task ledgers that names its policy, oldest
/// first (sealed records of their intact, verified prefix only).
pub fn decisions(state_dir: &StateDir) -> Vec<PolicyDecision> {
    let mut found = Vec::new();
    for wbs in task_ledger::ledgered_tasks(state_dir) {
        let Ok(ledger) = task_ledger::read(state_dir, &wbs) else {
            continue;
        };
        for record in ledger.records.iter().filter(|r| r.is_keyed()) {
            let (decision, policy) = match &record.entry {
                LedgerEntry::Status(status) => match (&status.gate, &status.policy_sha256) {
                    (Some(gate), Some(policy)) => {
                        (format!("done ({})", gate.reason.as_str()), policy)
                    }
                    _ => continue,
                },
                LedgerEntry::Verified(verified) => match &verified.policy_sha256 {
                    Some(policy) => (
                        format!("verified (verify run {})", verified.verify_run),
                        policy,
                    ),
                    None => continue,
                },
                LedgerEntry::VerdictWritten(_) => continue,
            };
            found.push(PolicyDecision {
                at: record.at.clone(),
                wbs: record.wbs.clone(),
                decision,
                policy: policy.clone(),
            });
        }
    }
    found.sort_by(|a, b| (&a.at, &a.wbs).cmp(&(&b.at, &b.wbs)));
    found
}

/// Each decision whose policy is not the one of the decision before it.
pub fn policy_changes(state_dir: &StateDir) -> Vec<PolicyChange> {
    let decisions = decisions(state_dir);
    decisions
        .windows(2)
        .filter_map(|pair| match pair {
            [previous, decision] if previous.policy != decision.policy => {
                let before = Policy::stored(state_dir, &previous.policy).ok();
                let after = Policy::stored(state_dir, &decision.policy).ok();
                Some(PolicyChange {
                    previous: previous.clone(),
                    decision: decision.clone(),
                    changes: before.zip(after).map(|(b, a)| a.changes_since(&b)),
                })
            }
            _ => None,
        })
        .collect()
}
