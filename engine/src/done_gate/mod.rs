//! The done gate (ARCHITECTURE.md, *The done gate*): the one code path that can certify a task done. The runner
//! calls it before entering a success terminal of a run with a wbs; `spur task update WBS
//! done` calls it too.
//!
//! Structural guarantee: a [`Done`] token is constructible only in this file, and the task
//! ledger writes `done` only from one. The gate gives a token for a self-consistent PASS,
//! or for a forced override after its audit record is durably written. It reads the task's
//! status from the task ledger itself, under the task's data lock its caller holds, so
//! "already done" comes only from the ledger and nothing changes the artifact between
//! the gate's read and the caller's ledger append.

mod complete;
pub(crate) mod provenance;
mod record;
mod verified;
mod why;

pub use record::{record_done, RecordedDone};
pub(crate) use verified::VerifiedAt;
pub use why::{explain_done, GateAccount, GateCheck};

pub use provenance::{write_verdict, Rewrite, UnrecordedWrite, WriteVerdictError};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::policy::{self, GatePolicy, PolicySource};
use crate::store::audit::{self, AuditEntry};
use crate::store::chain_key::key_for_writing;
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{self, LedgerRecord};
use crate::verdict::{read_artifact_file, ArtifactOutcome, Evaluation, Verdict};
use crate::wbs::Wbs;

/// Proof that the gate certified a task done. Not `Clone`, no public constructor.
#[derive(Debug, PartialEq, Eq)]
pub struct Done {
    via: DoneVia,
    verdict_sha256: Option<String>,
    /// The effective verdict of the artifact the gate read.
    verdict: Verdict,
    /// The tree the task's verify evidence holds at (`None`: forced, or the project
    /// verifies nothing).
    verified_at: Option<VerifiedAt>,
    /// The sha256 of the policy the gate decided under (`None` when it could not be read
    /// and the task was forced).
    policy_sha256: Option<String>,
}

#[cfg(test)]
impl Done {
    /// A token for the store's own tests, which stand for the gate.
    pub(crate) fn for_tests() -> Self {
        Self {
            via: DoneVia::Pass,
            verdict_sha256: None,
            verdict: Verdict::Pass,
            verified_at: None,
            policy_sha256: None,
        }
    }
}

/// How the gate certified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DoneVia {
    /// A self-consistent PASS verdict whose artifact spur wrote.
    Pass,
    /// A self-consistent PASS verdict in an artifact spur did not write (or that was edited
    /// since), accepted because `doneGate.externalVerdicts` is `allow`.
    External,
    /// `--force-done --reason`, with the hash of the audit record written for it.
    Forced { reason: String, audit_hash: String },
}

impl Done {
    /// How the gate certified it.
    pub(crate) fn via(&self) -> &DoneVia {
        &self.via
    }

    /// The sha256 of the verdict artifact the gate read (`None` when there was none).
    pub(crate) fn verdict_sha256(&self) -> Option<&str> {
        self.verdict_sha256.as_deref()
    }

    /// The sha256 of the policy the gate decided under.
    pub(crate) fn policy_sha256(&self) -> Option<&str> {
        self.policy_sha256.as_deref()
    }

    /// The effective verdict of the artifact the gate read.
    pub(crate) fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The tree the evidence holds at, when the gate checked one.
    pub(crate) fn verified_at(&self) -> Option<&VerifiedAt> {
        self.verified_at.as_ref()
    }
}

/// The reason of a forced override: always holds a visible character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForceReason(String);

/// A `--reason` with nothing a person can read: empty, whitespace, control characters or
/// zero-width and other invisible characters only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--force-done needs a --reason with at least one visible character (it was empty, blank or invisible)")]
pub struct BlankReason;

coded_diagnostic! {
    BlankReason {
        Self => Code::UsageBlankForceReason,
            help("e.g. --force-done --reason \"verified by hand: CI is down, see ticket 42\"");
    }
}

impl ForceReason {
    /// A reason that holds a visible character, or [`BlankReason`].
    pub fn new(reason: impl Into<String>) -> Result<Self, BlankReason> {
        let reason = reason.into();
        if !crate::visible_text::has_visible_char(&reason) {
            Err(BlankReason)
        } else {
            Ok(Self(reason))
        }
    }

