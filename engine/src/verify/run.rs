//! `run_gates`: one verify run from configuration to recorded results. The CLI's
//! `spur verify` and the runner's `verify.run` action both call it.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use super::attempt::GateExecutor;
use super::config::VerifyConfig;
use super::config_error::VerifyConfigErrors;
use super::evidence::{display_path, write_evidence, EvidenceContext, EvidencePaths};
use super::evidence_dir::{write_replacing, EvidenceDir};
use super::gate::Gate;
use super::gate_result::{GateResult, SkipReason};
use super::outcome::{actionable_findings, Problem, Summary, VerifyOutcome};
use super::plan;
use super::process_executor::ProcessExecutor;
use super::report::{render_report, ReportHeader};
use super::reprobe::settle;
use super::scheduler::run_in_order;
use super::scope::VerifyScope;
use super::status::{Confidence, GateStatus};
use super::verdict_checks::{check_name, gate_check, merge_gate_checks, MergeTarget};
use crate::diagnostic::{coded_diagnostic, did_you_mean, Code};
use crate::policy::{GatePolicy, Policy, PolicyError, PolicySource};
use crate::store::data_lock::DataLock;
use crate::store::file_lock::FileLock;
use crate::store::ledger_record::{Verified, VerifiedGate};
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{self, NewRecord};
use crate::store::task_status::ChangeContext;
use crate::store::timestamp::rfc3339_utc as rfc3339;
use crate::task_file::{locate_task_file, read_task_file, TaskFileError};
use crate::tree;
use crate::verdict::{read_artifact_file, ArtifactOutcome};
use crate::verify::ledger::{Ledger, NewVerdict};
use crate::wbs::Wbs;

/// What to verify.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    pub(crate) state_dir: StateDir,
    /// The task: evidence, report and ledger are per task, and results are merged into
    /// its verdict artifact. `None`: project-wide, no verdict merge.
    pub wbs: Option<Wbs>,
    /// Run only this gate (its `needs` and `enabled` are ignored).
    pub gate: Option<String>,
    /// The run id recorded in evidence and the ledger (the runner passes its own);
    /// `None` → `verify-<UTC timestamp>-<pid>`.
    pub(crate) run_id: Option<String>,
    /// Extra environment for every gate (the runner passes the run's vars).
    pub(crate) env: Vec<(String, String)>,
    /// A run's secrets: replaced in the gates' output before evidence, findings, report
    /// or ledger see it (book: *Secrets*).
    pub(crate) redactor: crate::redact::Redactor,
    /// Where the gates come from: the project's config, or the policy of the run this
    /// verify runs for (a run's `verify.run`, or `spur verify` from one of its steps).
    pub policy: PolicySource,
}

impl VerifyRequest {
    /// A project-wide run of every configured gate in `state_dir`.
    pub fn new(state_dir: StateDir) -> Self {
        Self {
            state_dir,
            wbs: None,
            gate: None,
            run_id: None,
            env: Vec::new(),
            redactor: crate::redact::Redactor::default(),
            policy: PolicySource::Project,
        }
    }
}

/// Why a verify run could not run its gates. All are usage errors (exit 2) except
/// `Busy` (exit 4), `Lock` and `EvidenceDir`.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// `.spur/config.yaml` is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] VerifyConfigErrors),

    /// The policy cannot be read or found (a run's pinned one).
    #[error(transparent)]
    Policy(#[from] PolicyError),

    /// `--gate` names no gate, configured or standard.
    #[error("no gate named `{name}` in the verify configuration")]
    UnknownGate {
        /// The name given.
        name: String,
        /// What to do instead (did you mean, the configured gates).
        help: String,
    },

    /// `--gate` names a standard gate the configuration does not set up.
    #[error("gate `{name}` is not configured")]
    UnconfiguredGate {
        /// The gate.
        name: String,
    },

    /// Another verify run holds the scope's lock.
    #[error("another verify run of {scope} is in progress")]
    Busy {
        /// The task or the project, in words.
        scope: String,
        /// The lock file.
        path: PathBuf,
    },

    /// The verify lock could not be taken (an I/O error, not another run).
    #[error("cannot take the verify lock {}: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The error taking it.
        #[source]
        source: std::io::Error,
    },

    /// The evidence directory could not be created.
    #[error("cannot create the evidence directory {}: {source}", path.display())]
    EvidenceDir {
        /// The directory.
        path: PathBuf,
        /// The error creating it.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    VerifyError {
        forward { Config, Policy }
        Self::UnknownGate { help, .. } => Code::VerifyUnknownGate,
            help("{help}");
        Self::UnconfiguredGate { name, .. } => Code::VerifyUnconfiguredGate,
            help("add it to `.spur/config.yaml` under `verify.gates` (e.g. `{name}: {{command: …}}`)");
        Self::Busy { path, .. } => Code::VerifyBusy,
            help("one verify run per task (or per project) at a time: wait for it to finish; the lock is {}", path.display());
        Self::Lock { .. } => Code::VerifyLock;
        Self::EvidenceDir { .. } => Code::VerifyEvidenceDir;
    }
}

