//! The audit log (`<protected>/audit.jsonl`): one JSON line per forced done override, chained
//! and sealed so an edited, removed, inserted or reordered record is detected, and one
//! written without the key is not taken for spur's.
//!
//! Each line is a JSON object whose `prevHash` is the chain value of the previous line (its
//! `mac` when sealed, else the sha256 of its bytes; 64 zeros for the first line) and whose
//! last fields, `key` and `mac`, seal it (`store::seal`): even the last line cannot be
//! edited without the key. Its first field, `v`, is the format version. Format 1 (and a
//! record without `v`, from before formats were versioned) ended with `hash`, the plain
//! sha256 of the line before it: such records still verify, as *unkeyed*, and sealed
//! records may follow them, never the other way round. A sealed record whose key is not
//! at hand is *unverifiable*: `verify` counts it, goes on, and says so.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{open_directory, read_bounded, read_capped, ReadError};
use crate::store::chain_key::{ChainKey, KeyAtHand};
use crate::store::digest::sha256_hex;
use crate::store::file_lock::FileLock;
use crate::store::format_version::{line_version, unknown_version, LineVersion};
use crate::store::seal::{self, chain_value, find_seal, SealCheck};
use crate::verdict::Verdict;

/// The format version this spur writes: sealed records.
pub(crate) const FORMAT_VERSION: u64 = 2;

/// The format of records before keyed chains (`hash` last): still read, as unkeyed.
pub(crate) const FORMAT_UNSEALED: u64 = 1;

/// `prevHash` of the first record.
pub(crate) const GENESIS_HASH: &str =
    "0000000000000000000000000000000000000000000000000000000000000000";

const HASH_FIELD: &str = ",\"hash\":\"";

/// The most of the log that is read: a record is about 600 bytes, so some hundred
/// thousand forced overrides.
pub(crate) const MAX_AUDIT_BYTES: u64 = 64 * 1024 * 1024;

/// What the caller knows about an override; the chain fields are added on append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditEntry {
    /// RFC 3339 UTC.
    pub(crate) time: String,
    pub(crate) user: String,
    pub(crate) wbs: String,
    pub(crate) run_id: Option<String>,
    pub(crate) reason: String,
    pub(crate) artifact_path: String,
    pub(crate) artifact_sha256: Option<String>,
    pub(crate) stored_verdict: Option<Verdict>,
    pub(crate) recomputed_verdict: Option<Verdict>,
    pub(crate) effective_verdict: Verdict,
    /// What the gate would have said without the override (`None` if it would have allowed).
    pub(crate) deny_message: Option<String>,
    /// The sha256 of the gate's policy when it was overridden (`crate::policy`).
    pub(crate) policy_sha256: Option<String>,
}

/// A record as stored: the entry plus its format version and its place in the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// The format version; absent in logs written before it existed, which are format 1.
    #[serde(default = "format_1")]
    pub(crate) v: u64,
    /// When the override happened (RFC 3339, UTC).
    pub time: String,
    /// Who forced it (see [`current_user`]).
    pub user: String,
    /// The task forced done.
    pub wbs: String,
    /// The run that forced it, when a run did.
    pub run_id: Option<String>,
    /// The `--reason` given.
    pub reason: String,
    pub(crate) artifact_path: String,
    pub(crate) artifact_sha256: Option<String>,
    pub(crate) stored_verdict: Option<String>,
    pub(crate) recomputed_verdict: Option<String>,
    /// The verdict the gate computed when it was overridden.
    pub effective_verdict: String,
    pub(crate) deny_message: Option<String>,
    /// The sha256 of the gate's policy when it was overridden (sealed records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) policy_sha256: Option<String>,
    pub(crate) prev_hash: String,
    /// An unkeyed record's own sha256 (format 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hash: Option<String>,
    /// The id of the key that sealed the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<String>,
    /// The record's seal (HMAC-SHA256 of its line up to this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
}

impl AuditRecord {
    /// What names the record (a ledger's `auditHash`, the next line's `prevHash`): its
    /// `mac` when sealed, its `hash` when unkeyed.
    pub fn id(&self) -> &str {
        self.mac
            .as_deref()
            .or(self.hash.as_deref())
            .unwrap_or_default()
    }