    /// The reason as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Everything the gate decides from (plus the task ledger and the artifact it reads).
#[derive(Debug, Clone, Copy)]
pub struct DoneRequest<'a> {
    /// The task, whose data lock the caller holds from before this call until it has
    /// appended the `done` record (or given up).
    pub lock: &'a DataLock,
    /// `--force-done --reason`: allow without a PASS, written to the audit log.
    pub force: Option<&'a ForceReason>,
    /// The project's state directory (`.spur/`).
    pub state_dir: &'a StateDir,
    /// For the audit record.
    pub run_id: Option<&'a str>,
    /// For the audit record (see [`audit::current_user`]).
    pub user: &'a str,
    /// Where the policy comes from: the project's config, or the policy of the run the
    /// request comes from (the run itself, or a spur call of one of its steps).
    pub policy: &'a PolicySource,
}

/// Why the gate allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllowReason {
    /// A self-consistent PASS in the artifact spur last wrote.
    Pass,
    /// `--force-done --reason`, audited.
    Forced,
    /// A self-consistent PASS in an artifact written or edited outside spur, accepted by
    /// `doneGate.externalVerdicts: allow`.
    External,
}

impl AllowReason {
    /// The reason as written in output (`pass`, `forced`).
    pub fn as_str(self) -> &'static str {
        match self {
            AllowReason::Pass => "pass",
            AllowReason::Forced => "forced",
            AllowReason::External => "external",
        }
    }
}

/// Which way the gate went, as journaled and reported (`noop`, `allow`, `deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateDecision {
    /// Already done: nothing to certify.
    Noop,
    /// Certified.
    Allow,
    /// Not certified.
    Deny,
}

impl GateDecision {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            GateDecision::Noop => "noop",
            GateDecision::Allow => "allow",
            GateDecision::Deny => "deny",
        }
    }
}

impl std::fmt::Display for GateDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's decision.
#[derive(Debug)]
pub enum DoneDecision {
    /// Already done: nothing to certify.
    Noop {
        /// Says the task was already done.
        message: String,
    },
    /// Certified. `done` is the token the status store needs.
    Allow {
        /// Why it allowed.
        reason: AllowReason,
        /// The proof the task may be marked done.
        done: Done,
        /// The effective verdict of the artifact (PASS for `reason: Pass`).
        verdict: Verdict,
        /// What the gate says, for people.
        message: String,
        /// How the verdict was recomputed from the artifact.
        evaluation: Box<Evaluation>,
    },
    /// Not certified.
    Deny {
        /// The effective verdict the gate computed from the artifact.
        verdict: Verdict,
        /// Why the gate denied, for people.
        message: String,
        /// How the verdict was recomputed from the artifact.
        evaluation: Box<Evaluation>,
    },
}

impl DoneDecision {
    /// What the gate says, for people.
    pub fn message(&self) -> &str {
        match self {
            DoneDecision::Noop { message }
            | DoneDecision::Allow { message, .. }
            | DoneDecision::Deny { message, .. } => message,
        }
    }

    /// Which way the gate went.
    pub fn kind(&self) -> GateDecision {
        match self {
            DoneDecision::Noop { .. } => GateDecision::Noop,
            DoneDecision::Allow { .. } => GateDecision::Allow,
            DoneDecision::Deny { .. } => GateDecision::Deny,
        }
    }
}

