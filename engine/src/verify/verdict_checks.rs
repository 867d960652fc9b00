//! Gate results become `checks[]` rows of the task's verdict artifact, so the done gate
//! sees them: one row per gate that ran, named `gate-<name>`, status pass/warn/fail, the
//! gate's severity, and the evidence file as evidence. A skipped gate gets no row (a skip
//! is not evidence), and the row it left in an earlier run is removed. Rows of the same
//! name are replaced, never duplicated, so a fixed gate stops failing the verdict.
//! Each write is recorded in the task ledger as spur's (`done_gate::provenance`) when the
//! artifact it merged into was spur's, or was created here.

use std::path::Path;

use super::gate::GateSeverity;
use super::gate_result::GateResult;
use super::status::GateStatus;
use crate::diagnostic::coded_diagnostic;
use crate::done_gate::provenance::{record_rewrite, record_write, Rewrite, UnrecordedWrite};
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::VerdictWriter;
use crate::verdict::{
    aggregate, replace_checks, write_artifact, Artifact, ArtifactWriteError, Check, CheckStatus,
    Severity,
};

/// The check row name of a gate.
pub(crate) fn check_name(gate: &str) -> String {
    format!("gate-{gate}")
}

/// The row for a gate result; `None` for a skipped gate.
pub(crate) fn gate_check(result: &GateResult) -> Option<Check> {
    let status = match result.status {
        GateStatus::Pass => CheckStatus::Pass,
        GateStatus::Warn => CheckStatus::Warn,
        GateStatus::Fail | GateStatus::Error => CheckStatus::Fail,
        GateStatus::Skip => return None,
    };
    Some(Check {
        name: check_name(&result.name),
        status,
        evidence: result.evidence.as_ref().map(|e| e.markdown.clone()),
        severity: Some(severity(result.severity)),
    })
}

fn severity(severity: GateSeverity) -> Severity {
    match severity {
        GateSeverity::Blocker => Severity::Blocker,
        GateSeverity::Major => Severity::Major,
        GateSeverity::Minor => Severity::Minor,
        GateSeverity::Advisory => Severity::Advisory,
    }
}

/// What merging did to the artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MergeOutcome {
    /// There was no artifact: one was created with empty requirements and acceptance
    /// criteria (so gates alone can never make a PASS).
    Created,
    Updated,
}

/// Why the gate rows could not be merged, or the merge not recorded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    /// The artifact could not be read, is not an object, or could not be written.
    #[error(transparent)]
    Write(#[from] ArtifactWriteError),
    /// The artifact was written, but the task ledger did not take the record of it.
    #[error(transparent)]
    Unrecorded(#[from] UnrecordedWrite),
}

coded_diagnostic! {
    MergeError {
        forward { Write, Unrecorded }
    }
}

/// Where the merge goes and who makes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MergeTarget<'a> {
    /// The task's data lock, held by the caller.
    pub lock: &'a DataLock,
    /// The state directory whose task ledger records the write.
    pub state_dir: &'a StateDir,
    /// The artifact.
    pub path: &'a Path,
    /// The pipeline run that runs verify, if one does.
    pub run_id: Option<&'a str>,
}

