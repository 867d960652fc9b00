//! `spur task verify-certs`: every task file under `docs/tasks*/` whose frontmatter claims
//! done must have a certificate (`<dir>/<wbs>.json`) whose SSHSIG signature verifies, whose
//! signing key the committed `allowed_signers` file allows for the certificate's principal in
//! the namespace [`NAMESPACE`], that certifies this task, binds the task file's requirements
//! and criteria as they are now, and says the task got done a way the check accepts (a PASS
//! by default). Each failure names its task and its kind; nothing here writes.

use std::path::{Path, PathBuf};

use serde::Serialize;
use ssh_key::public::KeyData;
use ssh_key::{HashAlg, PublicKey, SshSig};

use super::allowed_signers::{compact_time, AllowedSigners};
use super::certificate_file::{CertificateFile, CERTIFICATE_LIMIT};
use super::task_binding::{read_task_text, task_sha256};
use super::NAMESPACE;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::AllowReason;
use crate::store::bounded_read::read_bounded;
use crate::store::state_dir::StateDir;
use crate::task_file::claimed_status;
use crate::verify::config::VerifyConfig;
use crate::verify::config_error::VerifyConfigErrors;
use crate::wbs::Wbs;

/// The largest `allowed_signers` file spur reads.
const ALLOWED_SIGNERS_LIMIT: u64 = 1024 * 1024;

/// What to check against (each `None` is the configured or default place).
#[derive(Debug, Clone)]
pub struct VerifyCertsOptions {
    /// The certificate directory (relative paths are relative to the project root).
    pub dir: Option<PathBuf>,
    /// The `allowed_signers` file (likewise).
    pub allowed_signers: Option<PathBuf>,
    /// How a task may have got done: `pass` alone unless more are given.
    pub accept: Vec<AllowReason>,
}

/// The result of the check.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CertsReport {
    /// The certificate directory, as given or configured.
    pub certificates: String,
    /// The `allowed_signers` file, as given or configured.
    pub allowed_signers: String,
    /// How a task may have got done.
    pub accepted: Vec<AllowReason>,
    /// One per task file that claims done, in path order.
    pub tasks: Vec<CertCheck>,
}

impl CertsReport {
    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = (&CertCheck, &CertFailure)> {
        self.tasks
            .iter()
            .filter_map(|t| t.failure.as_ref().map(|f| (t, f)))
    }
}

/// One task file that claims done, and what its certificate showed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CertCheck {
    /// The task (`None` when the file name does not start with one).
    pub wbs: Option<String>,
    /// The task file, relative to the project root.
    pub task_file: String,
    /// The status its frontmatter claims, as written.
    pub claimed: String,
    /// The certificate it was checked against, relative to the project root.
    pub certificate: Option<String>,
    /// Who signed, when the certificate holds.
    pub signed_by: Option<SignedBy>,
    /// Why it does not hold.
    pub failure: Option<CertFailure>,
}

/// A certificate that holds: who signed it, with which key, how the task got done.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedBy {
    /// The principal, as `allowed_signers` allows it.
    pub principal: String,
    /// The signing key's SHA256 fingerprint (`SHA256:…`).
    pub key: String,
    /// `pass`, `external` or `forced`.
    pub reason: String,
    /// When the gate certified the task.
    pub certified_at: String,
}

/// Why a task's done claim has no valid certificate.
#[derive(Debug, Clone, Serialize)]
pub struct CertFailure {
    /// `spur::cert::missing`, `…::bad-signature`, `…::unknown-signer`, `…::mismatch`, …
    pub code: Code,
    /// What is wrong, naming the files.
    pub message: String,
}

