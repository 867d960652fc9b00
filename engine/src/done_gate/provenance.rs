//! Where the verdict came from: every writer of a task's verdict artifact in spur records
//! the sha256 of the bytes it wrote in the task ledger (a `verdict-written` record, under
//! the task's data lock, after the atomic write), and the gate accepts only the artifact
//! whose sha256 is the last one recorded. So a step that writes or edits the artifact
//! itself (`jq … > v.json`, `cat > v.json`) cannot certify the task, unless the project
//! says it may (`doneGate.externalVerdicts: allow`); the `done` record then says
//! `external`.
//!
//! A read-modify-write (verify's merge of its gate rows, `json.update`) records its write
//! only when what it read was spur's: merging rows into an artifact a step wrote does not
//! make it spur's.

use std::path::Path;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::data_lock::DataLock;
use crate::store::digest::sha256_hex;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{self, LedgerError, LedgerRead, NewRecord};
use crate::store::task_ledger::{VerdictWriter, VerdictWritten};
use crate::store::task_status::ChangeContext;
use crate::verify::config::{ExternalVerdicts, VerifyConfig};
use crate::verify::config_error::VerifyConfigErrors;
use crate::wbs::Wbs;

/// Who wrote the artifact the gate read, as far as the gate accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provenance {
    /// Its sha256 is the last one spur recorded writing.
    Spur,
    /// spur did not write it (or it was edited since), and the project allows that.
    External,
}

/// Check the artifact the gate read (`artifact_sha256`, of the bytes it evaluated) against
/// the task ledger's last `verdict-written` record. `Err` is the deny message.
pub(crate) fn check(
    wbs: &Wbs,
    path: &Path,
    ledger: &LedgerRead,
    artifact_sha256: Option<&str>,
    config: &Result<VerifyConfig, VerifyConfigErrors>,
) -> Result<Provenance, String> {
    let last = ledger.last_verdict_written();
    // Only a sealed record is spur's word; an unkeyed one is history.
    let recorded = last
        .filter(|(record, _)| record.is_keyed())
        .map(|(_, written)| written.sha256.as_str());
    if artifact_sha256.is_some() && artifact_sha256 == recorded {
        return Ok(Provenance::Spur);
    }
    let policy = match config {
        Ok(config) => config.done_gate.external_verdicts,
        Err(_) => ExternalVerdicts::Deny,
    };
    if policy == ExternalVerdicts::Allow {
        return Ok(Provenance::External);
    }
    let path = path.display();
    let found = artifact_sha256.map_or_else(|| "none".to_owned(), short);
    let cause = match last {
        Some((record, _)) if !record.is_keyed() => format!(
            "spur's last record of writing it (task ledger seq {}) is unkeyed (from before keyed \
             chains, or written without the key), so it is no proof (its sha256 is {found})",
            record.seq
        ),
        Some((record, written)) => format!(
            "its sha256 {found} is not {}, the one spur last recorded writing ({} at {}, task ledger seq {})",
            short(&written.sha256),
            written.writer.as_str(),
            record.at,
            record.seq
        ),
        None => format!("spur has no record of writing it (its sha256 is {found})"),
    };
    let config_note = match config {
        Ok(config) => config
            .warnings
            .iter()
            .map(|w| format!(" (note: {}: {})", config.path.display(), w.one_line()))
            .collect::<String>(),
        Err(e) => format!(" (note: the doneGate configuration could not be read, so externalVerdicts is deny: {e})"),
    };
    Err(format!(
        "task {wbs} cannot be marked done: the verify verdict artifact {path} was written or edited \
         outside spur: {cause}. Re-derive it through spur (spur task verdict {wbs} --from-answer FILE, \
         or the pipeline's verdict.derive step), accept artifacts written outside spur with \
         `doneGate: {{externalVerdicts: allow}}` in .spur/config.yaml, or override with: spur task \
         update {wbs} done --force-done --reason \"why\" (recorded in the audit log){config_note}"
    ))
}

/// The first 12 hex digits: enough to tell two digests apart in a message.
fn short(sha256: &str) -> String {
    sha256.chars().take(12).collect()
}

/// The verdict artifact was written, but its write is not in the task ledger.
#[derive(Debug, thiserror::Error)]
#[error("the verdict artifact {path} was written, but spur could not record the write in the task ledger, so the done gate will not accept it: {source}")]
pub struct UnrecordedWrite {
    /// The artifact.
    pub path: String,
    /// Why the record could not be appended.
    #[source]
    pub source: LedgerError,
}

