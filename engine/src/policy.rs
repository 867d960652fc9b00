//! The gate's policy (ARCHITECTURE.md, *The pinned policy*): the parts of
//! `.spur/config.yaml` the done gate and verify read — `verify` (the gates) and `doneGate`
//! — in a canonical form, and its sha256. A step can edit the config file; so a run pins
//! the policy it starts with (a snapshot in `<protected>/policies/<sha256>.json`, its hash in the
//! keyed journal's `run-started`), and the run and every spur call from its steps use that
//! snapshot, and the gate denies naming what changed when the config on disk no longer
//! has it. Outside runs, every record of a gate decision or verify run names the policy it
//! was made under, and `spur audit verify` lists where it changed. And the edited config does
//! not become the next run's policy: a person approves the policy (`approval`), and runs and
//! gate decisions outside runs are held to the approval.

pub mod approval;
mod canonical;
mod history;
mod source;

use std::path::PathBuf;

use serde_json::Value;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::write_atomic;
use crate::store::bounded_read::read_string;
use crate::store::chain_key::KeyError;
use crate::store::digest::sha256_hex;
use crate::store::ledger_record::is_sha256_hex;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::verify::config_error::VerifyConfigErrors;
use crate::yaml::parse_config;

pub use history::{decisions, policy_changes, PolicyChange, PolicyDecision};
pub(crate) use source::project_policy;
pub use source::{pinned_policy_of_run, GatePolicy, PinnedPolicy, PolicySource};

/// A policy in its canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    sha256: String,
    text: String,
}

impl Policy {
    /// The policy of a config file's text (an empty text: no policy, `{}`).
    pub(crate) fn of_config_text(text: &str) -> Result<Self, String> {
        let root = parse_config(text).map_err(|e| e.to_string())?;
        Ok(Self::of_canonical(canonical::canonical_text(root.as_ref())))
    }

    fn of_canonical(text: String) -> Self {
        Self {
            sha256: sha256_hex(text.as_bytes()),
            text,
        }
    }