/// Why the check could not be made at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum VerifyCertsError {
    /// `.spur/config.yaml` cannot be read or has errors.
    #[error(transparent)]
    Config(VerifyConfigErrors),
    /// The `allowed_signers` file is missing, unreadable or has a line that does not parse.
    #[error("allowed signers file {}: {reason}", path.display())]
    AllowedSigners {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// The task files cannot be listed.
    #[error("cannot list the task files in {}: {source}", path.display())]
    TaskFiles {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    VerifyCertsError {
        forward { Config }
        Self::AllowedSigners { .. } => Code::CertAllowedSigners,
            help("commit an OpenSSH allowed_signers file (one `principal key` a line, as for git's gpg.ssh.allowedSignersFile), at docs/tasks/.certs/allowed_signers or where --allowed-signers or doneGate.certificates.allowedSigners says");
        Self::TaskFiles { .. } => Code::CertTaskFilesUnreadable;
    }
}

/// Check every task file of the project that claims done.
pub fn verify_certs(
    state_dir: &StateDir,
    options: &VerifyCertsOptions,
) -> Result<CertsReport, VerifyCertsError> {
    let root = state_dir.project_root();
    let config = VerifyConfig::load(state_dir).map_err(VerifyCertsError::Config)?;
    let configured = &config.done_gate.certificates;
    let dir = options.dir.clone().unwrap_or_else(|| configured.dir());
    let signers_path = options
        .allowed_signers
        .clone()
        .unwrap_or_else(|| configured.allowed_signers());
    let signers = read_allowed_signers(&root.join(&signers_path), &signers_path)?;
    let accepted = if options.accept.is_empty() {
        vec![AllowReason::Pass]
    } else {
        options.accept.clone()
    };
    let mut tasks = Vec::new();
    for path in task_files(root)? {
        let rel = relative(&path, root);
        let check = |wbs: Option<&Wbs>, claimed: &str, failure: CertFailure| CertCheck {
            wbs: wbs.map(ToString::to_string),
            task_file: rel.clone(),
            claimed: claimed.to_owned(),
            certificate: None,
            signed_by: None,
            failure: Some(failure),
        };
        let wbs = task_wbs(&path);
        let text = match read_task_text(&path) {
            Ok(text) => text,
            Err(e) => {
                let failure = failure(
                    Code::CertTaskFileUnreadable,
                    format!("{rel}: cannot be read: {e}"),
                );
                tasks.push(check(wbs.as_ref(), "", failure));
                continue;
            }
        };
        let claimed = match claimed_status(&text) {
            Ok(Some(claimed)) if claimed.done => claimed.written,
            Ok(_) => continue,
            Err(e) => {
                let failure = failure(
                    Code::CertTaskFileUnreadable,
                    format!("{rel}: cannot tell whether it claims done: {e}"),
                );
                tasks.push(check(wbs.as_ref(), "", failure));
                continue;
            }
        };
        let Some(wbs) = wbs else {
            let failure = failure(
                Code::CertTaskFileUnreadable,
                format!("{rel} claims {claimed:?} but its name does not start with a task id (<wbs>_<slug>.md)"),
            );
            tasks.push(check(None, &claimed, failure));
            continue;
        };
        let cert_rel = dir.join(format!("{wbs}.json"));
        let shown = relative(&root.join(&cert_rel), root);
        let result = check_certificate(
            &root.join(&cert_rel),
            &shown,
            &wbs,
            &rel,
            &text,
            &signers,
            &accepted,
        );
        let (signed_by, failure) = match result {
            Ok(signed) => (Some(signed), None),
            Err(f) => (None, Some(f)),
        };
        tasks.push(CertCheck {
            wbs: Some(wbs.to_string()),
            task_file: rel,
            claimed,
            certificate: Some(shown),
            signed_by,
            failure,
        });
    }
    Ok(CertsReport {
        certificates: dir.display().to_string(),
        allowed_signers: signers_path.display().to_string(),
        accepted,
        tasks,
    })
}

fn failure(code: Code, message: String) -> CertFailure {
    CertFailure { code, message }
}

/// The checks of one certificate, in the order that makes each message true: a signature
/// that does not verify makes everything the certificate says untrustworthy.
fn check_certificate(
    path: &Path,
    shown: &str,
    wbs: &Wbs,
    task_rel: &str,
    task_text: &str,
    signers: &AllowedSigners,
    accepted: &[AllowReason],
) -> Result<SignedBy, CertFailure> {
    let bytes = read_bounded(path, CERTIFICATE_LIMIT).map_err(|e| {
        if e.is_missing() {
            failure(
                Code::CertMissing,
                format!(
                    "task {wbs} claims done in {task_rel}, but there is no certificate {shown}"
                ),
            )
        } else {
            failure(
                Code::CertMalformed,
                format!("certificate {shown} cannot be read: {e}"),
            )
        }
    })?;
    let file = String::from_utf8(bytes)
        .map_err(|_| "not UTF-8".to_owned())
        .and_then(|text| CertificateFile::parse(&text))
        .map_err(|e| failure(Code::CertMalformed, format!("certificate {shown}: {e}")))?;
    let key = verify_signature(file.message.as_bytes(), &file.signature).map_err(|e| {
        failure(
            Code::CertBadSignature,
            format!("certificate {shown}: the signature does not verify ({e}): it was edited after signing, or not signed as a spur done certificate"),
        )
    })?;
    let certificate = &file.certificate;
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    let principal = &certificate.signer.principal;
    let when = compact_time(&certificate.certified_at).unwrap_or_default();
    if !signers.allows(principal, NAMESPACE, &key, &when) {
        let listed = signers.principals_of(&key);
        let detail = if listed.is_empty() {
            "the key is not in the allowed signers file".to_owned()
        } else {
            format!(
                "the allowed signers file lists the key for {} only, or not for namespace {NAMESPACE} or that time",
                listed.join("; ")
            )
        };
        return Err(failure(
            Code::CertUnknownSigner,
            format!("certificate {shown} is signed by key {fingerprint} as {principal}, which is not allowed: {detail}"),
        ));
    }
    if certificate.wbs != wbs.as_str() {
        return Err(failure(
            Code::CertMismatch,
            format!(
                "certificate {shown} certifies task {:?}, not {wbs}",
                certificate.wbs
            ),
        ));
    }
    match &certificate.task_file {
        None => {
            return Err(failure(
                Code::CertMismatch,
                format!("certificate {shown} certified task {wbs} without a task file, so it does not cover {task_rel}"),
            ))
        }
        Some(bound) if bound.sha256 != task_sha256(task_text) => {
            return Err(failure(
                Code::CertMismatch,
                format!(
                    "certificate {shown} does not match {task_rel}: its requirements or acceptance criteria changed since task {wbs} was certified (certified as {})",
                    bound.path
                ),
            ))
        }
        Some(_) => {}
    }
    let reason = &certificate.gate.reason;
    if !accepted.iter().any(|a| a.as_str() == reason) {
        let how = match &certificate.gate.force_reason {
            Some(why) => format!("by forced override ({why:?})"),
            None => format!("by {reason}"),
        };
        return Err(failure(
            Code::CertNotAccepted,
            format!("certificate {shown} says task {wbs} got done {how}; accept it with --accept {reason}"),
        ));
    }
    Ok(SignedBy {
        principal: principal.clone(),
        key: fingerprint,
        reason: reason.clone(),
        certified_at: certificate.certified_at.clone(),
    })
}

/// Verify an armored SSHSIG `signature` of `message` in the namespace [`NAMESPACE`] with
/// the key it names; the key, or why it does not verify.
pub(crate) fn verify_signature(message: &[u8], signature: &str) -> Result<KeyData, String> {
    let signature = SshSig::from_pem(signature.trim().as_bytes())
        .map_err(|e| format!("not an SSH signature: {e}"))?;
    if signature.namespace() != NAMESPACE {
        return Err(format!(
            "signed in namespace {:?}, not {NAMESPACE:?}",
            signature.namespace()
        ));
    }
    let key = signature.public_key().clone();
    PublicKey::from(key.clone())
        .verify(NAMESPACE, message, &signature)
        .map_err(|e| e.to_string())?;
    Ok(key)
}

/// Read and parse the file at `path` (`shown` as given, for messages).
fn read_allowed_signers(path: &Path, shown: &Path) -> Result<AllowedSigners, VerifyCertsError> {
    let error = |reason: String| VerifyCertsError::AllowedSigners {
        path: shown.to_path_buf(),
        reason,
    };
    let bytes = read_bounded(path, ALLOWED_SIGNERS_LIMIT).map_err(|e| {
        error(if e.is_missing() {
            "no such file".to_owned()
        } else {
            e.to_string()
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|_| error("not UTF-8".to_owned()))?;
    AllowedSigners::parse(&text).map_err(|e| error(format!("line {}: {}", e.line, e.reason)))
}

/// Every `*.md` file under `docs/tasks*/` (any depth; directories whose name starts with a
/// dot, such as the certificate directory, are skipped), sorted. Links are not followed
/// into directories.
fn task_files(root: &Path) -> Result<Vec<PathBuf>, VerifyCertsError> {
    let docs = root.join("docs");
    let listed = |path: &Path| {
        std::fs::read_dir(path).map_err(|source| VerifyCertsError::TaskFiles {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut dirs = Vec::new();
    match std::fs::read_dir(&docs) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name.to_string_lossy().starts_with("tasks")
                    && entry.file_type().is_ok_and(|t| t.is_dir())
                {
                    dirs.push(entry.path());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(VerifyCertsError::TaskFiles { path: docs, source }),
    }
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in listed(&dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && !name.starts_with('.') {
                dirs.push(entry.path());
            } else if !kind.is_dir() && name.ends_with(".md") {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The task id a task file's name starts with (`0592_hello.md` → `0592`).
fn task_wbs(path: &Path) -> Option<Wbs> {
    let name = path.file_name()?.to_str()?;
    let (wbs, _) = name.split_once('_')?;
    Wbs::parse(wbs).ok()
}

fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