coded_diagnostic! {
    UnrecordedWrite {
        Self { .. } => Code::TaskVerdictUnrecorded,
            help("fix the task ledger (`spur audit verify` names what is wrong with it), then derive the verdict again");
    }
}

/// What a read-modify-write of the artifact recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// What it read was spur's: the new bytes are recorded as spur's.
    Recorded,
    /// What it read was not spur's (no record, or edited since): nothing was recorded, and
    /// the artifact stays one the gate treats as written outside spur.
    External,
}

/// Write `bytes` as the locked task's whole verdict artifact (atomically) and record the
/// write as spur's: for writers that produce a whole artifact (verify's merge when there is
/// none yet; embedders and tests that stand for one of spur's writers).
pub fn write_verdict(
    lock: &DataLock,
    state_dir: &StateDir,
    bytes: &[u8],
    writer: VerdictWriter,
    run_id: Option<&str>,
) -> Result<(), WriteVerdictError> {
    let path = state_dir.verdict_path(lock.wbs());
    std::fs::create_dir_all(state_dir.run_dir())
        .and_then(|()| crate::store::atomic_file::write_atomic(&path, bytes))
        .map_err(|source| {
            WriteVerdictError::Write(crate::verdict::ArtifactWriteError::Io {
                path: path.display().to_string(),
                source,
            })
        })?;
    record_write(lock, state_dir, &path, bytes, writer, run_id)?;
    Ok(())
}

