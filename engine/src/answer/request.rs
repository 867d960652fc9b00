//! The whole flow behind `spur task verdict WBS --from-answer FILE` and the `verdict.derive`
//! pipeline action: read the answer and the task file, lint, derive, and commit the
//! artifact to `.spur/run/<wbs>-verdict.json` atomically.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::anchor::AnchorChecker;
use super::derive::derive_artifact;
use super::diagnostic::AnswerDiagnostic;
use super::lint::{lint, LintReport};
use super::parse::{parse_answer, Answer};
use super::task_file::{locate_task_file, read_task_file, TaskFileError};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::provenance::{record_write, UnrecordedWrite};
use crate::store::atomic_file::write_atomic;
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::VerdictWriter;
use crate::verdict::{Artifact, Verdict};
use crate::wbs::Wbs;

/// The largest answer file spur reads; a bigger one fails the lint without being read.
pub(crate) const MAX_ANSWER_BYTES: u64 = 8 * 1024 * 1024;

/// What to derive, from what, into where.
#[derive(Debug, Clone)]
pub struct DeriveRequest {
    /// The task the answer is about.
    pub wbs: Wbs,
    /// The answer file.
    pub answer: PathBuf,
    /// The task file; found from the wbs when `None` (see `locate_task_file`).
    pub task: Option<PathBuf>,
    /// The project's state directory, where the artifact is written.
    pub state_dir: StateDir,
    /// Anchors resolve against this directory.
    pub project_root: PathBuf,
    /// `false` for `--lint-only`: derive, but write nothing.
    pub write: bool,
    /// Who writes it, for the task ledger's `verdict-written` record.
    pub writer: VerdictWriter,
    /// The run writing it, if one is (the `verdict.derive` action's).
    pub run_id: Option<String>,
}

/// The result of a derivation.
#[derive(Debug, Clone)]
pub struct DeriveOutcome {
    /// The task.
    pub wbs: Wbs,
    /// The derived verdict.
    pub verdict: Verdict,
    /// The derived artifact.
    pub artifact: Artifact,
    /// Where the artifact was written; `None` when nothing was written (`--lint-only`).
    pub artifact_path: Option<PathBuf>,
    /// The task file the answer was linted against.
    pub task_path: PathBuf,
    /// Lint errors and warnings, then derivation warnings, by answer line.
    pub diagnostics: Vec<AnswerDiagnostic>,
    /// Whether the answer failed the lint (the artifact is then the explicit FAIL one).
    pub lint_failed: bool,
}

