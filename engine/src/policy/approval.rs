//! The approved policy (ARCHITECTURE.md, *The approved policy*): the gate's policy a person
//! approved with `spur policy approve`, kept in the protected state as one sealed line. A
//! step can write `.spur/config.yaml` but not the protected state, so a run that starts and
//! a gate decision outside runs compare the config's policy with the approved one and
//! refuse a difference, naming it, until a person approves it. A record that is not sealed
//! with the key, or whose policy is not what its hash says, approves nothing.

use serde::{Deserialize, Serialize};

use crate::policy::{project_policy, short, Policy, PolicyError, Unapproved};
use crate::store::atomic_file::write_atomic;
use crate::store::bounded_read::read_string;
use crate::store::chain_key::{key_for_reading, key_for_writing};
use crate::store::seal::{self, find_seal, SealCheck};
use crate::store::state_dir::StateDir;

/// The format version of the record.
const FORMAT_VERSION: u64 = 1;

/// The most bytes of the record: the canonical policy of a config of at most 1 MiB, as a
/// JSON string, and a few fields.
const MAX_APPROVAL_BYTES: u64 = 4 * 1024 * 1024;

/// A policy a person approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    at: String,
    by: String,
    policy: Policy,
}

impl Approval {
    /// When (RFC 3339 UTC).
    pub fn at(&self) -> &str {
        &self.at
    }

    /// Who (`$USER`).
    pub fn by(&self) -> &str {
        &self.by
    }

    /// The policy approved.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// The record as written: the seal follows these fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewRecord<'a> {
    v: u64,
    at: &'a str,
    by: &'a str,
    policy_sha256: &'a str,
    policy: &'a str,
}

/// The record as read (its seal checked before).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    v: u64,
    at: String,
    by: String,
    policy_sha256: String,
    policy: String,
}

/// The approved policy of the state directory: `None` when no one approved one yet. A
/// record that was edited, or sealed without the key, is `ApprovalTampered`; one whose key
/// is not at hand `ApprovalUnverifiable` — never an approval.
pub fn read(state_dir: &StateDir) -> Result<Option<Approval>, PolicyError> {
    let path = state_dir.approved_policy_path();
    let tampered = |why: &str| PolicyError::ApprovalTampered {
        path: path.clone(),
        why: why.to_owned(),
    };
    let text = match read_string(&path, MAX_APPROVAL_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => {
            return Err(PolicyError::ApprovalUnusable {
                path,
                doing: "read",
                why: e.to_string(),
            })
        }
    };
    let line = text.strip_suffix('\n').unwrap_or(&text);
    let Some(found) = find_seal(line.as_bytes()) else {
        return Err(tampered(
            "it is not sealed (spur seals every approval with the key)",
        ));
    };
    match seal::check(&found, &key_for_reading(state_dir)) {
        SealCheck::Valid => {}
        SealCheck::Unverifiable(why) => {
            return Err(PolicyError::ApprovalUnverifiable { path, why })
        }
        SealCheck::Forged => {
            return Err(tampered(
                "its seal is not the key's MAC of it: it was edited, or written without the key",
            ))
        }
    }
    let record: Record = serde_json::from_str(line)
        .map_err(|e| tampered(&format!("it is not an approval record: {e}")))?;
    if record.v != FORMAT_VERSION {
        return Err(tampered(&crate::store::format_version::unknown_version(
            record.v,
            FORMAT_VERSION,
        )));
    }
    let policy = Policy::of_canonical(record.policy);
    if policy.sha256() != record.policy_sha256 {
        return Err(tampered(&format!(
            "its policy hashes to {}, not to the {} it names",
            short(policy.sha256()),
            short(&record.policy_sha256)
        )));
    }
    Ok(Some(Approval {
        at: record.at,
        by: record.by,
        policy,
    }))
}

/// Record `policy` as approved by `by`, now, replacing any earlier approval (sealed with
/// the key, written atomically; the policy's snapshot kept beside the pinned ones).
pub fn approve(state_dir: &StateDir, policy: &Policy, by: &str) -> Result<Approval, PolicyError> {
    let path = state_dir.approved_policy_path();
    let unwritable = |why: String| PolicyError::ApprovalUnusable {
        path: path.clone(),
        doing: "written",
        why,
    };
    let key = key_for_writing(state_dir)?;
    let at = crate::store::timestamp::now();
    let record = NewRecord {
        v: FORMAT_VERSION,
        at: &at,
        by,
        policy_sha256: policy.sha256(),
        policy: policy.text(),
    };
    let mut open = serde_json::to_string(&record).map_err(|e| unwritable(e.to_string()))?;
    open.pop(); // the closing brace: the seal closes the object
    let line = format!("{}\n", seal::seal(&open, &key));
    write_atomic(&path, line.as_bytes()).map_err(|e| unwritable(e.to_string()))?;
    // Best effort: the snapshot lets `spur audit verify` say what changed between decisions.
    let _ = policy.store(state_dir);
    Ok(Approval {
        at,
        by: by.to_owned(),
        policy: policy.clone(),
    })
}