/// Decide whether the locked task may become done.
///
/// Order: a task ledger that cannot be read, whose chain is broken or whose seals cannot
/// be verified → deny (fail closed); already done in the ledger through a sealed record →
/// noop (in a run, unless it was marked done since the run started under another policy
/// than the run's: deny); forced → allow forced once the audit record is durably written
/// (a failed write denies); else the artifact at `.spur/run/<wbs>-verdict.json` (which
/// must resolve inside the project) must be valid, name this task and be a
/// self-consistent PASS; in a run, the policy on disk must still be the one the run pinned
/// (`crate::policy`), and outside runs the one a person approved (`policy::approval`); the
/// artifact must be the one spur last recorded writing
/// ([`provenance`]; `doneGate.externalVerdicts: allow` accepts another, as `external`);
/// with a task file, carry a row for each of its requirements and criteria
/// (`done_gate/complete.rs`); and, when the policy configures verify gates or the task
/// file's criteria name commands, the task ledger's sealed `verified` records must show
/// every required gate green at the current tree fingerprint (`done_gate/verified.rs`).
pub fn evaluate_done_transition(request: &DoneRequest<'_>) -> DoneDecision {
    let wbs = request.lock.wbs();
    let ledger = task_ledger::read(request.state_dir, wbs).and_then(|l| {
        l.intact()?;
        Ok(l)
    });
    if let Some(done) = ledger.as_ref().ok().and_then(|l| l.certified_done()) {
        if let Some(message) = done_under_another_policy(request, done) {
            let path = request.state_dir.verdict_path(wbs);
            let read = read_artifact_file(&path, Some(request.state_dir.checkout_root()));
            let evaluation = Evaluation::new(&path, read.outcome, Some(wbs.as_str()));
            return DoneDecision::Deny {
                verdict: evaluation.effective,
                message,
                evaluation: Box::new(evaluation),
            };
        }
        return DoneDecision::Noop {
            message: format!("task {wbs} is already done; nothing to do"),
        };
    }
    let path = request.state_dir.verdict_path(wbs);
    let read = read_artifact_file(&path, Some(request.state_dir.checkout_root()));
    let evaluation = Evaluation::new(&path, read.outcome, Some(wbs.as_str()));
    let ledger = match ledger {
        Ok(ledger) => ledger,
        Err(error) => {
            return DoneDecision::Deny {
                verdict: evaluation.effective,
                message: format!("task {wbs} cannot be marked done: {error}"),
                evaluation: Box::new(evaluation),
            }
        }
    };
    let verdict = evaluation.effective;
    let deny_message = (verdict != Verdict::Pass).then(|| deny_message(wbs, &evaluation));
    let gate_policy = request.policy.resolve(request.state_dir);

    if let Some(reason) = request.force {
        let policy_sha256 = gate_policy.as_ref().ok().map(|p| p.sha256().to_owned());
        let entry = AuditEntry {
            time: crate::store::timestamp::now(),
            user: request.user.to_owned(),
            wbs: wbs.to_string(),
            run_id: request.run_id.map(str::to_owned),
            reason: reason.as_str().to_owned(),
            artifact_path: path.display().to_string(),
            artifact_sha256: read.sha256.clone(),
            stored_verdict: evaluation.stored,
            recomputed_verdict: evaluation.computed_verdict(),
            effective_verdict: verdict,
            deny_message,
            policy_sha256: policy_sha256.clone(),
        };
        let audit_path = request.state_dir.audit_path();
        let written = key_for_writing(request.state_dir)
            .map_err(|e| e.to_string())
            .and_then(|key| audit::append(&audit_path, &entry, &key).map_err(|e| e.to_string()));
        return match written {
            Ok(record) => {
                if let Ok(gate_policy) = &gate_policy {
                    // Best effort: the hash is recorded either way; the snapshot only lets
                    // `spur audit verify` say what changed.
                    let _ = gate_policy.policy.store(request.state_dir);
                }
                DoneDecision::Allow {
                    reason: AllowReason::Forced,
                    done: Done {
                        via: DoneVia::Forced {
                            reason: reason.as_str().to_owned(),
                            audit_hash: record.id().to_owned(),
                        },
                        verdict_sha256: read.sha256,
                        verdict,
                        verified_at: None,
                        policy_sha256,
                    },
                    verdict,
                    message: format!(
                        "task {wbs} is done by forced override (verify verdict {verdict}); reason: {}; recorded in {}",
                        reason.as_str(),
                        audit_path.display()
                    ),
                    evaluation: Box::new(evaluation),
                }
            }
            Err(error) => DoneDecision::Deny {
                verdict,
                message: format!(
                    "task {wbs} cannot be marked done: the forced override could not be recorded, so it was not applied: {error}"
                ),
                evaluation: Box::new(evaluation),
            },
        };
    }

    if let Some(message) = deny_message {
        return DoneDecision::Deny {
            verdict,
            message,
            evaluation: Box::new(evaluation),
        };
    }
    let deny = |message: String, evaluation: Evaluation| DoneDecision::Deny {
        verdict,
        message,
        evaluation: Box::new(evaluation),
    };
    let gate_policy = match gate_policy {
        Ok(gate_policy) => gate_policy,
        Err(e) => return deny(format!("task {wbs} cannot be marked done: {e}"), evaluation),
    };
    if let Err(message) = policy_unchanged(request.state_dir, wbs, &gate_policy) {
        return deny(message, evaluation);
    }
    if let Err(message) = policy_approved(request, wbs, &gate_policy) {
        return deny(message, evaluation);
    }
    let (reason, via, how) = match provenance::check(
        wbs,
        &path,
        &ledger,
        read.sha256.as_deref(),
        &gate_policy.config,
    ) {
        Ok(provenance::Provenance::Spur) => (AllowReason::Pass, DoneVia::Pass, ""),
        Ok(provenance::Provenance::External) => (
            AllowReason::External,
            DoneVia::External,
            ", written outside spur (accepted by doneGate.externalVerdicts: allow)",
        ),
        Err(message) => return deny(message, evaluation),
    };
    let later = match &evaluation.outcome {
        ArtifactOutcome::Valid(artifact) => {
            complete::check_complete(request.state_dir, wbs, artifact, &path)
        }
        _ => Ok(()),
    }
    .and_then(|()| verified::check(request.state_dir, &ledger, wbs, gate_policy.config()));
    let verified_at = match later {
        Ok(at) => at,
        Err(message) => return deny(message, evaluation),
    };
    // Best effort, as for a force: the done record carries the hash either way.
    let _ = gate_policy.policy.store(request.state_dir);
    DoneDecision::Allow {
        reason,
        done: Done {
            via,
            verdict_sha256: read.sha256,
            verdict,
            verified_at,
            policy_sha256: Some(gate_policy.sha256().to_owned()),
        },
        verdict,
        message: format!(
            "task {wbs} is done: verify verdict PASS in {}{how}",
            path.display()
        ),
        evaluation: Box::new(evaluation),
    }
}

