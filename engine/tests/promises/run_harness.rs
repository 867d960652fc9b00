//! Running a generated pipeline through the real runner, in process, exactly as `spur run`
//! does: load → check → resolve vars → `run::start` with the real done gate
//! (`TaskDoneGate`), fsync'd journal, in a fresh temporary project.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use spur_engine::done_gate::write_verdict;
use spur_engine::pipeline::{self, CheckedPipeline};
use spur_engine::run::{
    self, Durability, ResumeRequest, RetryRequest, RunError, RunId, RunOutcome, RunSettings,
    SilentObserver, StartRequest, TaskDoneGate,
};
use spur_engine::source::SourceFile;
use spur_engine::store::chain_key::KeyFile;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_ledger::VerdictWriter;
use spur_engine::wbs::Wbs;

/// One run at a time in this process, as with the `spur` binary. Concurrent runs in one
/// process would race: a `sh` forked by one run shares, until it execs, the open file
/// that holds another run's task lock (`flock`), which then looks held.
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

pub(crate) fn one_run_at_a_time() -> MutexGuard<'static, ()> {
    ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A temporary project: the pipeline file, `.spur/`, and a place for markers; and, outside
/// it, a directory of its own for the key of its chains, so that no case ever reads or
/// makes the key of the user running the tests.
pub(crate) struct Project {
    pub dir: tempfile::TempDir,
    key_dir: tempfile::TempDir,
}

impl Project {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temporary directory"),
            key_dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The key file of the project's chains (made at the first keyed write).
    pub(crate) fn key_file(&self) -> KeyFile {
        KeyFile::at(self.key_dir.path().join("key"))
    }

    pub(crate) fn state_dir(&self) -> StateDir {
        StateDir::at(self.root().join(".spur"))
            .with_key_file(self.key_file())
            .with_protected_dir(self.key_dir.path().join("protected"))
    }

    pub(crate) fn settings(&self) -> RunSettings {
        RunSettings {
            state_dir: self.state_dir(),
            durability: Durability::Fsync,
            path_prefix: None,
            spur_bin: None,
            timeouts: Default::default(),
            http_allow: Default::default(),
            policy: spur_engine::policy::PolicySource::Project,
            run_socket: None,
            // The test's own filters: trusted, evaluated in process (spur's binary uses a worker).
            jq: spur_guards::jq::JqSandbox::in_process(),
        }
    }

    pub(crate) fn pipeline_path(&self) -> PathBuf {
        self.root().join("pipeline.yaml")
    }

    /// Write, load and check `yaml`; `Err` with the findings when the checker refuses it.
    pub(crate) fn checked(&self, yaml: &str) -> Result<CheckedPipeline, String> {
        std::fs::write(self.pipeline_path(), yaml).map_err(|e| e.to_string())?;
        let source = SourceFile::new(self.pipeline_path(), yaml);
        let loaded = pipeline::load(&source).map_err(|e| format!("{e:?}"))?;
        CheckedPipeline::new(loaded)
            .map(|(checked, _warnings)| checked)
            .map_err(|errors| format!("{errors:?}"))
    }

    /// `spur run pipeline.yaml --var k=v… [--force-done --reason R]`, in process.
    pub(crate) fn run(
        &self,
        checked: &CheckedPipeline,
        vars: &[String],
        force_done_reason: Option<&str>,
    ) -> Result<RunOutcome, RunError> {
        let vars = run::vars::resolve(checked.pipeline(), None, vars)?;
        let _one = one_run_at_a_time();
        run::start(
            StartRequest {
                pipeline: checked,
                pipeline_path: self.pipeline_path(),
                vars,
                force_done_reason: force_done_reason.map(str::to_owned),
                worktree: None,
            },
            &self.settings(),
            &mut SilentObserver,
            &mut TaskDoneGate,
        )
    }
}

impl Project {
    /// The start of a non-bypass case: the artifact `text` (if any) written for task `T1`
    /// through spur's own writer, then a run with `flag` (which branch the generated pipeline
    /// takes) and `mark` (the project root, where its steps leave marks).
    pub(crate) fn run_case(
        &self,
        checked: &CheckedPipeline,
        flag: bool,
        artifact: Option<String>,
        force_done_reason: Option<&str>,
    ) -> Result<RunOutcome, RunError> {
        if let Some(text) = artifact {
            self.write_artifact(&text);
        }
        self.run(checked, &self.case_vars(flag), force_done_reason)
    }

    /// The verdict artifact `text` written for task `T1` through spur's own writer.
    pub(crate) fn write_artifact(&self, text: &str) {
        let wbs = Wbs::parse("T1").expect("valid wbs");
        let state_dir = self.state_dir();
        let lock = DataLock::acquire(&state_dir, &wbs).expect("data lock");
        write_verdict(
            &lock,
            &state_dir,
            text.as_bytes(),
            VerdictWriter::TaskVerdict,
            None,
        )
        .expect("artifact written and recorded");
    }

    /// The vars of a non-bypass case: `flag` (which branch the generated pipeline takes)
    /// and `mark` (the project root, where its steps leave marks).
    pub(crate) fn case_vars(&self, flag: bool) -> [String; 2] {
        [
            format!("flag={}", if flag { "1" } else { "0" }),
            format!("mark={}", self.root().display()),
        ]
    }

    /// `spur continue RUN --rerun-ambiguous`, in process.
    pub(crate) fn resume(
        &self,
        checked: &CheckedPipeline,
        run_id: &str,
    ) -> Result<RunOutcome, RunError> {
        let run_id = RunId::parse(run_id).expect("a run id the runner made");
        let _one = one_run_at_a_time();
        run::resume(
            ResumeRequest {
                pipeline: checked,
                run_id,
                answer: None,
                rerun_ambiguous: true,
                allow_changed_pipeline: false,
                force_done_reason: None,
                secret_vars: Vec::new(),
                answered_by: None,
            },
            &self.settings(),
            &mut SilentObserver,
            &mut TaskDoneGate,
        )
    }

    /// `spur retry RUN`, in process.
    pub(crate) fn retry(
        &self,
        checked: &CheckedPipeline,
        run_id: &str,
    ) -> Result<RunOutcome, RunError> {
        let run_id = RunId::parse(run_id).expect("a run id the runner made");
        let _one = one_run_at_a_time();
        run::retry(
            RetryRequest {
                pipeline: checked,
                run_id,
                allow_changed_pipeline: false,
                force_done_reason: None,
                secret_vars: Vec::new(),
            },
            &self.settings(),
            &mut SilentObserver,
            &mut TaskDoneGate,
        )
    }

    pub(crate) fn journal_path(&self, run_id: &str) -> PathBuf {
        self.state_dir()
            .runs_dir()
            .join(run_id)
            .join("journal.jsonl")
    }
}
