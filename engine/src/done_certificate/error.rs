//! Why a done certificate could not be written. None of these un-certifies the task: the
//! gate allowed and the task ledger says done; the certificate is missing, which `spur task
//! verify-certs` reports, until the task is certified again.

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::verify::config_error::VerifyConfigErrors;

/// Why a certificate could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// `.spur/config.yaml` cannot be read or has errors.
    #[error(transparent)]
    Config(VerifyConfigErrors),
    /// Neither `doneGate.certificates.signingKey` nor git's `user.signingkey` (with
    /// `gpg.format ssh`) names a key.
    #[error("no SSH signing key: doneGate.certificates.signingKey is not set, and git has no user.signingkey with gpg.format ssh")]
    NoSigningKey,
    /// Neither `doneGate.certificates.principal` nor git's `user.email` names the signer.
    #[error("no principal to sign as: doneGate.certificates.principal is not set, and git has no user.email")]
    NoPrincipal,
    /// The task file cannot be found unambiguously or read.
    #[error("the task file cannot be bound: {0}")]
    TaskFile(String),
    /// The tree changed between the gate's check and the certificate.
    #[error("the tree changed while the certificate was made (fingerprint {certified} when the gate certified, {now} now)")]
    TreeChanged {
        /// The fingerprint the gate certified at.
        certified: String,
        /// The fingerprint now (or why it could not be taken).
        now: String,
    },
    /// `ssh-keygen -Y sign` could not be run or failed, or its signature does not verify.
    #[error("signing failed: {0}")]
    SignFailed(String),
    /// The certificate file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteFailed {
        /// The certificate file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl CertificateError {
    /// The error's code.
    pub fn code(&self) -> Code {
        match self {
            // A configuration that cannot be read reports under the done gate's code.
            CertificateError::Config(_) => Code::TaskDoneGateConfig,
            CertificateError::NoSigningKey => Code::CertNoSigningKey,
            CertificateError::NoPrincipal => Code::CertNoPrincipal,
            CertificateError::TaskFile(_) => Code::CertTaskFile,
            CertificateError::TreeChanged { .. } => Code::CertTreeChanged,
            CertificateError::SignFailed(_) => Code::CertSignFailed,
            CertificateError::WriteFailed { .. } => Code::CertWriteFailed,
        }
    }
}

coded_diagnostic! {
    CertificateError {
        forward { Config }
        Self::NoSigningKey => Code::CertNoSigningKey,
            help("set doneGate.certificates.signingKey in .spur/config.yaml (e.g. ~/.ssh/id_ed25519.pub), or configure git to sign with SSH: git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub");
        Self::NoPrincipal => Code::CertNoPrincipal,
            help("set doneGate.certificates.principal (as allowed_signers names you), or git config user.email");
        Self::TaskFile(..) => Code::CertTaskFile,
            help("keep one task file per task (docs/tasks*/<wbs>_<slug>.md)");
        Self::TreeChanged { .. } => Code::CertTreeChanged,
            help("something wrote to the project while the task was certified; re-verify and certify again");
        Self::SignFailed(..) => Code::CertSignFailed,
            help("spur signs with `ssh-keygen -Y sign` (apt-get install openssh-client); a key in ssh-agent needs the agent running (SSH_AUTH_SOCK)");
        Self::WriteFailed { .. } => Code::CertWriteFailed;
    }
}
