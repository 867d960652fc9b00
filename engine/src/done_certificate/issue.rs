//! Writing a task's done certificate, right after the gate's `done` record, under the same
//! data lock (`done_gate/record.rs` is the one caller). What it binds comes from the gate's
//! [`Done`] token (how, the artifact's sha256, the tree) and, for the task file, from the
//! file as it is — checked to be the file the gate certified by fingerprinting the tree
//! again: the fingerprint covers the task file's kept text, so a tree that still has the
//! certified fingerprint has the certified requirements.

use std::path::{Path, PathBuf};

use super::certificate_file::CertificateFile;
use super::error::CertificateError;
use super::payload::{
    Certificate, GateBinding, SignerBinding, TaskFileBinding, TreeBinding, VerdictBinding,
};
use super::signer::Signer;
use super::task_binding::{read_task_text, task_sha256};
use super::verify_certs::verify_signature;
use crate::diagnostic::Code;
use crate::done_gate::{Done, DoneVia, GateDecision};
use crate::policy::{PolicyError, PolicySource};
use crate::store::atomic_file::write_atomic;
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_status::ChangeContext;
use crate::task_file::{locate_task_file, TaskFileError};
use crate::tree;
use crate::verify::config::VerifyConfig;
use crate::verify::config_error::VerifyConfigErrors;
use crate::wbs::Wbs;

/// What became of the certificate.
#[derive(Debug)]
pub enum Issued {
    /// The project does not write certificates (`doneGate.certificates.enabled` is not true).
    Off,
    /// Written, at this path (relative to the project root).
    Written(PathBuf),
    /// Not written; the task is done all the same.
    Failed(CertificateError),
}

/// What became of a certificate, as reported in JSON (`spur run`'s `doneGate.certificate`,
/// `spur task certify`'s `certificate`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CertificateReport {
    /// Written at `path` (relative to the project root).
    Written {
        /// The certificate file.
        path: String,
    },
    /// Not written; the task is done all the same.
    Failed {
        /// The error's code (`spur::cert::sign-failed`, …).
        code: Code,
        /// What went wrong.
        message: String,
        /// How to get the certificate once it is fixed: certify the task again.
        retry: String,
    },
}

impl Issued {
    /// The report of task `wbs`'s certificate, when the project writes them.
    pub fn report(&self, wbs: &Wbs) -> Option<CertificateReport> {
        match self {
            Issued::Off => None,
            Issued::Written(path) => Some(CertificateReport::Written {
                path: path.display().to_string(),
            }),
            Issued::Failed(error) => Some(CertificateReport::Failed {
                code: error.code(),
                message: error.to_string(),
                retry: retry_command(wbs),
            }),
        }
    }
}

/// How a done task gets its certificate later: through the gate again (a certificate is
/// made only in the moment the gate allows, from what it decided).
pub fn retry_command(wbs: &Wbs) -> String {
    format!("spur task update {wbs} in-progress && spur task certify {wbs}")
}

/// Write the certificate of the task `lock` holds, which the gate certified with `done` and
/// whose `done` record is in the ledger; `context` is that record's who, when and run.
/// `policy` is where the gate took its policy from: in a run, the certificate settings are
/// the pinned ones too.
pub fn issue(
    lock: &DataLock,
    state_dir: &StateDir,
    done: &Done,
    context: &ChangeContext<'_>,
    policy: &PolicySource,
) -> Issued {
    let config = match policy.resolve(state_dir).map(|p| p.config) {
        Ok(Ok(config)) => config,
        Ok(Err(e)) | Err(PolicyError::Config(e)) => {
            return Issued::Failed(CertificateError::Config(e))
        }
        Err(e) => {
            return Issued::Failed(CertificateError::Config(VerifyConfigErrors::Unreadable {
                path: state_dir.config_path(),
                source: std::io::Error::other(e.to_string()),
            }))
        }
    };
    let certificates = &config.done_gate.certificates;
    if !certificates.enabled {
        return Issued::Off;
    }
    let root = state_dir.project_root();
    let written = Signer::resolve(certificates, root).and_then(|signer| {
        let certificate = bind(lock, state_dir, &config, done, context, &signer)?;
        let message = serde_json::to_string(&certificate).map_err(|e| {
            CertificateError::SignFailed(format!("cannot encode the certificate: {e}"))
        })?;
        let signature = signer.sign(message.as_bytes())?;
        // What is written must verify: a key type this spur cannot check fails now, not in
        // CI.
        verify_signature(message.as_bytes(), &signature).map_err(|e| {
            CertificateError::SignFailed(format!("ssh-keygen's signature does not verify: {e}"))
        })?;
        let rel = certificates.dir().join(format!("{}.json", lock.wbs()));
        let path = root.join(&rel);
        write_atomic(
            &path,
            CertificateFile::render(&message, &signature).as_bytes(),
        )
        .map_err(|source| CertificateError::WriteFailed { path, source })?;
        Ok(rel)
    });
    match written {
        Ok(rel) => Issued::Written(rel),
        Err(e) => Issued::Failed(e),
    }
}

/// What the certificate says.
fn bind(
    lock: &DataLock,
    state_dir: &StateDir,
    config: &VerifyConfig,
    done: &Done,
    context: &ChangeContext<'_>,
    signer: &Signer,
) -> Result<Certificate, CertificateError> {
    let wbs = lock.wbs();
    let root = state_dir.project_root();
    let task_file = match locate_task_file(wbs, None, root, state_dir) {
        Ok(path) => {
            let text = read_task_text(&path).map_err(|e| {
                CertificateError::TaskFile(format!("cannot read {}: {e}", path.display()))
            })?;
            Some(TaskFileBinding {
                path: relative(&path, root),
                sha256: task_sha256(&text),
            })
        }
        Err(TaskFileError::NotFound { .. }) => None,
        Err(e) => return Err(CertificateError::TaskFile(e.to_string())),
    };
    let tree = done.verified_at().map(|at| TreeBinding {
        fingerprint: at.fingerprint.clone(),
        verify_run: at.verify_run.clone(),
    });
    if let Some(tree) = &tree {
        let now = tree::config_excludes(state_dir, config)
            .and_then(|excludes| tree::fingerprint(root, state_dir.root(), &excludes))
            .map(|f| f.hex)
            .unwrap_or_else(|e| e.to_string());
        if now != tree.fingerprint {
            return Err(CertificateError::TreeChanged {
                certified: tree.fingerprint.clone(),
                now,
            });
        }
    }
    let (reason, force_reason, audit_hash) = match done.via() {
        DoneVia::Pass => ("pass", None, None),
        DoneVia::External => ("external", None, None),
        DoneVia::Forced { reason, audit_hash } => {
            ("forced", Some(reason.clone()), Some(audit_hash.clone()))
        }
    };
    Ok(Certificate {
        format: super::FORMAT.to_owned(),
        wbs: wbs.to_string(),
        task_file,
        verdict: VerdictBinding {
            artifact_sha256: done.verdict_sha256().map(str::to_owned),
            verdict: done.verdict().to_string(),
        },
        tree,
        gate: GateBinding {
            decision: GateDecision::Allow.as_str().to_owned(),
            reason: reason.to_owned(),
            force_reason,
            audit_hash,
        },
        signer: SignerBinding {
            principal: signer.principal.clone(),
            user: context.user.to_owned(),
        },
        certified_at: context.time.clone(),
        run_id: context.run_id.map(str::to_owned),
    })
}

/// `path` relative to `root`, `/`-separated, as committed.
fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