/// `policy` against the approval: `Ok(Some)` when it is the approved one, `Ok(None)` when
/// nothing was approved yet (first use is the caller's: [`approve_on_first_use`]), an error
/// naming what changed when it is not, and the record's own error when it approves nothing.
pub fn require(state_dir: &StateDir, policy: &Policy) -> Result<Option<Approval>, PolicyError> {
    let Some(approval) = read(state_dir)? else {
        return Ok(None);
    };
    if approval.policy.sha256() == policy.sha256() {
        return Ok(Some(approval));
    }
    Err(PolicyError::Unapproved(Box::new(Unapproved {
        config: state_dir.config_path(),
        now: short(policy.sha256()).to_owned(),
        approved: short(approval.policy.sha256()).to_owned(),
        by: approval.by.clone(),
        at: approval.at.clone(),
        changes: policy.described_changes_since(&approval.policy),
    })))
}

/// The policy a person approves: `.spur/config.yaml`'s as it is now.
pub fn config_policy(state_dir: &StateDir) -> Result<Policy, PolicyError> {
    project_policy(state_dir).map(|(policy, _)| policy)
}

/// The check of a person's call (a run that starts, a gate decision outside runs): the
/// config's policy must be the approved one; when none was approved yet, it is approved
/// now (trust on first use), as whom `by` names (asked only then) — `Ok(Some)` says so,
/// for the caller to tell.
pub fn approve_on_first_use(
    state_dir: &StateDir,
    by: impl FnOnce() -> String,
) -> Result<Option<Approval>, PolicyError> {
    let policy = config_policy(state_dir)?;
    match require(state_dir, &policy)? {
        Some(_) => Ok(None),
        None => approve(state_dir, &policy, &by()).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(config: &str) -> (tempfile::TempDir, StateDir) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        std::fs::write(state.config_path(), config).unwrap();
        (dir, state)
    }

    const GATED: &str = "verify:\n  gates:\n    tests: {command: t}\n";

    #[test]
    fn first_use_approves_then_a_change_is_refused_naming_it() {
        let (_dir, state) = state(GATED);
        assert!(read(&state).unwrap().is_none());
        let first = approve_on_first_use(&state, || "ada".into())
            .unwrap()
            .unwrap();
        assert_eq!(first.by(), "ada");
        assert_eq!(read(&state).unwrap().unwrap(), first);
        assert!(approve_on_first_use(&state, || "ada".into())
            .unwrap()
            .is_none());
        std::fs::write(state.config_path(), "verify:\n  gates: {}\n").unwrap();
        let err = approve_on_first_use(&state, || "ada".into()).unwrap_err();
        assert!(
            err.to_string()
                .contains("verify.gates: 1 gate → 0 (removed: tests)"),
            "{err}"
        );
        // Nothing is approved on a refusal.
        assert_eq!(read(&state).unwrap().unwrap(), first);
    }

    #[test]
    fn an_edited_or_unkeyed_record_approves_nothing() {
        let (_dir, state) = state(GATED);
        approve_on_first_use(&state, || "ada".into()).unwrap();
        let path = state.approved_policy_path();
        let line = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, line.replace("\"by\":\"ada\"", "\"by\":\"eve\"")).unwrap();
        let err = read(&state).unwrap_err();
        assert!(
            matches!(err, PolicyError::ApprovalTampered { .. }),
            "{err:?}"
        );
        // Tampered is not "none": first use does not approve over it.
        assert!(approve_on_first_use(&state, || "ada".into()).is_err());
        let unsealed = line.split(",\"key\":").next().unwrap().to_owned() + "}\n";
        std::fs::write(&path, unsealed).unwrap();
        assert!(matches!(
            read(&state).unwrap_err(),
            PolicyError::ApprovalTampered { .. }
        ));
        // Sealed with a key that is gone: unverifiable.
        std::fs::write(&path, &line).unwrap();
        std::fs::remove_file(state.key_file().path().unwrap()).unwrap();
        assert!(matches!(
            read(&state).unwrap_err(),
            PolicyError::ApprovalUnverifiable { .. }
        ));
    }
}