    /// Whether the record is sealed with a key.
    pub fn is_keyed(&self) -> bool {
        self.mac.is_some()
    }

    /// The policy hash of the override, when recorded.
    pub fn policy_sha256(&self) -> Option<&str> {
        self.policy_sha256.as_deref()
    }
}

fn format_1() -> u64 {
    1
}

/// Why the log could not be appended to or read.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A record of a format this spur does not read.
    #[error("the audit log {path} cannot be read at line {line}: {problem}")]
    UnknownVersion {
        /// The log.
        path: String,
        /// The line (1-based).
        line: usize,
        /// The sentence naming both versions.
        problem: String,
    },
    /// Appending to the log failed.
    #[error("could not write the audit log {path}: {source}")]
    Write {
        /// The log.
        path: String,
        /// The write error.
        #[source]
        source: std::io::Error,
    },
    /// Reading the log failed.
    #[error("could not read the audit log {path}: {source}")]
    Read {
        /// The log.
        path: String,
        /// The read error.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    AuditError {
        Self::UnknownVersion { .. } => Code::AuditFormat,
            help("use the spur that wrote it (or a newer one); nothing was written");
        Self::Write { .. } => Code::AuditWriteFailed,
            help("the override was not applied; fix the state directory and retry");
        Self::Read { .. } => Code::AuditReadFailed;
    }
}

/// Append `entry` durably (fsync'd before returning) under an exclusive lock, chained to
/// the last line and sealed with `key`. Returns the record as written.
pub(crate) fn append(
    path: &Path,
    entry: &AuditEntry,
    key: &ChainKey,
) -> Result<AuditRecord, AuditError> {
    let write_err = |source| AuditError::Write {
        path: path.display().to_string(),
        source,
    };
    let existed = path.exists();
    let mut lock = FileLock::exclusive(path).map_err(write_err)?;
    let file = lock.file();
    file.seek(SeekFrom::Start(0)).map_err(write_err)?;
    // The lock refused a FIFO or a device; the cap bounds a regular file.
    let existing = read_capped(&mut *file, MAX_AUDIT_BYTES).map_err(|e| write_err(e.into()))?;
    let prev_hash = match last_line(&existing) {
        Some(line) => {
            // Chaining onto a record of a newer format would mix formats.
            if let Some(found) = unread_version(line) {
                return Err(AuditError::UnknownVersion {
                    path: path.display().to_string(),
                    line: existing.iter().filter(|b| **b == b'\n').count()
                        + usize::from(!existing.ends_with(b"\n")),
                    problem: unknown_version(found, FORMAT_VERSION),
                });
            }
            chain_value(line)
        }
        None => GENESIS_HASH.to_owned(),
    };
    let line =
        chain_line(entry, &prev_hash, key).map_err(|e| write_err(std::io::Error::other(e)))?;
    let mut buf = Vec::with_capacity(line.len() + 2);
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        // A torn last line stays (verify reports it); the new record starts on its own line.
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    file.write_all(&buf).map_err(write_err)?;
    file.sync_all().map_err(write_err)?;
    if !existed {
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if let Ok(d) = open_directory(dir) {
                d.sync_all().map_err(write_err)?;
            }
        }
    }
    serde_json::from_str(&line).map_err(|e| write_err(std::io::Error::other(e)))
}

/// The line for `entry` chained after `prev_hash`, sealed with `key`.
fn chain_line(
    entry: &AuditEntry,
    prev_hash: &str,
    key: &ChainKey,
) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Body<'a> {
        v: u64,
        #[serde(flatten)]
        entry: &'a AuditEntry,
        prev_hash: &'a str,
    }
    let body = serde_json::to_string(&Body {
        v: FORMAT_VERSION,
        entry,
        prev_hash,
    })?;
    // `body` is a JSON object: drop its closing brace, then seal the rest.
    Ok(seal::seal(body.strip_suffix('}').unwrap_or(&body), key))
}

