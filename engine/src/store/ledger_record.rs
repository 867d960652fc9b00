//! The records of a task ledger (`store::task_ledger`), by kind. Every record since format 2
//! has a `kind`: `status` (a status change, the only kind a task's status is read from),
//! `verdict-written` (spur wrote the task's verdict artifact, with its sha256) and
//! `verified` (a verify run's gate results at a tree fingerprint). Format 3 seals each
//! record with the key (`key`, `mac`: `store::seal`). Format 2 (unsealed) and format 1
//! (status records only, without `kind`) still read, as *unkeyed* records.

use serde::{Deserialize, Serialize};

use crate::done_gate::{AllowReason, GateDecision};
use crate::store::task_status::Status;
use crate::verify::status::GateStatus;

/// One record of a task ledger, as stored: the fields every kind has, and its kind's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerRecord {
    /// The format version of the line it was read from (2 for every record this spur writes).
    pub v: u64,
    /// 0 for the first record, then gap-free.
    pub seq: u64,
    /// The task.
    pub wbs: String,
    /// When, RFC 3339 UTC.
    pub at: String,
    /// Who (see `audit::current_user`).
    pub user: String,
    /// The run that wrote the record, if a run did.
    pub run: Option<String>,
    /// The record's kind and its kind's fields (`kind` in the line).
    #[serde(flatten)]
    pub entry: LedgerEntry,
    /// The previous line's chain value (its `mac` when sealed, else the lowercase hex
    /// sha256 of its bytes); `""` for the first record.
    pub prev: String,
    /// The id of the key that sealed the record (format 3); `None` for an unkeyed record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The record's seal: HMAC-SHA256 of its line up to this field (format 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

impl LedgerRecord {
    /// Whether the record is sealed with the key: only sealed records are proof (an
    /// unkeyed one is history from before keyed chains, or written without the key).
    pub fn is_keyed(&self) -> bool {
        self.mac.is_some()
    }

    /// The status change, when this is a `status` record.
    pub fn status(&self) -> Option<&StatusRecord> {
        match &self.entry {
            LedgerEntry::Status(status) => Some(status),
            LedgerEntry::VerdictWritten(_) | LedgerEntry::Verified(_) => None,
        }
    }

    /// The artifact write, when this is a `verdict-written` record.
    pub fn verdict_written(&self) -> Option<&VerdictWritten> {
        match &self.entry {
            LedgerEntry::VerdictWritten(written) => Some(written),
            LedgerEntry::Status(_) | LedgerEntry::Verified(_) => None,
        }
    }

    /// The verify run's results, when this is a `verified` record.
    pub fn verified(&self) -> Option<&Verified> {
        match &self.entry {
            LedgerEntry::Verified(verified) => Some(verified),
            LedgerEntry::Status(_) | LedgerEntry::VerdictWritten(_) => None,
        }
    }
}

/// A record's kind, with its fields. Every variant rejects fields it does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LedgerEntry {
    /// A status change.
    Status(StatusRecord),
    /// spur wrote the task's verdict artifact.
    VerdictWritten(VerdictWritten),
    /// A verify run's gate results at a tree fingerprint.
    Verified(Verified),
}

impl LedgerEntry {
    /// `status`, `verdict-written`, `verified`: the `kind` of the line.
    pub fn kind(&self) -> &'static str {
        match self {
            LedgerEntry::Status(_) => "status",
            LedgerEntry::VerdictWritten(_) => "verdict-written",
            LedgerEntry::Verified(_) => "verified",
        }
    }
}

/// A status change (format 1's only record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusRecord {
    /// The status before the change (`todo` for the first status record).
    pub from: Status,
    /// The status after it.
    pub to: Status,
    /// The done gate's decision, for a change to done; `None` otherwise.
    pub gate: Option<GateRecord>,
    /// The sha256 of the verdict artifact the gate read (`None` when there was none).
    pub verdict_sha256: Option<String>,
    /// The hash of the audit record of a forced override.
    pub audit_hash: Option<String>,
    /// The sha256 of the gate's policy when it certified done (`crate::policy`); `None`
    /// for other changes and records from before the policy was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_sha256: Option<String>,
}

/// How the gate certified a `done` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateRecord {
    /// Always `allow`: only an allow makes a done record.
    pub decision: GateDecision,
    /// `pass` or `forced`.
    pub reason: AllowReason,
    /// The `--reason` of a forced override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_reason: Option<String>,
}

/// spur wrote the task's verdict artifact (`.spur/run/<wbs>-verdict.json`): the sha256 of the
/// bytes it wrote, and which of its writers wrote them. Appended after the atomic write,
/// under the task's data lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictWritten {
    /// Lowercase hex sha256 of the artifact's bytes as written.
    pub sha256: String,
    /// Which of spur's writers wrote it.
    pub writer: VerdictWriter,
}

/// The writers of a verdict artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictWriter {
    /// `spur task verdict`.
    TaskVerdict,
    /// The `verdict.derive` action.
    VerdictDerive,
    /// `spur verify`'s merge of its gate results into the artifact.
    Verify,
    /// The `json.update` action, when its target is the task's artifact.
    JsonUpdate,
}

impl VerdictWriter {
    /// `task-verdict`, `verdict-derive`, `verify`, `json-update`.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictWriter::TaskVerdict => "task-verdict",
            VerdictWriter::VerdictDerive => "verdict-derive",
            VerdictWriter::Verify => "verify",
            VerdictWriter::JsonUpdate => "json-update",
        }
    }
}

/// A verify run's gate results at a tree fingerprint (`spur verify --wbs W`, after its gates
/// ran, under the task's data lock).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verified {
    /// The verify run's id.
    pub verify_run: String,
    /// Lowercase hex sha256 of the working tree, taken after the gates ran.
    pub fingerprint: String,
    /// Every gate of that verify run and its status.
    pub gates: Vec<VerifiedGate>,
    /// The ids of gates whose run changed the fingerprint (may be empty).
    pub tree_changed_by: Vec<String>,
    /// The sha256 of the policy the verify run ran its gates under (`crate::policy`);
    /// `None` in records from before the policy was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_sha256: Option<String>,
}

/// One gate's result in a [`Verified`] record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifiedGate {
    /// The gate's id (e.g. `gate-tests`, `evidence-command:AC1`).
    pub id: String,
    /// PASS, WARN, FAIL, ERROR or SKIP.
    pub status: GateStatus,
}

/// A format-1 line: a status record without `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FormatOneRecord {
    v: u64,
    seq: u64,
    wbs: String,
    from: Status,
    to: Status,
    at: String,
    user: String,
    run: Option<String>,
    gate: Option<GateRecord>,
    verdict_sha256: Option<String>,
    audit_hash: Option<String>,
    prev: String,
}

impl From<FormatOneRecord> for LedgerRecord {
    fn from(r: FormatOneRecord) -> Self {
        LedgerRecord {
            v: r.v,
            seq: r.seq,
            wbs: r.wbs,
            at: r.at,
            user: r.user,
            run: r.run,
            entry: LedgerEntry::Status(StatusRecord {
                from: r.from,
                to: r.to,
                gate: r.gate,
                verdict_sha256: r.verdict_sha256,
                audit_hash: r.audit_hash,
                policy_sha256: None,
            }),
            prev: r.prev,
            key: None,
            mac: None,
        }
    }
}

/// Whether `text` is a lowercase hex sha256 (64 digits).
pub(crate) fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
