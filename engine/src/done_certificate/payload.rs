//! What a done certificate says: the signed part of the certificate file. Every field is
//! something the gate decided from or spur recorded; nothing in it is read back as a status.

use serde::{Deserialize, Serialize};

/// The content of a done certificate (the `certificate` member of the file, signed as the
/// exact bytes written there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Certificate {
    /// [`super::FORMAT`].
    pub format: String,
    /// The task.
    pub wbs: String,
    /// The task file the gate read, and the hash of what of it counts; `None` when the task
    /// had no task file.
    pub task_file: Option<TaskFileBinding>,
    /// The verdict artifact the gate read.
    pub verdict: VerdictBinding,
    /// The tree the task's verify evidence holds at; `None` when the project verifies
    /// nothing, or the task was forced.
    pub tree: Option<TreeBinding>,
    /// How the gate decided.
    pub gate: GateBinding,
    /// Who signed.
    pub signer: SignerBinding,
    /// When the gate certified the task (RFC 3339 UTC).
    pub certified_at: String,
    /// The run that certified it, if a run did.
    pub run_id: Option<String>,
}

/// A task file, bound by the sha256 of its requirements, criteria and every other section
/// but the frontmatter and the sections spur writes after verify (Solution, Testing,
/// Review, Artifacts): the text the tree fingerprint covers (`tree/task_sections.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskFileBinding {
    /// Relative to the project root.
    pub path: String,
    /// Lowercase hex sha256 of the text that counts.
    pub sha256: String,
}

/// The verdict artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictBinding {
    /// Lowercase hex sha256 of its bytes (`None`: there was none, a forced done).
    pub artifact_sha256: Option<String>,
    /// The effective verdict the gate computed (`PASS`, or anything for a forced done).
    pub verdict: String,
}

/// The tree fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TreeBinding {
    /// Lowercase hex sha256 of the working tree ([`crate::tree::fingerprint`]).
    pub fingerprint: String,
    /// The verify run whose results at that tree the gate accepted.
    pub verify_run: String,
}

/// The gate's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateBinding {
    /// Always `allow`.
    pub decision: String,
    /// `pass`, `external` or `forced`: how the task got done.
    pub reason: String,
    /// The `--reason` of a forced done.
    pub force_reason: Option<String>,
    /// The hash of the audit record of a forced done.
    pub audit_hash: Option<String>,
}

/// Who signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignerBinding {
    /// The principal the `allowed_signers` file must list with the signing key.
    pub principal: String,
    /// The user spur ran as (as in the task ledger).
    pub user: String,
}