/// Why [`write_verdict`] failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteVerdictError {
    /// The artifact could not be written (the previous one is unchanged).
    #[error(transparent)]
    Write(#[from] crate::verdict::ArtifactWriteError),
    /// The artifact was written, but the task ledger did not take the record of it.
    #[error(transparent)]
    Unrecorded(#[from] UnrecordedWrite),
}

coded_diagnostic! {
    WriteVerdictError {
        forward { Write, Unrecorded }
    }
}

/// Record that spur wrote `written` to the locked task's verdict artifact at `path`.
pub(crate) fn record_write(
    lock: &DataLock,
    state_dir: &StateDir,
    path: &Path,
    written: &[u8],
    writer: VerdictWriter,
    run_id: Option<&str>,
) -> Result<(), UnrecordedWrite> {
    let user = crate::store::audit::current_user();
    let context = ChangeContext {
        user: &user,
        run_id,
        time: crate::store::timestamp::now(),
    };
    let new = NewRecord::VerdictWritten(VerdictWritten {
        sha256: sha256_hex(written),
        writer,
    });
    task_ledger::append(lock, state_dir, new, &context)
        .map(drop)
        .map_err(|source| UnrecordedWrite {
            path: path.display().to_string(),
            source,
        })
}

/// Record a read-modify-write of the locked task's artifact: `read` (the bytes it read)
/// must be what spur last recorded writing, else nothing is recorded.
pub(crate) fn record_rewrite(
    lock: &DataLock,
    state_dir: &StateDir,
    path: &Path,
    read: &[u8],
    written: &[u8],
    writer: VerdictWriter,
    run_id: Option<&str>,
) -> Result<Rewrite, UnrecordedWrite> {
    let unrecorded = |source| UnrecordedWrite {
        path: path.display().to_string(),
        source,
    };
    let ledger = task_ledger::read(state_dir, lock.wbs()).map_err(unrecorded)?;
    ledger.intact().map_err(unrecorded)?;
    let spurs = ledger
        .last_verdict_written()
        .is_some_and(|(record, last)| record.is_keyed() && last.sha256 == sha256_hex(read));
    if !spurs {
        return Ok(Rewrite::External);
    }
    record_write(lock, state_dir, path, written, writer, run_id)?;
    Ok(Rewrite::Recorded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::task_ledger::VerdictWriter;

    const PASS: &str = r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}]}"#;

    struct Fixture {
        _dir: tempfile::TempDir,
        state: StateDir,
        wbs: Wbs,
    }

    fn fixture(config: Option<&str>) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.run_dir()).unwrap();
        if let Some(text) = config {
            std::fs::write(state.config_path(), text).unwrap();
        }
        Fixture {
            _dir: dir,
            state,
            wbs: Wbs::parse("T1").unwrap(),
        }
    }

    fn spur_writes(f: &Fixture, text: &str) {
        let path = f.state.verdict_path(&f.wbs);
        std::fs::write(&path, text).unwrap();
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        record_write(
            &lock,
            &f.state,
            &path,
            text.as_bytes(),
            VerdictWriter::TaskVerdict,
            None,
        )
        .unwrap();
    }

    fn check_now(f: &Fixture, artifact: &str) -> Result<Provenance, String> {
        let ledger = task_ledger::read(&f.state, &f.wbs).unwrap();
        let config = VerifyConfig::load(&f.state);
        let sha = sha256_hex(artifact.as_bytes());
        check(
            &f.wbs,
            &f.state.verdict_path(&f.wbs),
            &ledger,
            Some(&sha),
            &config,
        )
    }

    #[test]
    fn the_artifact_spur_last_wrote_is_spurs_and_no_other() {
        let f = fixture(None);
        let message = check_now(&f, PASS).unwrap_err();
        assert!(
            message
                .contains("was written or edited outside spur: spur has no record of writing it"),
            "{message}"
        );
        assert!(
            message.contains("spur task verdict T1 --from-answer FILE"),
            "{message}"
        );
        assert!(
            message.contains("`doneGate: {externalVerdicts: allow}`"),
            "{message}"
        );
        assert!(message.contains("--force-done --reason"), "{message}");
        spur_writes(&f, PASS);
        assert_eq!(check_now(&f, PASS), Ok(Provenance::Spur));
        let edited = PASS.replace("a:1", "a:2");
        let message = check_now(&f, &edited).unwrap_err();
        let spurs = sha256_hex(PASS.as_bytes());
        assert!(
            message.contains(&format!(
                "is not {}, the one spur last recorded writing (task-verdict at ",
                &spurs[..12]
            )),
            "{message}"
        );
        // An older write of the same bytes is not enough: only the last one counts.
        spur_writes(&f, &edited);
        assert_eq!(check_now(&f, &edited), Ok(Provenance::Spur));
        assert!(check_now(&f, PASS).is_err());
    }

    #[test]
    fn external_verdicts_allow_accepts_what_spur_did_not_write() {
        let f = fixture(Some("doneGate:\n  externalVerdicts: allow\n"));
        assert_eq!(check_now(&f, PASS), Ok(Provenance::External));
        spur_writes(&f, PASS);
        assert_eq!(check_now(&f, PASS), Ok(Provenance::Spur));
    }

    #[test]
    fn a_misspelt_or_broken_config_denies_and_says_why() {
        let f = fixture(Some("doneGate:\n  externalVerdict: allow\n"));
        let message = check_now(&f, PASS).unwrap_err();
        assert!(
            message.contains(
                "unknown key `externalVerdict` in `doneGate` (did you mean `externalVerdicts`?)"
            ),
            "{message}"
        );
        let f = fixture(Some("doneGate:\n  externalVerdicts: yes\n"));
        let message = check_now(&f, PASS).unwrap_err();
        assert!(
            message.contains(
                "the doneGate configuration could not be read, so externalVerdicts is deny"
            ),
            "{message}"
        );
    }

    #[test]
    fn a_rewrite_of_an_artifact_spur_did_not_write_is_not_recorded() {
        let f = fixture(None);
        let path = f.state.verdict_path(&f.wbs);
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let rewrite = |read: &str, written: &str| {
            record_rewrite(
                &lock,
                &f.state,
                &path,
                read.as_bytes(),
                written.as_bytes(),
                VerdictWriter::JsonUpdate,
                Some("run-1"),
            )
            .unwrap()
        };
        assert_eq!(rewrite(PASS, "{}"), Rewrite::External);
        drop(lock);
        spur_writes(&f, PASS);
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let rewrite = |read: &str, written: &str| {
            record_rewrite(
                &lock,
                &f.state,
                &path,
                read.as_bytes(),
                written.as_bytes(),
                VerdictWriter::JsonUpdate,
                Some("run-1"),
            )
            .unwrap()
        };
        assert_eq!(rewrite(PASS, "{\"x\":1}"), Rewrite::Recorded);
        let ledger = task_ledger::read(&f.state, &f.wbs).unwrap();
        let (record, last) = ledger.last_verdict_written().unwrap();
        assert_eq!(last.writer, VerdictWriter::JsonUpdate);
        assert_eq!(last.sha256, sha256_hex(b"{\"x\":1}"));
        assert_eq!(record.run.as_deref(), Some("run-1"));
        // What it read is no longer the last write.
        assert_eq!(rewrite(PASS, "{}"), Rewrite::External);
    }
}
