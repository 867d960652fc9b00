//! Where the gate and verify take their policy from: the project's config as it is now
//! (outside runs), or the policy a run pinned (the run itself, and spur calls from its
//! steps, which find their run through `SPUR_RUN_ID` or the task's run lock).

use crate::policy::{Policy, PolicyError};
use crate::run::journal::{self, Event, JournalFormat};
use crate::run::lock::{holder, Holder};
use crate::run::RunId;
use crate::store::bounded_read::read_string;
use crate::store::chain_key::key_for_reading;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::verify::config::VerifyConfig;
use crate::verify::config_error::VerifyConfigErrors;
use crate::wbs::Wbs;

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// `.spur/config.yaml` as it is when read.
    Project,
    /// The policy a run pinned when it started.
    Pinned(PinnedPolicy),
}

/// A run's pinned policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedPolicy {
    pub(crate) run_id: String,
    pub(crate) policy: Policy,
    /// When the run started (its `run-started` record's time, RFC 3339 UTC).
    pub(crate) started_at: String,
    /// The run has finished (its journal says so).
    finished: bool,
}

impl PinnedPolicy {
    /// A policy pinned by `run_id` now (the run that is starting).
    pub(crate) fn new(run_id: &str, policy: Policy, started_at: String) -> Self {
        Self {
            run_id: run_id.to_owned(),
            policy,
            started_at,
            finished: false,
        }
    }

    /// The run that pinned it.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// A policy as the gate and verify use it: the policy and the verify configuration read
/// from the same text, so that the hash recorded is the hash of what was used.
#[derive(Debug)]
pub struct GatePolicy {
    pub(crate) policy: Policy,
    pub(crate) config: Result<VerifyConfig, VerifyConfigErrors>,
    /// The run's pin, when the policy is one.
    pub(crate) pinned: Option<PinnedPolicy>,
}

impl GatePolicy {
    /// The policy's sha256.
    pub fn sha256(&self) -> &str {
        self.policy.sha256()
    }

    /// The verify configuration it holds (`Err`: its `verify`/`doneGate` do not check).
    pub(crate) fn config(&self) -> Result<&VerifyConfig, &VerifyConfigErrors> {
        self.config.as_ref()
    }
}

impl PolicySource {
    /// The policy spur calls of this process use: the run named by `run_id` (the
    /// `SPUR_RUN_ID` a run gives its steps), else the run that holds the task's run lock
    /// (a step of it calling spur for its own task), else the project's config. A run that
    /// is named but cannot be verified, has no pinned policy or has finished is an error,
    /// not a fall back to the config a step may have edited.
    pub fn for_invocation(
        state_dir: &StateDir,
        run_id: Option<&str>,
        wbs: Option<&Wbs>,
    ) -> Result<Self, PolicyError> {
        if let Some(run_id) = run_id.filter(|id| !id.is_empty()) {
            let pinned = pinned_policy_of_run(state_dir, run_id)?;
            if pinned.finished {
                return Err(PolicyError::Pinned {
                    run_id: run_id.to_owned(),
                    why: "the run has finished (SPUR_RUN_ID names the run whose steps call spur; \
                          unset it outside runs)"
                        .to_owned(),
                });
            }
            return Ok(Self::Pinned(pinned));
        }
        let Some(wbs) = wbs else {
            return Ok(Self::Project);
        };
        match holder(&state_dir.lock_path(wbs)) {
            Holder::Free => Ok(Self::Project),
            Holder::Run(run_id) => Ok(Self::Pinned(pinned_policy_of_run(state_dir, &run_id)?)),
            Holder::Unnamed => Err(PolicyError::Pinned {
                run_id: "(unnamed)".to_owned(),
                why: format!(
                    "task {wbs} is being run, and its run lock {} names no run",
                    state_dir.lock_path(wbs).display()
                ),
            }),
        }
    }

    /// Read the policy: for the project, `.spur/config.yaml` now (read once, for both the
    /// hash and the configuration); for a run, its snapshot.
    pub fn resolve(&self, state_dir: &StateDir) -> Result<GatePolicy, PolicyError> {
        match self {
            PolicySource::Project => {
                let (policy, config) = project_policy(state_dir)?;
                Ok(GatePolicy {
                    policy,
                    config,
                    pinned: None,
                })
            }
            PolicySource::Pinned(pinned) => Ok(GatePolicy {
                config: VerifyConfig::parse(
                    &state_dir.policy_path(pinned.policy.sha256()),
                    pinned.policy.text(),
                ),
                policy: pinned.policy.clone(),
                pinned: Some(pinned.clone()),
            }),
        }
    }
}

/// The project's policy now, and its verify configuration, from one read of
/// `.spur/config.yaml` (a missing file: no policy, an empty configuration). A file that
/// cannot be read, or is not YAML, has no policy: the error is the configuration's own,
/// with its spans.
pub(crate) fn project_policy(
    state_dir: &StateDir,
) -> Result<(Policy, Result<VerifyConfig, VerifyConfigErrors>), PolicyError> {
    let path = state_dir.config_path();
    let text = match read_string(&path, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_missing() => String::new(),
        Err(e) => {
            return Err(VerifyConfigErrors::Unreadable {
                path,
                source: e.into(),
            }
            .into())
        }
    };
    let config = if text.is_empty() {
        Ok(VerifyConfig::empty(path.clone()))
    } else {
        VerifyConfig::parse(&path, &text)
    };
    match Policy::of_config_text(&text) {
        Ok(policy) => Ok((policy, config)),
        // Not YAML: the configuration's parse error says where.
        Err(_) => Err(config.err().map_or_else(
            || {
                VerifyConfigErrors::Unreadable {
                    path: path.clone(),
                    source: std::io::Error::other("it is not YAML"),
                }
                .into()
            },
            PolicyError::from,
        )),
    }
}

/// The policy run `run_id` pinned: its journal read and verified with the key, its
/// `run-started` record's policy hash, and the snapshot of that hash.
pub fn pinned_policy_of_run(
    state_dir: &StateDir,
    run_id: &str,
) -> Result<PinnedPolicy, PolicyError> {
    let pinned = |why: String| PolicyError::Pinned {
        run_id: run_id.to_owned(),
        why,
    };
    let id = RunId::parse(run_id).map_err(|e| pinned(e.to_string()))?;
    let path = id.dir_in(state_dir).join("journal.jsonl");
    let content = journal::read(&path, &key_for_reading(state_dir))
        .and_then(|c| c.verified(&path))
        .map_err(|e| pinned(e.to_string()))?;
    if content.format != JournalFormat::Current {
        return Err(pinned(format!(
            "its journal {} is not sealed with the key (an older format)",
            path.display()
        )));
    }
    let Some(first) = content.records.first() else {
        return Err(pinned("its journal is empty".to_owned()));
    };
    let Event::RunStarted { policy_sha256, .. } = &first.event else {
        return Err(pinned(
            "its journal does not start with run-started".to_owned(),
        ));
    };
    let sha256 = policy_sha256
        .as_deref()
        .ok_or_else(|| pinned("its run-started records no policy".to_owned()))?;
    let policy = Policy::stored(state_dir, sha256).map_err(|e| pinned(e.to_string()))?;
    let finished = content
        .records
        .iter()
        .any(|r| matches!(r.event, Event::RunFinished { .. }));
    Ok(PinnedPolicy {
        run_id: run_id.to_owned(),
        policy,
        started_at: first.at.clone(),
        finished,
    })
}