    /// The sha256 of the canonical form (lowercase hex).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The canonical form: a config text with only the policy sections.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The canonical form as a JSON value (keys sorted), for output.
    pub fn tree(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// What changed from `old` to this policy, key by key (see `canonical::changes`); a
    /// difference of key order only is named as such.
    pub fn changes_since(&self, old: &Policy) -> Vec<String> {
        let found = canonical::changes(&old.tree(), &self.tree());
        if found.is_empty() && self.sha256 != old.sha256 {
            return vec!["the order of its keys changed".to_owned()];
        }
        found
    }

    /// Each value of the policy on a line, for a person (`verify.gates.tests.command: cargo
    /// test`); empty for a config with neither `verify` nor `doneGate`.
    pub fn described_fields(&self) -> Vec<String> {
        canonical::fields(&self.tree())
    }

    /// [`Policy::changes_since`] for a person reviewing them: each change with its values
    /// (`doneGate.externalVerdicts: deny → allow`), the gates counted (`verify.gates: 3 gates
    /// → 0 (removed: …)`).
    pub fn described_changes_since(&self, old: &Policy) -> Vec<String> {
        let found = canonical::described_changes(&old.tree(), &self.tree());
        if found.is_empty() && self.sha256 != old.sha256 {
            return vec!["the order of its keys changed".to_owned()];
        }
        found
    }

    /// Keep the snapshot in `<protected>/policies/<sha256>.json`, if it is not there yet, so
    /// that what a recorded hash stood for can be read back.
    pub(crate) fn store(&self, state_dir: &StateDir) -> Result<(), PolicyError> {
        let path = state_dir.policy_path(&self.sha256);
        if Self::stored(state_dir, &self.sha256).is_ok() {
            return Ok(());
        }
        write_atomic(&path, self.text.as_bytes()).map_err(|e| PolicyError::Store {
            path,
            why: e.to_string(),
        })
    }

    /// The snapshot whose sha256 is `sha256`, read back and checked: a file whose bytes do
    /// not hash to its name was not written by spur, or was edited since.
    pub fn stored(state_dir: &StateDir, sha256: &str) -> Result<Self, PolicyError> {
        if !is_sha256_hex(sha256) {
            return Err(PolicyError::Snapshot {
                path: state_dir.policies_dir(),
                why: format!("{sha256:?} is not a sha256"),
            });
        }
        let path = state_dir.policy_path(sha256);
        let text = read_string(&path, MAX_CONFIG_BYTES).map_err(|e| PolicyError::Snapshot {
            path: path.clone(),
            why: e.to_string(),
        })?;
        let policy = Self::of_canonical(text);
        if policy.sha256 != sha256 {
            return Err(PolicyError::Snapshot {
                path,
                why: format!(
                    "its content hashes to {}, not to its name: it was edited",
                    policy.sha256
                ),
            });
        }
        Ok(policy)
    }
}

/// A config's policy that is not the approved one, and what changed since.
#[derive(Debug)]
pub struct Unapproved {
    /// `.spur/config.yaml`.
    pub config: PathBuf,
    /// The config's policy (short hash).
    pub now: String,
    /// The approved policy (short hash).
    pub approved: String,
    /// Who approved it.
    pub by: String,
    /// When.
    pub at: String,
    /// What changed since, for a reviewer.
    pub changes: Vec<String>,
}

/// The first 12 hex digits of a policy hash, as shown.
pub fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// Why a policy could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The config file cannot be read or is not YAML (its diagnostics, with their spans).
    #[error(transparent)]
    Config(#[from] VerifyConfigErrors),
    /// A snapshot cannot be kept.
    #[error("the policy snapshot {path} cannot be written: {why}")]
    Store {
        /// The snapshot file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A snapshot cannot be read back, or is not what its name says.
    #[error("the policy snapshot {path} cannot be used: {why}")]
    Snapshot {
        /// The snapshot file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A run's pinned policy cannot be found.
    #[error("the pinned policy of run {run_id} cannot be used: {why}")]
    Pinned {
        /// The run.
        run_id: String,
        /// Why.
        why: String,
    },
    /// The config's policy is not the one a person approved.
    #[error(
        "the gate's policy in {} ({}) is not the one approved by {} at {} ({}): {}",
        .0.config.display(),
        .0.now,
        .0.by,
        .0.at,
        .0.approved,
        .0.changes.join("; ")
    )]
    Unapproved(Box<Unapproved>),
    /// The approval record was edited, or written without the key.
    #[error("the approval of the gate's policy {path} was tampered with: {why}")]
    ApprovalTampered {
        /// The record.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The approval record was sealed with a key that is not at hand.
    #[error("the approval of the gate's policy {path} cannot be verified: {why}")]
    ApprovalUnverifiable {
        /// The record.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The approval record cannot be read or written.
    #[error("the approval of the gate's policy {path} cannot be {doing}: {why}")]
    ApprovalUnusable {
        /// The record.
        path: PathBuf,
        /// `read` or `written`.
        doing: &'static str,
        /// Why.
        why: String,
    },
    /// The key to seal an approval with cannot be had.
    #[error(transparent)]
    Key(#[from] KeyError),
}

coded_diagnostic! {
    PolicyError {
        forward { Config, Key }
        Self::Store { .. } => Code::PolicyStoreFailed,
            help("make the protected state's policies/ (`spur state show`) writable");
        Self::Snapshot { .. } => Code::PolicyPinned,
            help("a policy snapshot is named by its sha256; spur does not use one whose bytes changed. \
                  Start a new run with `spur run`");
        Self::Pinned { .. } => Code::PolicyPinned,
            help("spur calls from a run's steps use the policy the run started with; this one cannot be \
                  found or verified. Start a new run with `spur run`");
        Self::Unapproved(_) => Code::PolicyUnapproved,
            help("review .spur/config.yaml; if the change is yours, run `spur policy approve` \
                  (`spur policy show` shows both policies)");
        Self::ApprovalTampered { .. } => Code::PolicyApprovalTampered,
            help("spur seals the approval with your key; an edited one approves nothing. Review \
                  .spur/config.yaml, then run `spur policy approve` (book: The approved policy)");
        Self::ApprovalUnverifiable { .. } => Code::PolicyApprovalUnverifiable,
            help("restore the key that sealed it (or point SPUR_KEY_FILE at it), or review \
                  .spur/config.yaml and run `spur policy approve` (book: Keys)");
        Self::ApprovalUnusable { .. } => Code::PolicyApprovalUnusable,
            help("the approval lives in the protected state (`spur state show`): make it readable \
                  and writable by you");
    }
}