fn last_line(bytes: &[u8]) -> Option<&[u8]> {
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if trimmed.is_empty() {
        return None;
    }
    let start = trimmed
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    trimmed.get(start..)
}

/// The result of checking the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainCheck {
    /// Records checked before the first break (all of them when intact).
    pub records: usize,
    /// How many of them are unkeyed (format 1: plain sha256, from before keyed chains).
    pub unkeyed: usize,
    /// How many unkeyed records no sealed record follows: nothing shows they were not
    /// rewritten whole (a sealed record's `prev` anchors every line before it).
    pub unanchored: usize,
    /// The sealed records whose key is not at hand, if any.
    pub unverifiable: Option<UnverifiableLines>,
    /// The first line that breaks the chain, if any.
    pub broken: Option<BrokenLine>,
}

/// The first line that breaks the chain (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokenLine {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Sealed records that cannot be verified with the key at hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnverifiableLines {
    /// The first of them (1-based).
    pub first_line: usize,
    /// How many.
    pub count: usize,
    /// Why the first cannot be verified.
    pub why: String,
}

impl ChainCheck {
    /// Whether no line breaks the chain (unverifiable lines do not break it).
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }

    /// Whether every line was verified: intact, none unverifiable, and every unkeyed one
    /// anchored by a sealed record after it.
    pub fn is_verified(&self) -> bool {
        self.is_intact() && self.unverifiable.is_none() && self.unanchored == 0
    }
}

/// Check every line of the log at `path`, seals with `key`. An absent log is an intact,
/// empty chain.
pub fn verify(path: &Path, key: &KeyAtHand) -> Result<ChainCheck, AuditError> {
    Ok(verify_bytes(&read_log(path)?, key))
}

/// The log's bytes; an absent log is empty.
fn read_log(path: &Path) -> Result<Vec<u8>, AuditError> {
    match read_bounded(path, MAX_AUDIT_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(ReadError::Missing) => Ok(Vec::new()),
        Err(e) => Err(AuditError::Read {
            path: path.display().to_string(),
            source: e.into(),
        }),
    }
}

/// An audit record that a task's history says authorised one of its changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditAnchor {
    pub(crate) wbs: String,
    pub(crate) time: String,
    pub(crate) audit_hash: String,
}

/// [`verify`], then check that every anchor (see `task_status::audit_anchors`) names a
/// record of the log: removing records from the end leaves a valid chain, but the task
/// histories still name them. (A sealed ledger names a record by its `mac`, which no
/// unkeyed record's sha256 can equal.)
pub fn verify_anchored(
    path: &Path,
    key: &KeyAtHand,
    anchors: &[AuditAnchor],
) -> Result<ChainCheck, AuditError> {
    let mut check = verify(path, key)?;
    if !check.is_intact() {
        return Ok(check);
    }
    let ids: std::collections::HashSet<String> =
        list(path)?.iter().map(|r| r.id().to_owned()).collect();
    if let Some(anchor) = anchors.iter().find(|a| !ids.contains(&a.audit_hash)) {
        check.broken = Some(BrokenLine {
            line: check.records + 1,
            problem: format!(
                "the forced override of task {} at {} (audit hash {}) is missing: records were removed from the log",
                anchor.wbs, anchor.time, anchor.audit_hash
            ),
        });
    }
    Ok(check)
}

/// Check a whole log held in memory.
pub(crate) fn verify_bytes(bytes: &[u8], key: &KeyAtHand) -> ChainCheck {
    let mut check = ChainCheck {
        records: 0,
        unkeyed: 0,
        unanchored: 0,
        unverifiable: None,
        broken: None,
    };
    let mut prev = GENESIS_HASH.to_owned();
    let mut sealed_before = false;
    let complete = bytes.is_empty() || bytes.ends_with(b"\n");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return check;
    }
    let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    let count = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let number = i + 1;
        let found = if number == count && !complete {
            Err("the last line is incomplete (no newline): a torn write or a truncation".to_owned())
        } else {
            check_line(line, &prev, sealed_before, key)
        };
        match found {
            Err(problem) => {
                check.broken = Some(BrokenLine {
                    line: number,
                    problem,
                });
                return check;
            }
            Ok(LineSeal::Unkeyed) => check.unkeyed += 1,
            Ok(LineSeal::Valid) => sealed_before = true,
            Ok(LineSeal::Unverifiable(why)) => {
                sealed_before = true;
                match &mut check.unverifiable {
                    Some(lines) => lines.count += 1,
                    None => {
                        check.unverifiable = Some(UnverifiableLines {
                            first_line: number,
                            count: 1,
                            why,
                        })
                    }
                }
            }
        }
        prev = chain_value(line);
        check.records += 1;
    }
    // Unkeyed records come first; any sealed record after them anchors them all.
    if !sealed_before {
        check.unanchored = check.unkeyed;
    }
    check
}