impl VerifyError {
    /// Bad configuration or arguments (exit 2), as opposed to an environment failure.
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Self::EvidenceDir { .. } | Self::Busy { .. } | Self::Lock { .. }
        )
    }

    /// Another verify run holds the scope (exit 4, like a second `spur run` of a task).
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::Busy { .. })
    }
}

/// Run the configured gates and record their results: evidence files, ledger lines, the
/// report, and (with a task) `checks[]` rows in the verdict artifact.
pub fn run_gates(request: &VerifyRequest) -> Result<VerifyOutcome, VerifyError> {
    let GatePolicy { policy, config, .. } =
        request
            .policy
            .resolve(&request.state_dir)
            .map_err(|e| match e {
                PolicyError::Config(config) => VerifyError::Config(config),
                e => VerifyError::Policy(e),
            })?;
    let config = config?;
    let project_root = request.state_dir.project_root().to_path_buf();
    let scope = VerifyScope::new(&request.state_dir, request.wbs.as_ref());
    let mut problems = Vec::new();
    let planned = match &request.wbs {
        Some(wbs) => plan_from_task_file(&request.state_dir, wbs, &mut problems),
        None => Vec::new(),
    };
    let (to_run, skipped) = select(&config, &planned, request.gate.as_deref())?;

    let _lock = lock(&scope)?;
    // A task's run binds its results to the tree: fingerprinted before the gates (to tell
    // whether they changed it) and after (what the `verified` record says they checked).
    let tree_before = request
        .wbs
        .as_ref()
        .map(|_| fingerprint_tree(&request.state_dir, &config));
    let origin = Instant::now();
    let run_id = request.run_id.clone().unwrap_or_else(new_run_id);
    // A full run stages its evidence and publishes it whole at the end, so no gate's stale
    // evidence survives and a crash publishes nothing; one gate's run replaces its files.
    let evidence = match request.gate {
        None => EvidenceDir::staged(scope.evidence_dir(), to_run.iter().map(|g| g.name.as_str())),
        Some(_) => EvidenceDir::direct(scope.evidence_dir()),
    }
    .map_err(|e| VerifyError::EvidenceDir {
        path: e.path,
        source: e.source,
    })?;
    let executor = ProcessExecutor {
        project_root: project_root.clone(),
        evidence_dir: evidence.writing().to_path_buf(),
        state_dir: request.state_dir.root().to_path_buf(),
        run_id: run_id.clone(),
        wbs: request.wbs.as_ref().map(Wbs::to_string),
        env: request.env.clone(),
        redactor: request.redactor.clone(),
        origin,
    };
    let wbs = request.wbs.as_ref().map(Wbs::as_str);
    let context = EvidenceContext {
        run_id: &run_id,
        wbs,
    };
    let parallelism = config
        .parallelism
        .unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN));
    // Evidence of a gate that another gate needs is written before the gate counts as
    // finished: a dependent may read it. All other evidence is written once the last gate
    // has run, by up to `parallelism` threads. Between gates the process would write it with
    // caches that the gate's process has just evicted, on the CPU the next gate starts on;
    // batched at the end the same writes took half the time, and a writer thread running
    // beside the gates measured slower than either.
    let needed: HashSet<&str> = to_run
        .iter()
        .flat_map(|g| g.needs.iter().map(String::as_str))
        .collect();
    let record = |gate: &Gate, result: &mut GateResult| {
        if let Err(e) = write_evidence(&evidence, gate, result, context) {
            result.lose_evidence(format!("its evidence could not be written: {e}"));
        }
    };
    // The evidence directory as shown, relative to the project root: worked out once, not
    // for every gate.
    let shown_evidence = PathBuf::from(display_path(evidence.published(), &project_root));
    let run_one = |gate: &Gate| {
        let settled = settle(executor.attempt(gate), || executor.attempt(gate));
        let shown = EvidencePaths::new(&shown_evidence, &gate.name).shown();
        let mut result = GateResult::ran(gate, settled, shown);
        if needed.contains(gate.name.as_str()) {
            record(gate, &mut result);
        }
        result
    };
    let mut ran = run_in_order(&to_run, parallelism, &run_one);
    let mut unrecorded: Vec<(&Gate, &mut GateResult)> = to_run
        .iter()
        .zip(ran.iter_mut())
        .filter(|(gate, _)| !needed.contains(gate.name.as_str()))
        .collect();
    // Shares of 16 gates go to whichever thread asks next; a thread that cannot be
    // started leaves its shares to the others, this one included.
    let unrecorded_shares = unrecorded.len().div_ceil(16);
    let shares = Mutex::new(unrecorded.chunks_mut(16));
    let record_shares = || loop {
        let Some(share) = shares.lock().unwrap_or_else(PoisonError::into_inner).next() else {
            break;
        };
        for (gate, result) in share {
            record(gate, result);
        }
    };
    std::thread::scope(|threads| {
        let helpers = unrecorded_shares.min(parallelism.get()).saturating_sub(1);
        for _ in 0..helpers {
            let _ = std::thread::Builder::new().spawn_scoped(threads, record_shares);
        }
        record_shares();
    });
    if let Err(e) = evidence.publish() {
        for result in &mut ran {
            result.lose_evidence(format!(
                "its evidence could not be published to {}: {e}",
                display_path(evidence.published(), &project_root)
            ));
        }
    }

    // Fail closed: a gate that ran must have left its evidence. Evidence written after the
    // last gate had ended is there if its write succeeded (a failed write already made the
    // gate an ERROR). Evidence written while gates still ran, that of a gate another gate
    // needs, may since have been removed or replaced: it is looked for, in one listing of
    // the directory.
    if !needed.is_empty() {
        let present = evidence.published_files();
        let is_present = |path: &Path| path.file_name().is_some_and(|n| present.contains(n));
        for result in ran.iter_mut().filter(|r| needed.contains(r.name.as_str())) {
            let paths = EvidencePaths::new(evidence.published(), &result.name);
            let missing: Vec<String> = [&paths.json, &paths.markdown]
                .into_iter()
                .filter(|path| !is_present(path))
                .map(|path| display_path(path, &project_root))
                .collect();
            if !missing.is_empty() {
                result.lose_evidence(format!(
                    "gate {} was enabled but produced no evidence (missing {})",
                    result.name,
                    missing.join(" and ")
                ));
            }
        }
    }

    let ledger = Ledger::at(scope.ledger_path());
    let at = rfc3339(SystemTime::now());
    let verdicts = ran
        .iter()
        .map(|r| NewVerdict {
            criterion: check_name(&r.name),
            dimension: r.name.clone(),
            verdict: r.status.as_str().to_owned(),
            confidence: r.confidence.unwrap_or(Confidence::Low).as_str().to_owned(),
            reprobed: r.reprobed,
            evidence: r
                .evidence
                .as_ref()
                .map(|e| e.markdown.clone())
                .unwrap_or_default(),
        })
        .collect();
    match ledger.record(&run_id, wbs, &at, verdicts) {
        Ok(entries) => {
            for (result, entry) in ran.iter_mut().zip(entries) {
                result.flip = entry.flip;
                if entry.flip {
                    result.confidence = Some(Confidence::Low);
                }
            }
        }
        Err(e) => problems.push(problem(&e)),
    }

    let mut gates = ran;
    gates.extend(skipped);
    if request.gate.is_none() {
        // Keep the config's order with the skipped gates in their places.
        let order: Vec<&str> = config
            .gates
            .iter()
            .map(|g| g.name.as_str())
            .chain(config.unconfigured.iter().copied())
            .chain(planned.iter().map(|g| g.name.as_str()))
            .collect();
        gates.sort_by_key(|g| order.iter().position(|n| *n == g.name));
    }
    let actionable = actionable_findings(&gates);
    let markdown = render_report(
        ReportHeader {
            run: &run_id,
            task: wbs,
            gate: request.gate.as_deref(),
        },
        &gates,
        &actionable,
    );
    if let Err(e) = write_replacing(&scope.report_path(), markdown.as_bytes()) {
        problems.push(Problem {
            code: Code::VerifyReportUnwritable.to_string(),
            message: format!(
                "cannot write the report {}: {e}",
                scope.report_path().display()
            ),
        });
    }

    let mut verdict = None;
    let mut verdict_merge = None;
    let mut fingerprint = None;
    let mut tree_changed_by = Vec::new();
    if let Some(task) = &request.wbs {
        let path = request.state_dir.verdict_path(task);
        let rows: Vec<_> = gates.iter().filter_map(gate_check).collect();
        let removed: Vec<String> = if request.gate.is_some() {
            Vec::new()
        } else {
            gates
                .iter()
                .filter(|g| g.status == GateStatus::Skip)
                .map(|g| check_name(&g.name))
                .collect()
        };
        // Under the task's data lock: a derivation or the done gate never sees or writes
        // the artifact between this merge's read and its write.
        match DataLock::acquire(&request.state_dir, task) {
            Ok(lock) => match merge_gate_checks(
                &MergeTarget {
                    lock: &lock,
                    state_dir: &request.state_dir,
                    path: &path,
                    run_id: request.run_id.as_deref(),
                },
                &rows,
                &removed,
            ) {
                Ok(merge) => verdict_merge = Some(merge),
                Err(e) => problems.push(problem(&e)),
            },
            Err(e) => problems.push(problem(&e)),
        }
        verdict = Some(display_path(&path, &project_root));
        // A run in which no gate ran verified nothing: it records nothing either.
        let any_ran = gates.iter().any(|g| g.status != GateStatus::Skip);
        if let Some(before) = tree_before.filter(|_| any_ran) {
            let bound = record_verified(
                &request.state_dir,
                task,
                (&run_id, &policy, &config),
                &gates,
                before,
                &mut problems,
            );
            if let Some((print, changed_by)) = bound {
                fingerprint = Some(print);
                tree_changed_by = changed_by;
            }
        }
    }

    let summary = Summary::of(&gates);
    Ok(VerifyOutcome {
        run: run_id,
        task: wbs.map(str::to_owned),
        gate: request.gate.clone(),
        passed: summary.fail + summary.error == 0 && problems.is_empty(),
        summary,
        gates,
        actionable,
        report: display_path(&scope.report_path(), &project_root),
        ledger: display_path(&scope.ledger_path(), &project_root),
        verdict,
        verdict_merge,
        fingerprint,
        tree_changed_by,
        problems,
        warnings: config
            .warnings
            .iter()
            .map(|w| Problem {
                code: w.code.to_string(),
                message: format!("{}: {}", config.path.display(), w.one_line()),
            })
            .collect(),
        markdown,
    })
}

