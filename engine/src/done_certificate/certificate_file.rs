//! The certificate file: one JSON object with the certificate and its signature,
//!
//! ```text
//! {
//!   "certificate": {"format":"spur-done-certificate/1","wbs":"0592",…},
//!   "signature": "-----BEGIN SSH SIGNATURE-----\n…\n-----END SSH SIGNATURE-----\n"
//! }
//! ```
//!
//! The signed message is the exact bytes of the `certificate` value as they stand in the
//! file (read back with `serde_json`'s `RawValue`, never re-serialised), kept on one line so
//! that line-ending conversion by a checkout cannot change them. One file, written
//! atomically: a reader sees a certificate with its signature or none.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::payload::Certificate;

/// The largest certificate file spur reads.
pub(crate) const CERTIFICATE_LIMIT: u64 = 64 * 1024;

/// A certificate file as read: the signed bytes, the certificate they hold, the armored
/// signature.
#[derive(Debug)]
pub(crate) struct CertificateFile {
    /// The exact bytes of the `certificate` value: the signed message.
    pub(crate) message: String,
    /// The certificate those bytes hold.
    pub(crate) certificate: Certificate,
    /// The SSHSIG signature, armored.
    pub(crate) signature: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw<'a> {
    #[serde(borrow)]
    certificate: &'a RawValue,
    signature: String,
}

impl CertificateFile {
    /// The file's text for a certificate (its compact JSON, `message`) and its signature.
    pub(crate) fn render(message: &str, signature: &str) -> String {
        let signature = serde_json::Value::String(signature.to_owned());
        format!("{{\n  \"certificate\": {message},\n  \"signature\": {signature}\n}}\n")
    }

    /// Read a certificate file's text; the error says what is wrong with it.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let raw: Raw<'_> =
            serde_json::from_str(text).map_err(|e| format!("not a certificate file: {e}"))?;
        let message = raw.certificate.get().to_owned();
        let certificate: Certificate = serde_json::from_str(&message)
            .map_err(|e| format!("its certificate has the wrong shape: {e}"))?;
        if certificate.format != super::FORMAT {
            return Err(format!(
                "its format is {:?}; this spur reads {:?}",
                certificate.format,
                super::FORMAT
            ));
        }
        Ok(Self {
            message,
            certificate,
            signature: raw.signature,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::done_certificate::payload::{GateBinding, SignerBinding, VerdictBinding};

    fn certificate() -> Certificate {
        Certificate {
            format: crate::done_certificate::FORMAT.to_owned(),
            wbs: "0592".to_owned(),
            task_file: None,
            verdict: VerdictBinding {
                artifact_sha256: Some("ab".repeat(32)),
                verdict: "PASS".to_owned(),
            },
            tree: None,
            gate: GateBinding {
                decision: "allow".to_owned(),
                reason: "pass".to_owned(),
                force_reason: None,
                audit_hash: None,
            },
            signer: SignerBinding {
                principal: "ada@example.com".to_owned(),
                user: "ada".to_owned(),
            },
            certified_at: "2026-12-01T10:00:00.000Z".to_owned(),
            run_id: None,
        }
    }

    #[test]
    fn the_signed_bytes_read_back_exactly_as_written() {
        let message = serde_json::to_string(&certificate()).unwrap();
        let text = CertificateFile::render(&message, "-----BEGIN SSH SIGNATURE-----\nAA\n");
        let file = CertificateFile::parse(&text).unwrap();
        assert_eq!(file.message, message);
        assert_eq!(file.certificate, certificate());
        assert!(file
            .signature
            .starts_with("-----BEGIN SSH SIGNATURE-----\n"));
        // Reformatting the certificate changes the signed bytes (and so breaks the
        // signature), even though it means the same.
        let spaced = text.replace("\"wbs\":\"0592\"", "\"wbs\": \"0592\"");
        assert_ne!(CertificateFile::parse(&spaced).unwrap().message, message);
    }

    #[test]
    fn other_shapes_and_formats_are_errors() {
        for text in [
            "",
            "[]",
            "{\"certificate\": {}, \"signature\": \"x\"}",
            "{\"certificate\": null, \"signature\": \"x\"}",
            "{\"signature\": \"x\"}",
        ] {
            assert!(CertificateFile::parse(text).is_err(), "{text}");
        }
        let mut other = certificate();
        other.format = "spur-done-certificate/9".to_owned();
        let text = CertificateFile::render(&serde_json::to_string(&other).unwrap(), "x");
        let error = CertificateFile::parse(&text).unwrap_err();
        assert!(error.contains("spur-done-certificate/9"), "{error}");
        let extra = CertificateFile::render(&serde_json::to_string(&certificate()).unwrap(), "x")
            .replace("\n}\n", ",\n  \"note\": 1\n}\n");
        assert!(CertificateFile::parse(&extra).is_err());
    }
}