/// Put `rows` into the artifact at `target.path` (replacing rows of the same names) and
/// remove rows named in `removed`; create the artifact when there is none. Atomic; an
/// artifact that is not a JSON object is left untouched and reported. A
/// read-modify-write: the task's data lock, held by the caller, keeps a derivation (or the
/// gate) from writing (or reading) the artifact in between. The write is recorded as
/// spur's when the artifact was created here or what was read was spur's.
pub(crate) fn merge_gate_checks(
    target: &MergeTarget<'_>,
    rows: &[Check],
    removed: &[String],
) -> Result<MergeOutcome, MergeError> {
    let MergeTarget {
        lock,
        state_dir,
        path,
        run_id,
    } = *target;
    let wbs = lock.wbs();
    let not_appendable = |problem: String| ArtifactWriteError::NotAppendable {
        path: path.display().to_string(),
        problem,
    };
    // Missing, empty or whitespace-only: no artifact yet. Only a small file is read to
    // tell; a large one goes to `replace_checks`, which enforces the size cap.
    let no_artifact = match read_bounded(path, 4096) {
        Ok(bytes) => bytes.iter().all(u8::is_ascii_whitespace),
        Err(ReadError::Missing) => true,
        Err(ReadError::TooLarge { .. }) => false,
        Err(e) => return Err(not_appendable(format!("cannot read it: {e}")).into()),
    };
    if no_artifact {
        let mut artifact = Artifact {
            wbs: wbs.to_string(),
            verdict: crate::verdict::Verdict::Unknown,
            requirements: Vec::new(),
            acceptance_criteria: Vec::new(),
            checks: rows.to_vec(),
            source: Some(serde_json::json!({"producer": "spur verify"})),
        };
        artifact.verdict = aggregate(&artifact).verdict;
        write_artifact(path, &artifact)?;
        let written = artifact.to_json();
        record_write(
            lock,
            state_dir,
            path,
            written.as_bytes(),
            VerdictWriter::Verify,
            run_id,
        )?;
        return Ok(MergeOutcome::Created);
    }
    let replaced = replace_checks(path, rows, removed)?;
    // An artifact a step wrote stays one: merging rows into it does not make it spur's.
    let _: Rewrite = record_rewrite(
        lock,
        state_dir,
        path,
        &replaced.read,
        &replaced.written,
        VerdictWriter::Verify,
        run_id,
    )?;
    Ok(MergeOutcome::Updated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::state_dir::StateDir;
    use crate::verdict::{parse_artifact, ArtifactOutcome, Verdict};
    use crate::wbs::Wbs;

    /// Merge into the artifact at `path`, as task `T` of a state dir beside it.
    fn merge_gate_checks(
        path: &Path,
        rows: &[Check],
        removed: &[String],
    ) -> Result<MergeOutcome, MergeError> {
        let dir = path.parent().unwrap();
        let state_dir = StateDir::at(dir.join(".spur"));
        let lock = DataLock::acquire(&state_dir, &Wbs::parse("T").unwrap()).unwrap();
        let target = MergeTarget {
            lock: &lock,
            state_dir: &state_dir,
            path,
            run_id: None,
        };
        super::merge_gate_checks(&target, rows, removed)
    }

    fn row(name: &str, status: CheckStatus) -> Check {
        Check {
            name: name.into(),
            status,
            evidence: Some(format!(".spur/run/T-evidence/{name}.md")),
            severity: Some(Severity::Blocker),
        }
    }

    #[test]
    fn creates_an_artifact_that_gates_alone_cannot_make_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        let outcome =
            merge_gate_checks(&path, &[row("gate-build", CheckStatus::Pass)], &[]).unwrap();
        assert_eq!(outcome, MergeOutcome::Created);
        let ArtifactOutcome::Valid(artifact) = parse_artifact(&std::fs::read(&path).unwrap())
        else {
            panic!("created artifact must be valid")
        };
        assert!(artifact.requirements.is_empty() && artifact.acceptance_criteria.is_empty());
        assert_eq!(artifact.verdict, Verdict::Unknown);
        assert_eq!(aggregate(&artifact).verdict, Verdict::Unknown);
        assert_eq!(artifact.checks.len(), 1);
    }

    #[test]
    fn replaces_rows_of_the_same_gate_and_keeps_everything_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        std::fs::write(
            &path,
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}],
               "checks":[{"check":"gate-build","status":"fail"},{"name":"lint","status":"pass"},
                         {"name":"gate-old","status":"pass"}],"mine":1}"#,
        )
        .unwrap();
        merge_gate_checks(
            &path,
            &[row("gate-build", CheckStatus::Pass)],
            &["gate-old".to_owned()],
        )
        .unwrap();
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let names: Vec<_> = doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                ["name", "check", "id"]
                    .iter()
                    .find_map(|k| r[k].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(names, ["lint", "gate-build"]);
        assert_eq!(doc["checks"][1]["status"], "pass");
        assert_eq!(doc["mine"], 1);
        assert_eq!(doc["verdict"], "PASS");
    }

    #[test]
    fn leaves_a_malformed_artifact_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        std::fs::write(&path, "{not json").unwrap();
        assert!(merge_gate_checks(&path, &[row("gate-a", CheckStatus::Pass)], &[]).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn a_fifo_at_the_artifact_path_is_reported_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("T-verdict.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = merge_gate_checks(&path, &[row("gate-a", CheckStatus::Pass)], &[]).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
    }
}