/// The gates a task's task file plans (see [`plan::evidence_command_gates`]): none without
/// a task file; a task file that cannot be used is a problem of the run, which then plans
/// none (the done gate denies on it too).
fn plan_from_task_file(state_dir: &StateDir, wbs: &Wbs, problems: &mut Vec<Problem>) -> Vec<Gate> {
    let root = state_dir.project_root();
    let task = match locate_task_file(wbs, None, root, state_dir).and_then(|p| read_task_file(&p)) {
        Ok(task) => task,
        Err(TaskFileError::NotFound { .. }) => return Vec::new(),
        Err(e) => {
            problems.push(problem(&e));
            return Vec::new();
        }
    };
    let artifact = match read_artifact_file(
        &state_dir.verdict_path(wbs),
        Some(state_dir.checkout_root()),
    )
    .outcome
    {
        ArtifactOutcome::Valid(artifact) if artifact.wbs == wbs.as_str() => Some(artifact),
        _ => None,
    };
    plan::evidence_command_gates(&task, artifact.as_ref())
}

/// The tree fingerprint with the policy's excludes, or the problem to report.
fn fingerprint_tree(state_dir: &StateDir, config: &VerifyConfig) -> Result<String, Problem> {
    let excludes = tree::config_excludes(state_dir, config).map_err(|e| problem(&e))?;
    tree::fingerprint(state_dir.project_root(), state_dir.root(), &excludes)
        .map(|f| f.hex)
        .map_err(|e| problem(&e))
}

