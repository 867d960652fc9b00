//! `doneGate.certificates` in `.spur/config.yaml`: whether the done gate writes a signed done
//! certificate into the repository when it certifies a task, with which key, as whom, and
//! where certificates and the `allowed_signers` file live (see `crate::done_certificate`).
//!
//! ```yaml
//! doneGate:
//!   certificates:
//!     enabled: true                       # off by default
//!     signingKey: ~/.ssh/id_ed25519.pub   # default: git's user.signingkey (gpg.format ssh)
//!     principal: ada@example.com          # default: git's user.email
//!     dir: docs/tasks/.certs              # the default
//!     allowedSigners: docs/tasks/.certs/allowed_signers   # default: <dir>/allowed_signers
//! ```
//!
//! `dir` and `allowedSigners` are paths inside the repository (relative, no `..`): they
//! are committed, and CI reads them with `spur task verify-certs`.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::yaml::{Loader, Node, NodeValue, UnknownKeys};

/// Where certificates go when the configuration does not say.
pub(crate) const DEFAULT_DIR: &str = "docs/tasks/.certs";
/// The name of the `allowed_signers` file inside the certificate directory, by default.
pub(crate) const ALLOWED_SIGNERS: &str = "allowed_signers";

/// The keys `doneGate.certificates` knows.
const KEYS: &[&str] = &[
    "enabled",
    "signingKey",
    "principal",
    "dir",
    "allowedSigners",
];

/// `doneGate.certificates`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CertificatesConfig {
    /// Whether the gate writes a certificate when it certifies a task.
    pub(crate) enabled: bool,
    /// The key `ssh-keygen -Y sign -f` is given: a path (`~/` is the home directory,
    /// relative is relative to the project), or a public key literal (`ssh-ed25519 AAAA…`,
    /// optionally after `key::`) whose private half is in the ssh-agent.
    pub(crate) signing_key: Option<String>,
    /// Who signs, as the `allowed_signers` file names them (an email, usually).
    pub(crate) principal: Option<String>,
    /// The certificate directory, relative to the project root.
    pub(crate) dir: Option<PathBuf>,
    /// The `allowed_signers` file, relative to the project root.
    pub(crate) allowed_signers: Option<PathBuf>,
}

impl CertificatesConfig {
    /// The certificate directory (relative to the project root).
    pub(crate) fn dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))
    }

    /// The `allowed_signers` file (relative to the project root).
    pub(crate) fn allowed_signers(&self) -> PathBuf {
        self.allowed_signers
            .clone()
            .unwrap_or_else(|| self.dir().join(ALLOWED_SIGNERS))
    }
}

/// Read `doneGate.certificates` (`node`); null is the default (off).
pub(super) fn read(cx: &mut Loader<'_>, node: &Node) -> CertificatesConfig {
    let mut config = CertificatesConfig::default();
    if node.value == NodeValue::Null {
        return config;
    }
    let what = "`doneGate.certificates`";
    let Some(fields) = cx.fields_with(node, what, KEYS, UnknownKeys::Warn) else {
        return config;
    };
    if let Some(node) = fields.get("enabled") {
        config.enabled = cx
            .read::<Option<bool>>(node, "`doneGate.certificates.enabled`")
            .flatten()
            .unwrap_or(false);
    }
    for (key, slot) in [
        ("signingKey", &mut config.signing_key),
        ("principal", &mut config.principal),
    ] {
        if let Some(node) = fields.get(key) {
            let what = format!("`doneGate.certificates.{key}`");
            *slot = cx
                .read::<Option<String>>(node, &what)
                .flatten()
                .filter(|s| !s.trim().is_empty());
        }
    }
    for (key, slot) in [
        ("dir", &mut config.dir),
        ("allowedSigners", &mut config.allowed_signers),
    ] {
        let Some(node) = fields.get(key) else {
            continue;
        };
        let what = format!("`doneGate.certificates.{key}`");
        let Some(text) = cx.read::<Option<String>>(node, &what).flatten() else {
            continue;
        };
        if is_inside_repository(Path::new(&text)) {
            *slot = Some(PathBuf::from(text));
        } else {
            let d = Diagnostic::error(
                cx.codes.wrong_type,
                cx.source,
                node.pointed(),
                format!("{what} must be a path inside the repository (relative, without `..`), not `{text}`"),
            )
            .label("not inside the repository")
            .help("certificates and allowed_signers are committed, so CI can check them: e.g. `docs/tasks/.certs`");
            cx.push(d);
        }
    }
    config
}

/// A non-empty relative path with no `..`: it stays inside the project root.
fn is_inside_repository(path: &Path) -> bool {
    path.components().next().is_some()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::config::VerifyConfig;

    fn certificates(text: &str) -> Result<CertificatesConfig, String> {
        let config = VerifyConfig::parse(Path::new(".spur/config.yaml"), text)
            .map_err(|e| format!("{:?}", e.diagnostics()))?;
        Ok(config.done_gate.certificates)
    }

    #[test]
    fn off_by_default_with_the_default_places() {
        let config = certificates("verify: {}\n").unwrap();
        assert!(!config.enabled);
        assert_eq!(config.dir(), Path::new("docs/tasks/.certs"));
        assert_eq!(
            config.allowed_signers(),
            Path::new("docs/tasks/.certs/allowed_signers")
        );
    }

    #[test]
    fn reads_every_key_and_the_signers_file_follows_the_dir() {
        let config = certificates(
            "doneGate:\n  certificates:\n    enabled: true\n    signingKey: ~/.ssh/id.pub\n    principal: ada@example.com\n    dir: certs\n",
        )
        .unwrap();
        assert!(config.enabled);
        assert_eq!(config.signing_key.as_deref(), Some("~/.ssh/id.pub"));
        assert_eq!(config.principal.as_deref(), Some("ada@example.com"));
        assert_eq!(config.allowed_signers(), Path::new("certs/allowed_signers"));
    }

    #[test]
    fn paths_outside_the_repository_and_wrong_types_are_errors() {
        for text in [
            "doneGate:\n  certificates:\n    dir: /etc\n",
            "doneGate:\n  certificates:\n    allowedSigners: ../x\n",
            "doneGate:\n  certificates:\n    enabled: yes please\n",
            "doneGate:\n  certificates: [1]\n",
        ] {
            let error = certificates(text).unwrap_err();
            assert!(error.contains("TaskDoneGateConfig"), "{text}: {error}");
        }
    }
}