/// The effective verdict of `wbs`'s artifact as the gate would compute it (the harsher of
/// stored and recomputed), read only: for a refusal before the gate was asked, so it still
/// names the verdict.
pub fn effective_verdict(state_dir: &StateDir, wbs: &Wbs) -> Verdict {
    let path = state_dir.verdict_path(wbs);
    let read = read_artifact_file(&path, Some(state_dir.checkout_root()));
    Evaluation::new(&path, read.outcome, Some(wbs.as_str())).effective
}

/// In a run: `Err(deny message)` when `.spur/config.yaml` no longer holds the policy the
/// run pinned, naming what changed. Outside runs there is nothing to compare.
fn policy_unchanged(
    state_dir: &StateDir,
    wbs: &Wbs,
    gate_policy: &GatePolicy,
) -> Result<(), String> {
    let Some(pinned) = &gate_policy.pinned else {
        return Ok(());
    };
    let tail = format!(
        "The run and the spur calls of its steps keep the policy it started with: put \
         .spur/config.yaml back, or start a new run to use the new policy, or override with: \
         spur task update {wbs} done --force-done --reason \"why\" (recorded in the audit log)"
    );
    let now = match policy::project_policy(state_dir) {
        Ok((now, _)) => now,
        Err(e) => {
            return Err(format!(
            "task {wbs} cannot be marked done: the done-gate policy of run {} cannot be compared \
                 with the config on disk: {e}. {tail}",
            pinned.run_id
        ))
        }
    };
    if now.sha256() == pinned.policy.sha256() {
        return Ok(());
    }
    Err(format!(
        "task {wbs} cannot be marked done: the done-gate policy changed during run {}: {} \
         ({} now has policy {}, the run pinned {}). {tail}",
        pinned.run_id,
        now.changes_since(&pinned.policy).join(", "),
        state_dir.config_path().display(),
        policy::short(now.sha256()),
        policy::short(pinned.policy.sha256()),
    ))
}

/// Outside runs: `Err(deny message)` when the policy the gate read is not the one a person
/// approved (`policy::approval`), or the approval approves nothing. A run's pin was held
/// to the approval when the run started.
fn policy_approved(
    request: &DoneRequest<'_>,
    wbs: &Wbs,
    gate_policy: &GatePolicy,
) -> Result<(), String> {
    if gate_policy.pinned.is_some() {
        return Ok(());
    }
    policy::approval::require(request.state_dir, &gate_policy.policy)
        .map(drop)
        .map_err(|e| {
            let help = miette::Diagnostic::help(&e)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            format!("task {wbs} cannot be marked done: {e}{help}")
        })
}