/// Fingerprint the tree after the gates ran and append the task's `verified` record, under
/// its data lock; the fingerprint and the gates that could have changed the tree, or `None`
/// (with the problem recorded) when the tree or the ledger could not be used.
///
/// Which gate changed the tree is known for sure only when one ran; with several, the gates
/// that may write (`readOnly: false`) are named, or every gate that ran when none may.
fn record_verified(
    state_dir: &StateDir,
    task: &Wbs,
    (run_id, policy, config): (&str, &Policy, &VerifyConfig),
    gates: &[GateResult],
    before: Result<String, Problem>,
    problems: &mut Vec<Problem>,
) -> Option<(String, Vec<String>)> {
    let fail = |problems: &mut Vec<Problem>, p: Problem| {
        problems.push(Problem {
            code: p.code,
            message: format!(
                "no verified record was written (the done gate will ask for a new verify run): {}",
                p.message
            ),
        });
        None
    };
    let before = match before {
        Ok(before) => before,
        Err(p) => return fail(problems, p),
    };
    let after = match fingerprint_tree(state_dir, config) {
        Ok(after) => after,
        Err(p) => return fail(problems, p),
    };
    let ran: Vec<&GateResult> = gates
        .iter()
        .filter(|g| g.status != GateStatus::Skip)
        .collect();
    let tree_changed_by: Vec<String> = if before == after {
        Vec::new()
    } else {
        let writers: Vec<&GateResult> = ran.iter().copied().filter(|g| !g.read_only).collect();
        let suspects = if writers.is_empty() { &ran } else { &writers };
        let mut names: Vec<String> = suspects.iter().map(|g| check_name(&g.name)).collect();
        if names.is_empty() {
            // Nothing ran, yet the tree changed: something beside verify changed it.
            names.push("(not a gate)".to_owned());
        }
        names
    };
    let record = Verified {
        verify_run: run_id.to_owned(),
        fingerprint: after.clone(),
        gates: gates
            .iter()
            .map(|g| VerifiedGate {
                id: check_name(&g.name),
                status: g.status,
            })
            .collect(),
        tree_changed_by: tree_changed_by.clone(),
        policy_sha256: Some(policy.sha256().to_owned()),
    };
    // Best effort: the record names the policy either way; the snapshot lets `spur audit
    // verify` say what changed.
    let _ = policy.store(state_dir);
    let user = crate::store::audit::current_user();
    let context = ChangeContext {
        user: &user,
        run_id: Some(run_id),
        time: crate::store::timestamp::now(),
    };
    let appended = DataLock::acquire(state_dir, task)
        .map_err(|e| problem(&e))
        .and_then(|lock| {
            task_ledger::append(&lock, state_dir, NewRecord::Verified(record), &context)
                .map_err(|e| problem(&e))
        });
    match appended {
        Ok(_) => Some((after, tree_changed_by)),
        Err(p) => fail(problems, p),
    }
}

