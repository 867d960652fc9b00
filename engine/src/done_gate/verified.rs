//! The gate's check "verified at this tree": when the project configures verify gates, a
//! task is done only if, at the tree as it is now, every required gate's latest result is
//! PASS or WARN — read from spur's own `verified` records in the task ledger, never from rows
//! of the verdict artifact (a step can rewrite those; it cannot append to the ledger's
//! chain). So evidence is bound to the tree it was taken at: edit, add, remove, rename or
//! chmod a file after verify and the task needs a new verify run.
//!
//! A `verified` record counts only when the tree did not change while its run's gates ran
//! (its `treeChangedBy` is empty): a gate that rewrote the tree checked a tree that is not
//! the one recorded. Results of several runs at the same tree combine (a `--gate` re-run of
//! the one gate that failed), the latest per gate winning.

use crate::store::ledger_record::Verified;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::LedgerRead;
use crate::task_file::{locate_task_file, read_task_file, TaskFile};
use crate::tree;
use crate::verify::config::VerifyConfig;
use crate::verify::plan;
use crate::verify::verdict_checks::check_name;
use crate::verify::GateStatus;
use crate::wbs::Wbs;

/// The gate ids a `verified` record must show green for the task to be done: the enabled
/// configured gates, then `evidence-command:<AC id>` for each acceptance criterion of the
/// task file that names a command (all as `gate-<name>`, the ids verify records).
pub(crate) fn required_gates(config: &VerifyConfig, task: Option<&TaskFile>) -> Vec<String> {
    let commanded = task.map(plan::commanded_gate_names).unwrap_or_default();
    config
        .gates
        .iter()
        .filter(|g| g.enabled)
        .map(|g| g.name.as_str())
        .chain(commanded.iter().map(String::as_str))
        .map(check_name)
        .collect()
}

/// The tree a done was certified at: its fingerprint and the latest verify run whose
/// results at that tree the gate accepted. A done certificate records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VerifiedAt {
    /// Lowercase hex sha256 of the tree ([`crate::tree::fingerprint`]).
    pub(crate) fingerprint: String,
    /// The verify run.
    pub(crate) verify_run: String,
}

/// `Ok` when the task's evidence holds at the current tree — with that tree, or `None` when
/// the project verifies nothing; else the deny message, which names what is wrong and the
/// command that fixes it.
pub(crate) fn check(
    state_dir: &StateDir,
    ledger: &LedgerRead,
    wbs: &Wbs,
) -> Result<Option<VerifiedAt>, String> {
    let deny = |cause: String| {
        format!(
            "task {wbs} cannot be marked done: {cause}. Re-run the gates at this tree: spur verify \
             --wbs {wbs} (spur verify fingerprint shows the tree's fingerprint), or override with: \
             spur task update {wbs} done --force-done --reason \"why\" (recorded in the audit log)"
        )
    };
    let config = VerifyConfig::load(state_dir)
        .map_err(|e| deny(format!("the verify configuration cannot be used: {e}")))?;
    // A task file that cannot be used has already denied (the completeness check).
    let task = locate_task_file(wbs, None, state_dir.project_root(), state_dir)
        .and_then(|path| read_task_file(&path))
        .ok();
    let required = required_gates(&config, task.as_ref());
    let records: Vec<&Verified> = ledger.records.iter().filter_map(|r| r.verified()).collect();
    // A project that verifies nothing has nothing to bind. Once a verify run recorded its
    // gates for the task, the tree (config included) is held to it even if the gates are
    // then removed from the configuration.
    if required.is_empty() && records.is_empty() {
        return Ok(None);
    }
    let Some(latest) = records.last().copied() else {
        return Err(deny(format!(
            "no spur verify run has recorded its gates for task {wbs} (required: {})",
            required.join(", ")
        )));
    };
    let excludes = tree::config_excludes(state_dir, &config)
        .map_err(|e| deny(format!("the tree cannot be fingerprinted: {e}")))?;
    let current = tree::fingerprint(state_dir.project_root(), state_dir.root(), &excludes)
        .map_err(|e| deny(format!("the tree cannot be fingerprinted: {e}")))?
        .hex;
    let at_tree: Vec<&Verified> = records
        .iter()
        .copied()
        .filter(|v| v.fingerprint == current)
        .collect();
    if at_tree.is_empty() {
        return Err(deny(format!(
            "the tree changed since verify run {} (fingerprint {} then, {} now)",
            latest.verify_run,
            short(&latest.fingerprint),
            short(&current)
        )));
    }
    let settled: Vec<&Verified> = at_tree
        .iter()
        .copied()
        .filter(|v| v.tree_changed_by.is_empty())
        .collect();
    if settled.is_empty() {
        let run = at_tree.last().copied().unwrap_or(latest);
        return Err(deny(format!(
            "verify run {} changed the tree while its gates ran (gates that could have: {}), so its results are not of this tree",
            run.verify_run,
            run.tree_changed_by.join(", ")
        )));
    }
    let mut problems = Vec::new();
    for gate in &required {
        let result = settled.iter().rev().find_map(|v| {
            v.gates
                .iter()
                .rev()
                .find(|g| g.id == *gate)
                .map(|g| (g.status, v.verify_run.as_str()))
        });
        match result {
            Some((GateStatus::Pass | GateStatus::Warn, _)) => {}
            Some((status, run)) => problems.push(format!("{gate} {status} (verify run {run})")),
            None => problems.push(format!("{gate} has no result at this tree")),
        }
    }
    if problems.is_empty() {
        let run = settled.last().copied().unwrap_or(latest);
        Ok(Some(VerifiedAt {
            fingerprint: current,
            verify_run: run.verify_run.clone(),
        }))
    } else {
        Err(deny(format!(
            "at this tree not every required gate is PASS or WARN: {}",
            problems.join(", ")
        )))
    }
}

/// The first 12 hex digits of a fingerprint, as shown.
fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn required_gates_add_each_criterion_command_after_the_enabled_gates() {
        let config = VerifyConfig::parse(
            Path::new("c.yaml"),
            "verify:\n  gates:\n    quality: {command: ./check}\n    off: {command: x, enabled: false}\n",
        )
        .unwrap();
        let task = crate::task_file::parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 x\n## Acceptance Criteria\n\
             - [ ] AC-1: `./check` passes\n- [ ] AC-2: polite\n- [ ] `cli`: `spur x` works\n",
        )
        .unwrap();
        assert_eq!(
            required_gates(&config, Some(&task)),
            [
                "gate-quality",
                "gate-evidence-command:AC-1",
                "gate-evidence-command:cli"
            ]
        );
        assert_eq!(required_gates(&config, None), ["gate-quality"]);
    }
}
