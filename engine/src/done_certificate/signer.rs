//! Who signs and with what: `doneGate.certificates.signingKey`/`principal`, else git's
//! `user.signingkey` (when `gpg.format` is `ssh`) and `user.email` — the settings a signed
//! commit uses. Signing runs `ssh-keygen -Y sign -n spur-done-cert -f KEY` with the message on
//! its standard input, as git runs it: a key in ssh-agent, a passphrase prompt on the
//! terminal (the child stays in spur's process group, so it may read the terminal) and a
//! security key's touch all work as they do for a commit.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::CertificateError;
use super::NAMESPACE;
use crate::verify::config::CertificatesConfig;

/// The key and the principal a certificate is signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signer {
    key: SigningKey,
    /// As the `allowed_signers` file names the signer.
    pub(crate) principal: String,
}

/// What `ssh-keygen -f` is given.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SigningKey {
    /// A key file (private, or public with its private half in the agent).
    File(PathBuf),
    /// A public key literal (`ssh-ed25519 AAAA…`): the private half is in the agent.
    Literal(String),
}

impl Signer {
    /// The configured signer, falling back to git's settings in `project_root`.
    pub(crate) fn resolve(
        config: &CertificatesConfig,
        project_root: &Path,
    ) -> Result<Self, CertificateError> {
        let git = |key: &str| git_config(project_root, key);
        let key_text = match &config.signing_key {
            Some(key) => Some(key.clone()),
            None => git("gpg.format")
                .filter(|f| f.eq_ignore_ascii_case("ssh"))
                .and_then(|_| git("user.signingkey")),
        }
        .ok_or(CertificateError::NoSigningKey)?;
        let principal = config
            .principal
            .clone()
            .or_else(|| git("user.email"))
            .ok_or(CertificateError::NoPrincipal)?;
        Ok(Self {
            key: SigningKey::parse(&key_text, project_root),
            principal,
        })
    }

    /// The armored SSHSIG signature of `message` (namespace [`NAMESPACE`]).
    pub(crate) fn sign(&self, message: &[u8]) -> Result<String, CertificateError> {
        let failed = CertificateError::SignFailed;
        // A literal key is handed over as a file, as git does; dropped (removed) after.
        let literal;
        let (key_path, in_agent) = match &self.key {
            SigningKey::File(path) => (path.clone(), false),
            SigningKey::Literal(key) => {
                literal = tempfile::NamedTempFile::new()
                    .and_then(|mut f| {
                        writeln!(f, "{key}")?;
                        Ok(f)
                    })
                    .map_err(|e| {
                        failed(format!(
                            "cannot write the public key to a temporary file: {e}"
                        ))
                    })?;
                (literal.path().to_path_buf(), true)
            }
        };
        let mut command = Command::new("ssh-keygen");
        command
            .args(["-Y", "sign", "-n", NAMESPACE, "-f"])
            .arg(&key_path);
        if in_agent {
            command.arg("-U");
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                failed(format!(
                    "cannot run ssh-keygen ({e}); install OpenSSH's client (apt-get install openssh-client)"
                ))
            })?;
        // The message is small (a few hundred bytes): it fits the pipe, so writing it before
        // reading the output cannot deadlock.
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(message)
                .map_err(|e| failed(format!("cannot hand the certificate to ssh-keygen: {e}")))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| failed(format!("ssh-keygen: {e}")))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() || !stdout.starts_with("-----BEGIN SSH SIGNATURE-----") {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(failed(format!(
                "`ssh-keygen -Y sign -n {NAMESPACE} -f {}` {}: {}",
                key_path.display(),
                output.status,
                stderr.trim()
            )));
        }
        Ok(stdout)
    }
}

impl SigningKey {
    /// A literal when it reads as a public key (`key::` optional), else a path: `~/` is the
    /// home directory, a relative path is relative to the project root.
    fn parse(text: &str, project_root: &Path) -> Self {
        let text = text.trim();
        let literal = text.strip_prefix("key::").unwrap_or(text);
        if ["ssh-", "ecdsa-", "sk-"]
            .iter()
            .any(|p| literal.starts_with(p))
            && literal.contains(' ')
        {
            return SigningKey::Literal(literal.to_owned());
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let path = match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(text),
        };
        SigningKey::File(project_root.join(path))
    }
}

/// `git config --get KEY` in `dir`; `None` when unset, empty, or git cannot be run.
fn git_config(dir: &Path, key: &str) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["config", "--get", key])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let value = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_as_literals_home_paths_or_project_paths() {
        let root = Path::new("/p");
        assert_eq!(
            SigningKey::parse("key::ssh-ed25519 AAAA x", root),
            SigningKey::Literal("ssh-ed25519 AAAA x".to_owned())
        );
        assert_eq!(
            SigningKey::parse("ssh-ed25519 AAAA", root),
            SigningKey::Literal("ssh-ed25519 AAAA".to_owned())
        );
        assert_eq!(
            SigningKey::parse("keys/ci", root),
            SigningKey::File(PathBuf::from("/p/keys/ci"))
        );
        assert_eq!(
            SigningKey::parse("/k/id", root),
            SigningKey::File(PathBuf::from("/k/id"))
        );
    }

    #[test]
    fn the_configured_key_and_principal_win_and_nothing_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let config = CertificatesConfig {
            enabled: true,
            signing_key: Some("k".to_owned()),
            principal: Some("ada@example.com".to_owned()),
            ..CertificatesConfig::default()
        };
        let signer = Signer::resolve(&config, dir.path()).unwrap();
        assert_eq!(signer.principal, "ada@example.com");
        assert_eq!(signer.key, SigningKey::File(dir.path().join("k")));
    }
}