/// Why a derivation could not run or could not commit its artifact.
#[derive(Debug, thiserror::Error)]
pub enum DeriveError {
    /// The answer file cannot be opened.
    #[error("cannot read answer file {}: {reason}", path.display())]
    AnswerUnreadable {
        /// The answer file.
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The task file cannot be found, read or used.
    #[error(transparent)]
    TaskFile(#[from] TaskFileError),

    /// The project root cannot be used to resolve anchors.
    #[error("cannot use project root {}: {reason}", path.display())]
    ProjectRoot {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },

    /// The artifact could not be written; the previous one is unchanged.
    #[error("could not write verdict artifact {}: {source}; the previous artifact, if any, is unchanged", path.display())]
    Write {
        /// The artifact's path.
        path: PathBuf,
        /// The write error.
        #[source]
        source: io::Error,
    },

    /// The artifact was written, but the task ledger did not take the record of it.
    #[error(transparent)]
    Unrecorded(#[from] UnrecordedWrite),
}

coded_diagnostic! {
    DeriveError {
        forward { TaskFile, Unrecorded }
        Self::AnswerUnreadable { .. } => Code::AnswerUnreadable,
            help("pass the verifier's answer file with --from-answer FILE");
        Self::ProjectRoot { .. } => Code::AnswerProjectRoot;
        Self::Write { .. } => Code::AnswerWriteFailed;
    }
}

/// Derive and (unless `request.write` is false) write the artifact.
pub fn derive_verdict(request: &DeriveRequest) -> Result<DeriveOutcome, DeriveError> {
    derive_verdict_with(request, &mut |_| Ok(()))
}

/// [`derive_verdict`], calling `before_commit` with the fully written staging file just
/// before it is renamed over the artifact. An error from it aborts the commit: the previous
/// artifact stays as it was. (Tests use it to interrupt a derivation at the worst moment.)
pub fn derive_verdict_with(
    request: &DeriveRequest,
    before_commit: &mut dyn FnMut(&Path) -> io::Result<()>,
) -> Result<DeriveOutcome, DeriveError> {
    let text = read_answer(&request.answer)?;
    let task_path = locate_task_file(
        &request.wbs,
        request.task.as_deref(),
        &request.project_root,
        &request.state_dir,
    )?;
    let mut task = read_task_file(&task_path)?;
    // Messages name the task file as the user sees it, relative to the project.
    task.path = PathBuf::from(display_name(&task_path, &request.project_root));
    let mut anchors =
        AnchorChecker::new(&request.project_root).map_err(|e| DeriveError::ProjectRoot {
            path: request.project_root.clone(),
            reason: e.to_string(),
        })?;
    let (answer, report) = match text {
        Ok(text) => {
            let answer = parse_answer(&text);
            let report = lint(&answer, &task, &mut anchors);
            (answer, report)
        }
        Err(unusable) => (
            Answer::default(),
            LintReport {
                diagnostics: vec![unusable],
                ..LintReport::default()
            },
        ),
    };
    let answer_name = display_name(&request.answer, &request.project_root);
    let derivation = derive_artifact(&request.wbs, &task, &answer, &report, &answer_name);
    let mut diagnostics = report.diagnostics.clone();
    diagnostics.extend(derivation.warnings);
    diagnostics.sort_by_key(|d| d.line.unwrap_or(usize::MAX));
    let artifact_path = if request.write {
        let path = request.state_dir.verdict_path(&request.wbs);
        let write_err = |source| DeriveError::Write {
            path: path.clone(),
            source,
        };
        // The task's data lock: verify's merge of gate rows (a read-modify-write of this
        // file) never straddles this commit, so it cannot put a stale artifact back.
        let lock = DataLock::acquire(&request.state_dir, &request.wbs)
            .map_err(|e| write_err(io::Error::other(e.to_string())))?;
        let bytes = derivation.artifact.to_json();
        commit(&path, bytes.as_bytes(), before_commit).map_err(write_err)?;
        // After the rename, still under the lock: the ledger records what spur wrote, so
        // the gate can tell it from an artifact written or edited by anything else.
        record_write(
            &lock,
            &request.state_dir,
            &path,
            bytes.as_bytes(),
            request.writer,
            request.run_id.as_deref(),
        )?;
        Some(path)
    } else {
        None
    };
    Ok(DeriveOutcome {
        wbs: request.wbs.clone(),
        verdict: derivation.artifact.verdict,
        artifact: derivation.artifact,
        artifact_path,
        task_path,
        diagnostics,
        lint_failed: report.has_errors(),
    })
}

/// The answer's text, or the one diagnostic that makes it unusable (too large, not UTF-8).
/// Only a file that cannot be opened at all is an error.
fn read_answer(path: &Path) -> Result<Result<String, AnswerDiagnostic>, DeriveError> {
    let unreadable = |reason: String| DeriveError::AnswerUnreadable {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = match read_bounded(path, MAX_ANSWER_BYTES) {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge { .. }) => {
            return Ok(Err(AnswerDiagnostic::new(
                Code::AnswerTooLarge,
                format!("the answer file is larger than {MAX_ANSWER_BYTES} bytes; it was not read"),
            )
            .with_help(
                "an answer is a verdict line and two tables; cite evidence, do not paste it",
            )))
        }
        Err(e) => return Err(unreadable(e.to_string())),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Ok(text)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let line = e
                .as_bytes()
                .get(..valid)
                .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
                + 1;
            Ok(Err(AnswerDiagnostic::new(
                Code::AnswerNotUtf8,
                format!("the answer file is not UTF-8 text (invalid byte at offset {valid})"),
            )
            .at_line(line)
            .with_help("write the answer as UTF-8 Markdown")))
        }
    }
}

/// Write `bytes` to a staging file beside `path` (atomically: temp + fsync + rename), let
/// `before_commit` look at it, then rename it over `path`. Any failure removes the staging
/// file and leaves `path` untouched.
fn commit(
    path: &Path,
    bytes: &[u8],
    before_commit: &mut dyn FnMut(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let name = path.file_name().map_or_else(
        || "verdict.json".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let prefix = format!(".{name}.staged-");
    remove_stale_staging(path, &prefix);
    let staging = path.with_file_name(format!("{prefix}{}", std::process::id()));
    write_atomic(&staging, bytes)?;
    let result = before_commit(&staging).and_then(|()| fs::rename(&staging, path));
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result?;
    if let Some(dir) = path.parent() {
        let _ = crate::store::atomic_file::sync_dir(dir);
    }
    Ok(())
}

/// A crash between staging and rename leaves a staging file; the next commit removes it.
fn remove_stale_staging(path: &Path, prefix: &str) {
    let Some(dir) = path.parent() else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn display_name(path: &Path, root: &Path) -> String {
    let relative = path
        .canonicalize()
        .ok()
        .zip(root.canonicalize().ok())
        .and_then(|(p, r)| p.strip_prefix(r).ok().map(Path::to_path_buf));
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{parse_artifact, ArtifactOutcome};

    const TASK: &str = "## Requirements\n- R1 a\n";
    const GOOD: &str =
        "Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | MET | src/a.rs:1 |\n";

    fn project() -> (tempfile::TempDir, DeriveRequest) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join("docs/tasks")).unwrap();
        fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        fs::write(root.join("docs/tasks/T1_task.md"), TASK).unwrap();
        fs::write(root.join("answer.md"), GOOD).unwrap();
        let request = DeriveRequest {
            wbs: Wbs::parse("T1").unwrap(),
            answer: root.join("answer.md"),
            task: None,
            state_dir: StateDir::at(root.join(".spur")),
            project_root: root.to_path_buf(),
            write: true,
            writer: VerdictWriter::TaskVerdict,
            run_id: None,
        };
        (tmp, request)
    }

    #[test]
    fn writes_a_valid_pass_artifact_and_finds_the_task_file() {
        let (tmp, request) = project();
        let outcome = derive_verdict(&request).unwrap();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(outcome.task_path, tmp.path().join("docs/tasks/T1_task.md"));
        let path = outcome.artifact_path.unwrap();
        assert_eq!(path, tmp.path().join(".spur/run/T1-verdict.json"));
        let ArtifactOutcome::Valid(artifact) = parse_artifact(&fs::read(&path).unwrap()) else {
            panic!("valid artifact")
        };
        assert_eq!(artifact, outcome.artifact);
        assert_eq!(
            artifact.source,
            Some(serde_json::json!("spur task verdict"))
        );
    }

    #[test]
    fn a_failure_before_the_rename_leaves_the_previous_artifact_intact() {
        let (tmp, request) = project();
        let previous = derive_verdict(&request).unwrap();
        let path = previous.artifact_path.unwrap();
        let before = fs::read(&path).unwrap();
        fs::write(
            &request.answer,
            "Verdict: FAIL\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | UNMET | nothing |\n",
        )
        .unwrap();
        let mut saw_staging = None;
        let err = derive_verdict_with(&request, &mut |staging| {
            saw_staging = Some(fs::read_to_string(staging)?);
            Err(io::Error::other("injected crash before rename"))
        })
        .unwrap_err();
        assert!(matches!(err, DeriveError::Write { .. }), "{err}");
        assert!(
            saw_staging.unwrap().contains("\"FAIL\""),
            "the new artifact was fully staged"
        );
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "previous artifact unchanged"
        );
        let names: Vec<_> = fs::read_dir(tmp.path().join(".spur/run"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["T1-verdict.json"], "no staging or temp file left");
    }

    #[test]
    fn lint_only_writes_nothing() {
        let (tmp, mut request) = project();
        request.write = false;
        let outcome = derive_verdict(&request).unwrap();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(outcome.artifact_path, None);
        assert!(!tmp.path().join(".spur").exists());
    }

    #[test]
    fn unusable_answers_fail_the_lint_and_unreadable_ones_are_errors() {
        let (tmp, request) = project();
        fs::write(&request.answer, b"Verdict: PASS\n\xff\xfe").unwrap();
        let outcome = derive_verdict(&request).unwrap();
        assert!(outcome.lint_failed);
        assert_eq!(outcome.verdict, Verdict::Fail);
        assert_eq!(outcome.diagnostics[0].code, Code::AnswerNotUtf8);
        assert_eq!(outcome.diagnostics[0].line, Some(2));

        let missing = DeriveRequest {
            answer: tmp.path().join("nope.md"),
            ..request.clone()
        };
        assert!(matches!(
            derive_verdict(&missing),
            Err(DeriveError::AnswerUnreadable { .. })
        ));
        let no_task = DeriveRequest {
            wbs: Wbs::parse("T2").unwrap(),
            ..request
        };
        assert!(matches!(
            derive_verdict(&no_task),
            Err(DeriveError::TaskFile(TaskFileError::NotFound { .. }))
        ));
    }

    #[test]
    fn a_fifo_or_dev_zero_as_the_answer_is_unreadable_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("answer.md");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let Err(DeriveError::AnswerUnreadable { reason, .. }) = read_answer(&fifo) else {
            panic!("a FIFO is unreadable")
        };
        assert_eq!(reason, "it is a FIFO, not a regular file");
        let zero = dir.path().join("zero.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_answer(&zero),
            Err(DeriveError::AnswerUnreadable { .. })
        ));
    }
}