/// The gates to run (in order) and the results of the gates that will not: the enabled
/// configured gates, then the gates `planned` from the task file.
fn select(
    config: &VerifyConfig,
    planned: &[Gate],
    only: Option<&str>,
) -> Result<(Vec<Gate>, Vec<GateResult>), VerifyError> {
    if let Some(name) = only {
        if let Some(gate) = planned.iter().find(|g| g.name == name) {
            return Ok((vec![gate.clone()], Vec::new()));
        }
        return match config.gate(name) {
            Some(gate) => Ok((vec![gate.clone()], Vec::new())),
            None if config.unconfigured.contains(&name) => Err(VerifyError::UnconfiguredGate {
                name: name.to_owned(),
            }),
            None => Err(VerifyError::UnknownGate {
                name: name.to_owned(),
                help: did_you_mean(name, config.known_names())
                    .map(|m| format!("did you mean `{m}`?"))
                    .unwrap_or_else(|| {
                        let names: Vec<&str> = config.gates.iter().map(|g| g.name.as_str()).collect();
                        if names.is_empty() {
                            "no gates are configured: add them under `verify.gates` in .spur/config.yaml".to_owned()
                        } else {
                            format!("configured gates: {}", names.join(", "))
                        }
                    }),
            }),
        };
    }
    let run = config
        .gates
        .iter()
        .filter(|g| g.enabled)
        .chain(planned)
        .cloned()
        .collect();
    let skipped = config
        .gates
        .iter()
        .filter(|g| !g.enabled)
        .map(|g| GateResult::skipped(&g.name, SkipReason::Disabled, Some(g)))
        // A standard gate the file does not mention is no row: a SKIP row is for a gate
        // the user configured (disabled, or not run).
        .collect();
    Ok((run, skipped))
}

fn problem(error: &(dyn miette::Diagnostic + Send + Sync)) -> Problem {
    Problem {
        code: error.code().map(|c| c.to_string()).unwrap_or_default(),
        message: error.to_string(),
    }
}

/// Take the scope's verify lock, refusing (not waiting) when another run holds it: two
/// runs would write the same evidence and merge into the same verdict.
fn lock(scope: &VerifyScope) -> Result<FileLock, VerifyError> {
    let path = scope.lock_path();
    match FileLock::try_exclusive(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(VerifyError::Busy {
            scope: scope.describe(),
            path,
        }),
        Err(source) => Err(VerifyError::Lock { path, source }),
    }
}

/// `verify-20261129T183700123Z-4242`: sortable by time, unique per process.
fn new_run_id() -> String {
    let stamp: String = rfc3339(SystemTime::now())
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!("verify-{stamp}-{}", std::process::id())
}
