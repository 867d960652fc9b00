//! The `doneGate:` section of `.spur/config.yaml`: how the done gate treats what it reads.
//!
//! ```yaml
//! doneGate:
//!   externalVerdicts: allow   # or deny (the default)
//!   fingerprintExclude: [docs/generated/]   # left out of the tree fingerprint
//!   certificates: { enabled: true }         # signed done certificates (`certificates.rs`)
//! ```
//!
//! An unknown key under `doneGate` is a warning with did-you-mean (the setting it was meant
//! to be keeps its default); a value of the wrong kind is an error.

use super::certificates::{self, CertificatesConfig};
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::yaml::{Codes, Loader, Loose, Node, NodeValue, UnknownKeys};

/// Every finding in `doneGate:` reports under one code.
pub(super) const CODES: Codes = Codes {
    wrong_type: Code::TaskDoneGateConfig,
    missing_key: Code::TaskDoneGateConfig,
    unknown_key: Code::TaskDoneGateConfig,
    duplicate_key: Code::TaskDoneGateConfig,
};

/// The keys `doneGate:` knows.
const DONE_GATE_KEYS: &[&str] = &["externalVerdicts", "fingerprintExclude", "certificates"];

/// How the done gate is configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DoneGateConfig {
    /// `doneGate.externalVerdicts`: whether a verdict artifact spur did not write (or that
    /// was edited after spur wrote it) can certify a task.
    pub external_verdicts: ExternalVerdicts,
    /// `doneGate.fingerprintExclude`: `.gitignore` patterns (relative to the project root)
    /// the tree fingerprint leaves out ([`crate::tree`]); compiled when the tree is
    /// fingerprinted.
    pub fingerprint_exclude: Vec<String>,
    /// `doneGate.certificates`: signed done certificates in the repository.
    pub certificates: CertificatesConfig,
}

/// `doneGate.externalVerdicts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ExternalVerdicts {
    /// The gate denies an artifact whose sha256 is not the last one spur recorded writing.
    #[default]
    Deny,
    /// The gate accepts such an artifact (when it is a self-consistent PASS); the `done`
    /// record then says `external`.
    Allow,
}

impl ExternalVerdicts {
    /// `allow` or `deny`, as written in the config.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ExternalVerdicts::Deny => "deny",
            ExternalVerdicts::Allow => "allow",
        }
    }
}

/// Read `doneGate:` from the config's root; absent or null is the default.
pub(super) fn read(cx: &mut Loader<'_>, root: &Node) -> DoneGateConfig {
    let mut config = DoneGateConfig::default();
    let Some(top) = cx.fields_with(
        root,
        "the configuration file",
        &["doneGate"],
        UnknownKeys::Ignore,
    ) else {
        return config;
    };
    let Some(section) = top.get("doneGate").filter(|n| n.value != NodeValue::Null) else {
        return config;
    };
    let Some(fields) = cx.fields_with(section, "`doneGate`", DONE_GATE_KEYS, UnknownKeys::Warn)
    else {
        return config;
    };
    if let Some(node) = fields.get("fingerprintExclude") {
        config.fingerprint_exclude = cx
            .read::<Option<Vec<String>>>(node, "`doneGate.fingerprintExclude`")
            .flatten()
            .unwrap_or_default();
    }
    if let Some(node) = fields.get("certificates") {
        config.certificates = certificates::read(cx, node);
    }
    let what = "`doneGate.externalVerdicts`";
    let value = fields.get("externalVerdicts").and_then(|node| {
        let Loose(text) = cx.read::<Loose<String>>(node, what)?;
        Some((node, text))
    });
    match value.as_ref().map(|(node, text)| (node, text.as_str())) {
        Some((_, "allow")) => config.external_verdicts = ExternalVerdicts::Allow,
        Some((_, "deny")) | None => {}
        Some((node, other)) => {
            let choices = [
                ExternalVerdicts::Allow.as_str(),
                ExternalVerdicts::Deny.as_str(),
            ];
            let help = match did_you_mean(other, choices) {
                Some(choice) => format!("did you mean `{choice}`?"),
                None => "`allow` accepts verdict artifacts written or edited outside spur; `deny` (the default) does not".to_owned(),
            };
            let d = Diagnostic::error(
                cx.codes.wrong_type,
                cx.source,
                node.pointed(),
                format!("{what} must be `allow` or `deny`, not `{other}`"),
            )
            .label("expected `allow` or `deny`")
            .help(help);
            cx.push(d);
        }
    }
    config
}