/// In a run: the deny message when the task was marked done since the run started, under
/// another policy than the one the run pinned (a spur call of a step that found another
/// run's policy, or none). A done from before the run is a plain noop.
fn done_under_another_policy(request: &DoneRequest<'_>, done: &LedgerRecord) -> Option<String> {
    let PolicySource::Pinned(pinned) = request.policy else {
        return None;
    };
    if done.at < pinned.started_at {
        return None;
    }
    let recorded = done.status().and_then(|s| s.policy_sha256.as_deref());
    if recorded == Some(pinned.policy.sha256()) {
        return None;
    }
    let wbs = request.lock.wbs();
    let then = match recorded {
        Some(sha) => format!("under policy {}", policy::short(sha)),
        None => "under no recorded policy".to_owned(),
    };
    Some(format!(
        "task {wbs} cannot be marked done: it was marked done during run {} (task ledger seq {}, \
         at {}) {then}, not under the policy the run pinned ({}). `spur audit verify` lists the \
         policy changes; start a new run, or override with: spur task update {wbs} done \
         --force-done --reason \"why\" (recorded in the audit log)",
        pinned.run_id,
        done.seq,
        done.at,
        policy::short(pinned.policy.sha256()),
    ))
}

/// Names the task, the verdict, the artifact, how to re-verify, and the override.
fn deny_message(wbs: &Wbs, evaluation: &Evaluation) -> String {
    let path = evaluation.path.display();
    let verdict = evaluation.effective;
    let cause = match &evaluation.outcome {
        ArtifactOutcome::Missing { .. } => {
            format!("missing verify verdict artifact {path} (verdict {verdict})")
        }
        ArtifactOutcome::Malformed { .. } | ArtifactOutcome::Invalid(_) => format!(
            "verify verdict artifact {path} is {}: {} (verdict {verdict})",
            evaluation.kind(),
            evaluation.outcome.reason().unwrap_or_default()
        ),
        ArtifactOutcome::Valid(artifact) => {
            if let Some(mismatch) = &evaluation.wbs_mismatch {
                format!(
                    "verify verdict artifact {path} certifies task {:?}, not {wbs} (verdict {verdict})",
                    mismatch.found
                )
            } else {
                let computed = evaluation.computed_verdict().unwrap_or(Verdict::Unknown);
                let first = evaluation
                    .computed
                    .as_ref()
                    .and_then(|a| a.fired.first())
                    .map(|f| format!("; {} on {}: {}", f.rule, f.subject, f.detail))
                    .unwrap_or_default();
                // A PASS that a red verify gate (merged into checks[]) turns: say the gate.
                let red_gate = evaluation.computed.as_ref().and_then(|a| {
                    a.fired.first().and_then(|f| match &f.subject {
                        crate::verdict::aggregate::Subject::Row {
                            section: crate::verdict::outcome::Section::Checks,
                            id,
                            ..
                        } => Some((
                            // verify's rows are named `gate-<gate>`
                            id.strip_prefix("gate-").unwrap_or(id).to_owned(),
                            f.detail.clone(),
                        )),
                        _ => None,
                    })
                });
                if let (true, Some((gate, detail))) = (evaluation.is_self_inconsistent(), red_gate)
                {
                    format!(
                        "verify gate {gate:?} did not pass ({detail}), so the verdict in {path} recomputes to {computed}, not PASS"
                    )
                } else if evaluation.is_self_inconsistent() {
                    format!(
                        "verdict {verdict}: the stored PASS in {path} is self-inconsistent, its rows recompute to {computed}{first}"
                    )
                } else {
                    format!(
                        "verdict {verdict} in {path} (stored {}, recomputed {computed}{first})",
                        artifact.verdict
                    )
                }
            }
        }
    };
    format!(
        "task {wbs} cannot be marked done: {cause}. Re-verify the task to write a fresh artifact \
         (spur verify --wbs {wbs}, or spur task verdict {wbs} --from-answer FILE), or override \
         with: spur task update {wbs} done --force-done --reason \"why\" (recorded in the audit log)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::task_status::{ChangeContext, Status, StatusChange};

    struct Fixture {
        _dir: tempfile::TempDir,
        state: StateDir,
        wbs: Wbs,
    }

    fn fixture(artifact: Option<&str>) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        if let Some(text) = artifact {
            // Written as spur writes it: the ledger records its sha256.
            std::fs::create_dir_all(state.run_dir()).unwrap();
            let path = state.verdict_path(&wbs);
            std::fs::write(&path, text).unwrap();
            let lock = DataLock::acquire(&state, &wbs).unwrap();
            let writer = crate::store::task_ledger::VerdictWriter::TaskVerdict;
            provenance::record_write(&lock, &state, &path, text.as_bytes(), writer, None).unwrap();
        }
        Fixture {
            _dir: dir,
            state,
            wbs,
        }
    }

    fn context() -> ChangeContext<'static> {
        ChangeContext {
            user: "ada",
            run_id: None,
            time: "2026-12-01T10:00:00.000Z".into(),
        }
    }

    /// Ask the gate with the task's ledger at `current` (`todo`: no ledger).
    fn decide(f: &Fixture, current: &str, force: Option<&ForceReason>) -> DoneDecision {
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let change = if Status::names_done(current) {
            StatusChange::Done(&Done {
                via: DoneVia::Pass,
                verdict_sha256: None,
                verdict: Verdict::Pass,
                verified_at: None,
                policy_sha256: None,
            })
        } else {
            StatusChange::To(Status::open(current).unwrap())
        };
        task_ledger::append(
            &lock,
            &f.state,
            task_ledger::NewRecord::Status(change),
            &context(),
        )
        .unwrap();
        evaluate_done_transition(&DoneRequest {
            lock: &lock,
            force,
            state_dir: &f.state,
            run_id: Some("run-1"),
            user: "ada",
            policy: &PolicySource::Project,
        })
    }

    const PASS: &str = r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}]}"#;

    #[test]
    fn already_done_is_a_noop_even_when_forced() {
        let f = fixture(None);
        let reason = ForceReason::new("x").unwrap();
        assert_eq!(decide(&f, "done", Some(&reason)).kind(), GateDecision::Noop);
        assert!(!f.state.audit_path().exists());
    }

    #[test]
    fn a_self_consistent_pass_is_allowed() {
        let f = fixture(Some(PASS));
        match decide(&f, "todo", None) {
            DoneDecision::Allow { reason, done, .. } => {
                assert_eq!(reason, AllowReason::Pass);
                assert_eq!(done.via(), &DoneVia::Pass);
                let sha = crate::store::digest::sha256_hex(PASS.as_bytes());
                assert_eq!(done.verdict_sha256(), Some(sha.as_str()));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn outside_runs_a_policy_that_is_not_the_approved_one_denies_and_a_force_is_not_held() {
        let f = fixture(Some(PASS));
        std::fs::write(
            f.state.config_path(),
            "doneGate:\n  externalVerdicts: deny\n",
        )
        .unwrap();
        crate::policy::approval::approve_on_first_use(&f.state, || "ada".into()).unwrap();
        std::fs::write(
            f.state.config_path(),
            "doneGate:\n  externalVerdicts: allow\n",
        )
        .unwrap();
        let decision = decide(&f, "todo", None);
        assert_eq!(decision.kind(), GateDecision::Deny, "{decision:?}");
        assert!(
            decision
                .message()
                .contains("is not the one approved by ada")
                && decision
                    .message()
                    .contains("doneGate.externalVerdicts: deny → allow")
                && decision.message().contains("spur policy approve"),
            "{}",
            decision.message()
        );
        let reason = ForceReason::new("reviewed by hand").unwrap();
        assert_eq!(
            decide(&f, "todo", Some(&reason)).kind(),
            GateDecision::Allow
        );
    }

    #[test]
    fn a_done_view_without_a_ledger_record_is_not_done() {
        let f = fixture(None);
        std::fs::create_dir_all(f.state.tasks_dir()).unwrap();
        std::fs::write(
            f.state.task_path(&f.wbs),
            r#"{"wbs":"T1","status":"done","history":[]}"#,
        )
        .unwrap();
        let decision = decide(&f, "todo", None);
        assert_eq!(decision.kind(), GateDecision::Deny, "{decision:?}");
    }

    #[test]
    fn a_broken_ledger_denies_even_when_forced_and_audits_nothing() {
        let f = fixture(Some(PASS));
        decide(&f, "done", None);
        let path = f.state.task_ledger_path(&f.wbs);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("ada", "eve")).unwrap();
        // The chain of the first two records (the artifact's write, done) still holds; a
        // third record that does not follow it breaks it.
        std::fs::write(&path, format!("{text}{text}")).unwrap();
        let lock = DataLock::acquire(&f.state, &f.wbs).unwrap();
        let reason = ForceReason::new("x").unwrap();
        for force in [None, Some(&reason)] {
            let decision = evaluate_done_transition(&DoneRequest {
                lock: &lock,
                force,
                state_dir: &f.state,
                run_id: None,
                user: "ada",
                policy: &PolicySource::Project,
            });
            assert_eq!(decision.kind(), GateDecision::Deny, "{decision:?}");
            assert!(
                decision.message().contains("is broken at seq 2"),
                "{}",
                decision.message()
            );
        }
        assert!(!f.state.audit_path().exists());
    }

    #[test]
    fn denies_missing_malformed_invalid_foreign_and_self_inconsistent() {
        let cases = [
            (None, Verdict::Unknown, "missing verify verdict artifact"),
            (Some("{"), Verdict::Unknown, "is malformed"),
            (
                Some("[]"),
                Verdict::Unknown,
                "is invalid: the JSON root is an array",
            ),
            (
                Some(
                    r#"{"wbs":"T2","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}]}"#,
                ),
                Verdict::Unknown,
                "certifies task \"T2\", not T1",
            ),
            (
                Some(
                    r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"UNMET","evidence":"-"}]}"#,
                ),
                Verdict::Fail,
                "self-inconsistent",
            ),
            (
                Some(
                    r#"{"wbs":"T1","verdict":"PARTIAL","requirements":[{"id":"R1","status":"PARTIAL","evidence":"-"}]}"#,
                ),
                Verdict::Partial,
                "verdict PARTIAL in",
            ),
        ];
        for (artifact, expected, fragment) in cases {
            let f = fixture(artifact);
            match decide(&f, "in-progress", None) {
                DoneDecision::Deny {
                    verdict, message, ..
                } => {
                    assert_eq!(verdict, expected, "{message}");
                    assert!(message.contains(fragment), "{message}");
                    assert!(message.contains("task T1"), "{message}");
                    assert!(message.contains("T1-verdict.json"), "{message}");
                    assert!(message.contains("--force-done --reason"), "{message}");
                    assert!(message.contains("spur verify --wbs T1"), "{message}");
                }
                other => panic!("{artifact:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn forced_writes_the_audit_record_before_allowing() {
        let f = fixture(None);
        let reason = ForceReason::new("hand-verified").unwrap();
        let decision = decide(&f, "todo", Some(&reason));
        let DoneDecision::Allow {
            reason: why, done, ..
        } = decision
        else {
            panic!("{decision:?}")
        };
        assert_eq!(why, AllowReason::Forced);
        let records = audit::list(&f.state.audit_path()).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].reason, "hand-verified");
        assert_eq!(records[0].run_id.as_deref(), Some("run-1"));
        assert!(records[0]
            .deny_message
            .as_deref()
            .unwrap_or("")
            .contains("missing"));
        assert_eq!(
            done.via(),
            &DoneVia::Forced {
                reason: "hand-verified".into(),
                audit_hash: records[0].id().to_owned()
            }
        );
    }

    #[test]
    fn a_failed_audit_write_denies() {
        let f = fixture(None);
        // The audit log's place is taken by a directory: the append must fail.
        std::fs::create_dir_all(f.state.audit_path()).unwrap();
        let reason = ForceReason::new("x").unwrap();
        let decision = decide(&f, "todo", Some(&reason));
        assert_eq!(decision.kind(), GateDecision::Deny, "{decision:?}");
        assert!(decision.message().contains("could not be recorded"));
    }

    #[test]
    fn blank_reasons_are_rejected() {
        assert_eq!(ForceReason::new(""), Err(BlankReason));
        assert_eq!(ForceReason::new(" \t\n"), Err(BlankReason));
        assert!(ForceReason::new("ok").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn an_artifact_symlinked_outside_the_project_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("v.json");
        std::fs::write(&target, PASS).unwrap();
        let f = fixture(None);
        std::fs::create_dir_all(f.state.run_dir()).unwrap();
        std::os::unix::fs::symlink(&target, f.state.verdict_path(&f.wbs)).unwrap();
        let decision = decide(&f, "todo", None);
        assert_eq!(decision.kind(), GateDecision::Deny);
        assert!(
            decision.message().contains("outside the project"),
            "{}",
            decision.message()
        );
    }
}
