//! Findings a gate reports: JSON lines on its stdout or in its findings file,
//! `{severity: BLOCK|WARN|INFO, file, line, message, fix}`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum FindingSeverity {
    Block,
    Warn,
    Info,
}

impl FindingSeverity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Block => "BLOCK",
            Self::Warn => "WARN",
            Self::Info => "INFO",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_uppercase().as_str() {
            "BLOCK" | "BLOCKER" => Some(Self::Block),
            "WARN" | "WARNING" => Some(Self::Warn),
            "INFO" => Some(Self::Info),
            _ => None,
        }
    }
}

/// One finding of a gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Finding {
    pub(crate) severity: FindingSeverity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<u64>,
    pub(crate) message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fix: Option<String>,
}

impl Finding {
    /// `file:line`, the locator that makes a failure actionable.
    pub(crate) fn locator(&self) -> Option<String> {
        match (&self.file, self.line) {
            (Some(file), Some(line)) if !file.trim().is_empty() => Some(format!("{file}:{line}")),
            _ => None,
        }
    }

    /// Read one line of gate output. `None` when the line is ordinary output (not a JSON
    /// object with a `severity`); a JSON object with a `severity` that is not a valid
    /// finding becomes a WARN finding saying so, so a typo never hides a finding.
    pub(crate) fn from_line(line: &str) -> Option<Self> {
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            return None;
        }
        let value: serde_json::Value = serde_json::from_str(trimmed).ok()?;
        let object = value.as_object()?;
        let severity = object.get("severity")?;
        let text = |key: &str| {
            object
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .filter(|s| !s.trim().is_empty())
        };
        let parsed_severity = severity.as_str().and_then(FindingSeverity::parse);
        let message = text("message");
        let (Some(severity), Some(message)) = (parsed_severity, message) else {
            return Some(Self {
                severity: FindingSeverity::Warn,
                file: None,
                line: None,
                message: format!(
                    "malformed finding (needs a severity BLOCK|WARN|INFO and a message): {}",
                    truncate(trimmed, 200)
                ),
                fix: Some(
                    "emit {\"severity\":…,\"file\":…,\"line\":…,\"message\":…,\"fix\":…}"
                        .to_owned(),
                ),
            });
        };
        let mut file = text("file");
        let mut line = object.get("line").and_then(|l| {
            l.as_u64()
                .or_else(|| l.as_str().and_then(|s| s.trim().parse().ok()))
        });
        // `file: "src/a.rs:12"` carries its own line.
        if line.is_none() {
            if let Some((path, n)) = file.as_deref().and_then(split_line_suffix) {
                line = Some(n);
                file = Some(path);
            }
        }
        Some(Self {
            severity,
            file,
            line,
            message,
            fix: text("fix"),
        })
    }
}

/// All findings in a text (gate stdout or a findings file), in order.
pub(crate) fn findings_in(text: &str) -> Vec<Finding> {
    text.lines().filter_map(Finding::from_line).collect()
}

/// Counts per severity: (BLOCK, WARN, INFO).
pub(crate) fn tally(findings: &[Finding]) -> (usize, usize, usize) {
    let count = |s| findings.iter().filter(|f| f.severity == s).count();
    (
        count(FindingSeverity::Block),
        count(FindingSeverity::Warn),
        count(FindingSeverity::Info),
    )
}

fn split_line_suffix(file: &str) -> Option<(String, u64)> {
    let (path, n) = file.rsplit_once(':')?;
    let n = n.parse().ok()?;
    (!path.is_empty()).then(|| (path.to_owned(), n))
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_findings_among_ordinary_output() {
        let text = "compiling\n{\"severity\":\"block\",\"file\":\"src/a.rs\",\"line\":3,\"message\":\"boom\",\"fix\":\"defuse\"}\n{\"not\":\"a finding\"}\n{\"severity\":\"WARN\",\"file\":\"b.rs:7\",\"message\":\"hm\"}\n";
        let findings = findings_in(text);
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[0].severity, FindingSeverity::Block);
        assert_eq!(findings[0].locator().as_deref(), Some("src/a.rs:3"));
        assert_eq!(findings[0].fix.as_deref(), Some("defuse"));
        assert_eq!(findings[1].locator().as_deref(), Some("b.rs:7"));
        assert_eq!(tally(&findings), (1, 1, 0));
    }

    #[test]
    fn a_finding_without_file_and_line_has_no_locator() {
        let f = Finding::from_line(r#"{"severity":"INFO","file":"a.rs","message":"m"}"#).unwrap();
        assert_eq!(f.locator(), None);
    }

    #[test]
    fn a_malformed_finding_becomes_a_warning() {
        let f = Finding::from_line(r#"{"severity":"FATAL","message":"m"}"#).unwrap();
        assert_eq!(f.severity, FindingSeverity::Warn);
        assert!(f.message.starts_with("malformed finding"), "{}", f.message);
    }
}