/// How a line that fits the chain is sealed.
enum LineSeal {
    Valid,
    Unkeyed,
    Unverifiable(String),
}

/// The version of a line, when it is one this spur does not read.
fn unread_version(line: &[u8]) -> Option<u64> {
    match line_version(line, FORMAT_VERSION) {
        Ok(LineVersion::Unknown(found)) if found != FORMAT_UNSEALED => Some(found),
        _ => None,
    }
}

fn check_line(
    line: &[u8],
    prev: &str,
    sealed_before: bool,
    key: &KeyAtHand,
) -> Result<LineSeal, String> {
    let text = std::str::from_utf8(line).map_err(|_| "the line is not UTF-8".to_owned())?;
    if let Some(found) = unread_version(line) {
        return Err(unknown_version(found, FORMAT_VERSION));
    }
    let record: AuditRecord =
        serde_json::from_str(text).map_err(|e| format!("the line is not an audit record: {e}"))?;
    let sealed = if record.v == FORMAT_VERSION {
        let seal = find_seal(line).filter(|seal| {
            record.key.as_deref() == Some(seal.key_id)
                && record.mac.as_deref() == Some(seal.mac)
                && record.hash.is_none()
        });
        Some(seal.ok_or("the record is not sealed: its last fields are not its key and its mac")?)
    } else {
        if sealed_before {
            return Err(
                "the record is unkeyed (no seal) after sealed records: it was written without the key"
                    .to_owned(),
            );
        }
        let hash = record
            .hash
            .as_deref()
            .filter(|_| record.key.is_none() && record.mac.is_none())
            .ok_or("the line has no trailing hash field")?;
        let split = text
            .rfind(HASH_FIELD)
            .ok_or("the line has no trailing hash field")?;
        let (open, rest) = text.split_at(split);
        let expected = format!("{HASH_FIELD}{hash}\"}}");
        if rest != expected || sha256_hex(open.as_bytes()) != hash {
            return Err("the record was edited: its content does not match its hash".to_owned());
        }
        None
    };
    if record.prev_hash != prev {
        return Err(if prev == GENESIS_HASH {
            "the first record does not start the chain: records before it were removed".to_owned()
        } else {
            "the record does not follow the line before it: a record was removed, inserted or reordered"
                .to_owned()
        });
    }
    let Some(seal) = sealed else {
        return Ok(LineSeal::Unkeyed);
    };
    match seal::check(&seal, key) {
        SealCheck::Valid => Ok(LineSeal::Valid),
        SealCheck::Unverifiable(why) => Ok(LineSeal::Unverifiable(why)),
        SealCheck::Forged => Err(
            "the record was edited, or sealed without the key: its seal is not the key's MAC of the line"
                .to_owned(),
        ),
    }
}

/// Every record of the log, in order. Lines that are not records are skipped by
/// `list` (`verify` is the place that reports them); a record of a format this spur does
/// not read is an error.
pub fn list(path: &Path) -> Result<Vec<AuditRecord>, AuditError> {
    let mut records = Vec::new();
    for (i, line) in read_log(path)?.split(|b| *b == b'\n').enumerate() {
        if let Some(found) = unread_version(line) {
            return Err(AuditError::UnknownVersion {
                path: path.display().to_string(),
                line: i + 1,
                problem: unknown_version(found, FORMAT_VERSION),
            });
        }
        if let Ok(record) = serde_json::from_slice(line) {
            records.push(record);
        }
    }
    Ok(records)
}

