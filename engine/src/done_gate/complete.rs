//! Complete verdicts: when the task has a task file, its verdict artifact must carry a row
//! for every requirement id and every acceptance criterion it declares. A row that is
//! missing is a row nobody judged — dropping an UNMET row must never improve the verdict.
//!
//! Requirement rows match by id; a criterion's row matches when its id resolves to that
//! criterion the way the answer lint resolves an AC cell ([`AcIndex`]): the label
//! `spur task verdict --from-answer` writes, its alias, its bare title or its scenario.

use std::path::Path;

use crate::answer::ac_identity::{AcIndex, Resolution};
use crate::store::state_dir::StateDir;
use crate::task_file::{locate_task_file, read_task_file, TaskFile, TaskFileError};
use crate::verdict::Artifact;
use crate::wbs::Wbs;

/// What the task file declares and the artifact has no row for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Missing {
    /// Requirement ids, in numeric order.
    pub requirements: Vec<String>,
    /// Criteria labels (as `spur task verdict` writes them), sorted.
    pub criteria: Vec<String>,
}

impl Missing {
    fn is_empty(&self) -> bool {
        self.requirements.is_empty() && self.criteria.is_empty()
    }
}

/// `Ok` when the task has no task file or the artifact has a row for everything it
/// declares; else the deny message. A task file that is there but cannot be read or parsed
/// denies too: the gate cannot know what the verdict must cover.
pub(crate) fn check_complete(
    state_dir: &StateDir,
    wbs: &Wbs,
    artifact: &Artifact,
    artifact_path: &Path,
) -> Result<(), String> {
    let project_root = state_dir.project_root();
    let task = match locate_task_file(wbs, None, project_root, state_dir)
        .and_then(|path| read_task_file(&path))
    {
        Ok(task) => task,
        Err(TaskFileError::NotFound { .. }) => return Ok(()),
        Err(error) => {
            let help = miette::Diagnostic::help(&error)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            return Err(format!(
                "task {wbs} cannot be marked done: its task file cannot be used to check that the verdict is complete: {error}{help}. Fix the task file, or override with: {}",
                override_command(wbs)
            ));
        }
    };
    let missing = missing_rows(&task, artifact);
    if missing.is_empty() {
        return Ok(());
    }
    let shown_task = task
        .path
        .strip_prefix(project_root)
        .unwrap_or(&task.path)
        .display()
        .to_string();
    let mut parts = Vec::new();
    if !missing.requirements.is_empty() {
        parts.push(format!(
            "requirement{} {}",
            plural(missing.requirements.len()),
            missing.requirements.join(", ")
        ));
    }
    if !missing.criteria.is_empty() {
        parts.push(format!(
            "acceptance criteri{} {}",
            if missing.criteria.len() == 1 {
                "on"
            } else {
                "a"
            },
            missing
                .criteria
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Err(format!(
        "task {wbs} cannot be marked done: the verdict in {} is incomplete: it has no row for {} declared in {shown_task}. \
         Every requirement and acceptance criterion needs a row (MET, PARTIAL, UNMET or N/A): answer each of them and \
         re-derive the verdict (spur task verdict {wbs} --from-answer FILE), or override with: {}",
        artifact_path.display(),
        parts.join(" and "),
        override_command(wbs)
    ))
}

/// The requirement ids and criteria of `task` that `artifact` has no row for.
pub(crate) fn missing_rows(task: &TaskFile, artifact: &Artifact) -> Missing {
    let mut requirements: Vec<String> = task
        .requirements
        .iter()
        .filter(|r| !artifact.requirements.iter().any(|row| row.id == r.id))
        .map(|r| r.id.clone())
        .collect();
    requirements.sort_by_key(|id| id.get(1..).and_then(|n| n.parse::<u64>().ok()));
    let index = AcIndex::new(&task.acceptance);
    let mut covered = vec![false; task.acceptance.len()];
    for row in &artifact.acceptance_criteria {
        if let Resolution::One(i) = index.resolve(&row.id) {
            if let Some(slot) = covered.get_mut(i) {
                *slot = true;
            }
        }
    }
    let mut criteria: Vec<String> = task
        .acceptance
        .iter()
        .zip(&covered)
        .filter(|(_, covered)| !**covered)
        .map(|(ac, _)| ac.label.clone())
        .collect();
    criteria.sort();
    Missing {
        requirements,
        criteria,
    }
}

fn override_command(wbs: &Wbs) -> String {
    format!("spur task update {wbs} done --force-done --reason \"why\" (recorded in the audit log)")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task_file::parse_task_file;
    use crate::verdict::{AcceptanceCriterion, Requirement, RowStatus, Verdict};

    fn artifact(requirements: &[&str], criteria: &[&str]) -> Artifact {
        Artifact {
            wbs: "T1".into(),
            verdict: Verdict::Pass,
            requirements: requirements
                .iter()
                .map(|id| Requirement {
                    id: (*id).into(),
                    status: RowStatus::Met,
                    evidence: Some("a:1".into()),
                })
                .collect(),
            acceptance_criteria: criteria
                .iter()
                .map(|id| AcceptanceCriterion {
                    id: (*id).into(),
                    status: RowStatus::Met,
                    evidence_type: None,
                    evidence: None,
                })
                .collect(),
            checks: Vec::new(),
            source: None,
        }
    }

    fn task() -> TaskFile {
        parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 a\n- R2 b\n- R10 c\n- R3 d\n## Acceptance Criteria\n\
             - [ ] AC-1: `./check` passes\n- [ ] [advisory] Docs mention it\n\
             - [ ] [Scenario: Quiet mode](f.feature)\n",
        )
        .unwrap()
    }

    #[test]
    fn names_every_missing_row_sorted() {
        let missing = missing_rows(&task(), &artifact(&["R1"], &[]));
        assert_eq!(missing.requirements, ["R2", "R3", "R10"]);
        assert_eq!(
            missing.criteria,
            [
                "AC-1: `./check` passes",
                "Scenario: Quiet mode",
                "[advisory] Docs mention it"
            ]
        );
    }

    proptest::proptest! {
        /// Whatever rows an artifact keeps, exactly the ones it dropped are missing: no
        /// subset of a complete verdict passes the check.
        #[test]
        fn exactly_the_dropped_rows_are_missing(
            keep_requirements in proptest::collection::vec(proptest::bool::ANY, 4),
            keep_criteria in proptest::collection::vec(proptest::bool::ANY, 3),
        ) {
            let task = task();
            let requirements: Vec<&str> = task
                .requirements
                .iter()
                .zip(&keep_requirements)
                .filter(|(_, keep)| **keep)
                .map(|(r, _)| r.id.as_str())
                .collect();
            let criteria: Vec<&str> = task
                .acceptance
                .iter()
                .zip(&keep_criteria)
                .filter(|(_, keep)| **keep)
                .map(|(ac, _)| ac.label.as_str())
                .collect();
            let missing = missing_rows(&task, &artifact(&requirements, &criteria));
            let dropped = keep_requirements.iter().filter(|k| !**k).count()
                + keep_criteria.iter().filter(|k| !**k).count();
            proptest::prop_assert_eq!(
                missing.requirements.len() + missing.criteria.len(),
                dropped
            );
            proptest::prop_assert_eq!(missing.is_empty(), dropped == 0);
        }
    }

    #[test]
    fn rows_match_by_label_alias_title_or_scenario() {
        let rows = artifact(
            &["R1", "R2", "R3", "R10"],
            &["AC-1", "Docs mention it", "Scenario: Quiet mode"],
        );
        assert_eq!(missing_rows(&task(), &rows), Missing::default());
        // A row naming nothing, or a criterion it adds an exempting tag to, covers nothing.
        let rows = artifact(
            &["R1", "R2", "R3", "R10", "R99"],
            &["AC-1: something else", "[advisory] Quiet mode", "AC-1"],
        );
        assert_eq!(
            missing_rows(&task(), &rows).criteria,
            ["Scenario: Quiet mode", "[advisory] Docs mention it"]
        );
    }
}
