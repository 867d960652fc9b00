//! Signed done certificates (ARCHITECTURE.md, *Done certificates*): when the done gate
//! certifies a task and the project opts in (`doneGate.certificates.enabled`), spur writes
//! `<dir>/<wbs>.json` into the repository — what the gate certified (the task file's
//! requirements and criteria by hash, the verdict artifact's sha256, the tree fingerprint,
//! how the gate decided, who, when), signed with the user's SSH key in the format of
//! `ssh-keygen -Y sign` (SSHSIG, namespace [`NAMESPACE`]). `spur task verify-certs` checks
//! every task file that claims done against its certificate and the committed
//! `allowed_signers` file, so CI can refuse a done claim nobody allowed to sign has signed.
//!
//! Signing is delegated to `ssh-keygen` exactly as git delegates it (keys in an agent,
//! passphrases and security keys work as they do for signed commits; spur never touches a
//! private key); verifying is in process ([`ssh_key`]), so CI needs no OpenSSH.

mod allowed_signers;
mod certificate_file;
mod error;
mod issue;
mod payload;
mod signer;
mod task_binding;
mod verify_certs;

pub use error::CertificateError;
pub use issue::{issue, retry_command, CertificateReport, Issued};
pub use payload::Certificate;
pub use verify_certs::{
    verify_certs, CertCheck, CertFailure, CertsReport, SignedBy, VerifyCertsError,
    VerifyCertsOptions,
};

/// The SSHSIG namespace of done certificates: a signature made for git commits (`git`) or
/// files (`file`) does not verify as a certificate, nor one of these as either.
pub const NAMESPACE: &str = "spur-done-cert";

/// The `format` of the certificates this spur writes and reads.
pub const FORMAT: &str = "spur-done-certificate/1";