/// Who is acting: `$USER`, else `id -un`, else `unknown`.
pub fn current_user() -> String {
    if let Ok(user) = std::env::var("USER") {
        if !user.trim().is_empty() {
            return user;
        }
    }
    std::process::Command::new("id")
        .arg("-un")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(reason: &str) -> AuditEntry {
        AuditEntry {
            time: "2026-01-01T00:00:00.000Z".into(),
            user: "ada".into(),
            wbs: "T1".into(),
            run_id: None,
            reason: reason.into(),
            artifact_path: ".spur/run/T1-verdict.json".into(),
            artifact_sha256: None,
            stored_verdict: None,
            recomputed_verdict: None,
            effective_verdict: Verdict::Unknown,
            deny_message: Some("missing".into()),
            policy_sha256: None,
        }
    }

    fn key() -> ChainKey {
        ChainKey::fixed(3)
    }

    fn at_hand() -> KeyAtHand {
        KeyAtHand::Key(key())
    }

    fn verify(path: &Path) -> Result<ChainCheck, AuditError> {
        super::verify(path, &at_hand())
    }

    fn append(path: &Path, entry: &AuditEntry) -> Result<AuditRecord, AuditError> {
        super::append(path, entry, &key())
    }

    fn intact(records: usize, unkeyed: usize, unanchored: usize) -> ChainCheck {
        ChainCheck {
            records,
            unkeyed,
            unanchored,
            unverifiable: None,
            broken: None,
        }
    }

    fn log_of(n: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        for i in 0..n {
            append(&path, &entry(&format!("reason {i}"))).unwrap();
        }
        (dir, path)
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[String]) {
        std::fs::write(
            path,
            lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap();
    }

    /// Two records written by spur before audit records carried `v` (the log of
    /// `spur task update 0600 done --force-done …` and one for 0601, unchanged).
    const UNVERSIONED_LOG: [&str; 2] = [
        r#"{"time":"2026-12-01T20:24:36.223Z","user":"ada","wbs":"0600","runId":null,"reason":"verified by hand: CI is down","artifactPath":"/tmp/legacy/.spur/run/0600-verdict.json","artifactSha256":null,"storedVerdict":null,"recomputedVerdict":null,"effectiveVerdict":"UNKNOWN","denyMessage":"task 0600 cannot be marked done: missing verify verdict artifact /tmp/legacy/.spur/run/0600-verdict.json (verdict UNKNOWN). Re-verify the task to write a fresh artifact (spur verify --wbs 0600, or spur task verdict 0600 --from-answer FILE), or override with: spur task update 0600 done --force-done --reason \"why\" (recorded in the audit log)","prevHash":"0000000000000000000000000000000000000000000000000000000000000000","hash":"538035488865e511775fc5b699137c31c5c09dc2d1e2b0e030de508af26a6735"}"#,
        r#"{"time":"2026-12-01T20:24:36.279Z","user":"ada","wbs":"0601","runId":null,"reason":"second","artifactPath":"/tmp/legacy/.spur/run/0601-verdict.json","artifactSha256":null,"storedVerdict":null,"recomputedVerdict":null,"effectiveVerdict":"UNKNOWN","denyMessage":"task 0601 cannot be marked done: missing verify verdict artifact /tmp/legacy/.spur/run/0601-verdict.json (verdict UNKNOWN). Re-verify the task to write a fresh artifact (spur verify --wbs 0601, or spur task verdict 0601 --from-answer FILE), or override with: spur task update 0601 done --force-done --reason \"why\" (recorded in the audit log)","prevHash":"f4ef3bce0e25006b031fdf67be89e901257d5103efa3cc05fdb618d2530f42bb","hash":"069978facdd4b28acdbd1f026cc3c2329bf255c407e65dd50575237f8490e4c5"}"#,
    ];

    #[test]
    fn a_log_written_before_format_versions_still_verifies_and_chains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        write_lines(&path, &UNVERSIONED_LOG.map(str::to_owned));
        let check = verify(&path).unwrap();
        assert_eq!(check, intact(2, 2, 2));
        assert!(!check.is_verified(), "nothing anchors them yet");
        assert!(list(&path)
            .unwrap()
            .iter()
            .all(|r| r.v == 1 && !r.is_keyed()));
        let appended = append(&path, &entry("after")).unwrap();
        assert_eq!(appended.v, FORMAT_VERSION);
        assert!(appended.is_keyed());
        assert_eq!(
            appended.prev_hash,
            sha256_hex(UNVERSIONED_LOG[1].as_bytes())
        );
        assert!(lines(&path)[2].starts_with(r#"{"v":2,"time":"#));
        let check = verify(&path).unwrap();
        assert_eq!(check, intact(3, 2, 0), "the sealed record anchors them");
        assert!(check.is_verified());
        // An unkeyed record after a sealed one was written without the key.
        let mut l = lines(&path);
        l.push(UNVERSIONED_LOG[0].to_owned());
        write_lines(&path, &l);
        let broken = verify(&path).unwrap().broken.unwrap();
        assert_eq!(broken.line, 4);
        assert!(
            broken
                .problem
                .contains("unkeyed (no seal) after sealed records"),
            "{broken:?}"
        );
    }

    #[test]
    fn a_log_rewritten_whole_with_a_sha256_chain_reads_as_unkeyed() {
        let (_dir, path) = log_of(2);
        let mut prev = GENESIS_HASH.to_owned();
        let rewritten: Vec<String> = list(&path)
            .unwrap()
            .into_iter()
            .map(|mut r| {
                r.reason = "edited".into();
                r.v = 1;
                r.prev_hash = prev.clone();
                r.key = None;
                r.mac = None;
                r.hash = None;
                let body = serde_json::to_string(&r).unwrap();
                let open = body.strip_suffix('}').unwrap().to_owned();
                let line = format!("{open}{HASH_FIELD}{}\"}}", sha256_hex(open.as_bytes()));
                prev = sha256_hex(line.as_bytes());
                line
            })
            .collect();
        write_lines(&path, &rewritten);
        // A chain as older spurs wrote it: it holds, every record is unkeyed, and nothing
        // anchors them: not verified.
        let check = verify(&path).unwrap();
        assert_eq!(check, intact(2, 2, 2));
        assert!(!check.is_verified());
    }

    #[test]
    fn without_the_key_sealed_records_are_unverifiable_not_broken() {
        let (_dir, path) = log_of(2);
        for key in [
            KeyAtHand::Missing { file: "/k".into() },
            KeyAtHand::Key(ChainKey::fixed(4)),
        ] {
            let check = super::verify(&path, &key).unwrap();
            assert!(check.is_intact());
            assert!(!check.is_verified());
            let u = check.unverifiable.unwrap();
            assert_eq!((u.first_line, u.count), (1, 2));
        }
        // A seal in the name of the key, not made with it, is a forgery.
        let mut l = lines(&path);
        let mac_at = l[1].rfind("\"mac\":\"").unwrap() + 7;
        l[1].replace_range(mac_at..mac_at + 4, "0000");
        write_lines(&path, &l);
        let broken = verify(&path).unwrap().broken.unwrap();
        assert_eq!(broken.line, 2);
        assert!(
            broken.problem.contains("sealed without the key"),
            "{broken:?}"
        );
    }

    #[test]
    fn a_record_of_a_newer_format_is_named_not_misread() {
        let (_dir, path) = log_of(1);
        let mut l = lines(&path);
        l.push(format!(
            r#"{{"v":3,"prevHash":"{}","anything":"new"}}"#,
            chain_value(l[0].as_bytes())
        ));
        write_lines(&path, &l);
        let broken = verify(&path).unwrap().broken.unwrap();
        assert_eq!(broken.line, 2);
        assert_eq!(
            broken.problem,
            "it was written by a newer spur (format 3); this spur reads format 2"
        );
        let err = list(&path).unwrap_err().to_string();
        assert!(
            err.contains("audit.jsonl cannot be read at line 2"),
            "{err}"
        );
        let err = append(&path, &entry("x")).unwrap_err().to_string();
        assert!(err.contains("newer spur (format 3)"), "{err}");
        assert_eq!(lines(&path).len(), 2, "nothing was appended");
    }

    #[test]
    fn an_appended_chain_verifies() {
        let (_dir, path) = log_of(3);
        assert_eq!(verify(&path).unwrap(), intact(3, 0, 0));
        let records = list(&path).unwrap();
        assert_eq!(records[0].prev_hash, GENESIS_HASH);
        assert_eq!(records[1].prev_hash, records[0].id());
        assert_eq!(records[0].key.as_deref(), Some(key().id()));
    }

    #[test]
    fn concurrent_appends_keep_one_unbroken_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::thread::scope(|scope| {
            for t in 0..4 {
                let path = &path;
                scope.spawn(move || {
                    for i in 0..10 {
                        append(path, &entry(&format!("thread {t} #{i}"))).unwrap();
                    }
                });
            }
        });
        assert_eq!(verify(&path).unwrap(), intact(40, 0, 0));
    }

    #[test]
    fn an_absent_log_is_an_intact_empty_chain() {
        let dir = tempfile::tempdir().unwrap();
        assert!(verify(&dir.path().join("none.jsonl")).unwrap().is_intact());
    }

    #[test]
    fn names_the_first_broken_line() {
        let broken_at = |mutate: &dyn Fn(&mut Vec<String>)| {
            let (_dir, path) = log_of(3);
            let mut l = lines(&path);
            mutate(&mut l);
            write_lines(&path, &l);
            verify(&path).unwrap().broken.map(|b| (b.line, b.problem))
        };
        let edited = broken_at(&|l| l[1] = l[1].replace("reason 1", "reason X"));
        assert_eq!(edited.as_ref().map(|b| b.0), Some(2));
        assert!(edited.unwrap().1.contains("edited"));
        let last_edited = broken_at(&|l| l[2] = l[2].replace("ada", "eve"));
        assert_eq!(last_edited.map(|b| b.0), Some(3));
        let removed = broken_at(&|l| {
            l.remove(1);
        });
        assert_eq!(removed.as_ref().map(|b| b.0), Some(2));
        assert!(removed.unwrap().1.contains("removed"));
        let reordered = broken_at(&|l| l.swap(0, 1));
        assert_eq!(reordered.map(|b| b.0), Some(1));
        let first_removed = broken_at(&|l| {
            l.remove(0);
        });
        assert!(first_removed.unwrap().1.contains("first record"));
    }

    #[test]
    fn every_single_byte_edit_is_detected() {
        let (_dir, path) = log_of(2);
        let original = std::fs::read(&path).unwrap();
        for i in 0..original.len() {
            if original[i] == b'\n' {
                continue;
            }
            let mut bytes = original.clone();
            bytes[i] = if bytes[i] == b'a' { b'b' } else { b'a' };
            let check = verify_bytes(&bytes, &at_hand());
            let line = original[..i].iter().filter(|b| **b == b'\n').count() + 1;
            // An edit of the key's id makes the record one of another key: unverifiable.
            let found = check
                .broken
                .map(|b| b.line)
                .or(check.unverifiable.map(|u| u.first_line));
            assert_eq!(found, Some(line), "byte {i}");
        }
    }

    #[test]
    fn a_torn_last_line_is_reported_and_appends_still_chain() {
        let (_dir, path) = log_of(1);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"time\":");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(verify(&path).unwrap().broken.map(|b| b.line), Some(2));
        append(&path, &entry("after")).unwrap();
        assert_eq!(lines(&path).len(), 3);
    }

    #[test]
    fn a_fifo_or_dev_zero_as_the_log_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = verify(&fifo).unwrap_err();
        assert!(matches!(err, AuditError::Read { .. }));
        assert!(err.to_string().contains("it is a FIFO"), "{err}");
        assert!(matches!(list(&fifo), Err(AuditError::Read { .. })));
        assert!(matches!(
            append(&fifo, &entry("x")),
            Err(AuditError::Write { .. })
        ));
        let zero = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = verify(&zero).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let err = append(&zero, &entry("x")).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
    }
}
