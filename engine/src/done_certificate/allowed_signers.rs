//! The OpenSSH `allowed_signers` file (ssh-keygen(1), *ALLOWED SIGNERS*), as git reads it
//! for `gpg.ssh.allowedSignersFile`: one signer a line,
//!
//! ```text
//! ada@example.com,bob@example.com namespaces="spur-done-cert" ssh-ed25519 AAAA… comment
//! ```
//!
//! principals (comma-separated patterns with `*` and `?`, `!` negating), then options
//! (`namespaces="…"`, `valid-after="…"`, `valid-before="…"`, `cert-authority`), then the
//! public key. A key is allowed for a principal when a line's patterns match the principal,
//! its `namespaces` (if any) match [`super::NAMESPACE`], the time is within its validity,
//! and the key is the line's. `cert-authority` lines are read but never match: spur does not
//! verify signatures made with SSH certificates. Validity times are read as UTC (OpenSSH
//! reads them as local time unless they end in `Z`).

use ssh_key::public::KeyData;
use ssh_key::PublicKey;

/// The parsed file.
#[derive(Debug, Clone)]
pub(crate) struct AllowedSigners {
    lines: Vec<Signer>,
}

/// One line.
#[derive(Debug, Clone)]
struct Signer {
    principals: String,
    namespaces: Option<String>,
    valid_after: Option<String>,
    valid_before: Option<String>,
    cert_authority: bool,
    key: KeyData,
}

/// A line that does not parse: its 1-based number and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineError {
    pub(crate) line: usize,
    pub(crate) reason: String,
}

impl AllowedSigners {
    /// Parse the file's text; the first line that does not parse is the error.
    pub(crate) fn parse(text: &str) -> Result<Self, LineError> {
        let mut lines = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let signer = parse_line(line).map_err(|reason| LineError {
                line: index + 1,
                reason,
            })?;
            lines.push(signer);
        }
        Ok(Self { lines })
    }

    /// Whether `key` may sign in `namespace` as `principal` at `when` (`YYYYMMDDHHMMSS`, UTC).
    pub(crate) fn allows(
        &self,
        principal: &str,
        namespace: &str,
        key: &KeyData,
        when: &str,
    ) -> bool {
        self.lines.iter().any(|s| {
            !s.cert_authority
                && &s.key == key
                && match_list(principal, &s.principals)
                && s.namespaces
                    .as_deref()
                    .is_none_or(|list| match_list(namespace, list))
                && s.valid_after.as_deref().is_none_or(|after| when >= after)
                && s.valid_before.as_deref().is_none_or(|before| when < before)
        })
    }

    /// The principals of the lines that list `key` (for a message naming who it belongs to).
    pub(crate) fn principals_of(&self, key: &KeyData) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|s| &s.key == key)
            .map(|s| s.principals.as_str())
            .collect()
    }
}

fn parse_line(line: &str) -> Result<Signer, String> {
    let (principals, rest) = next_field(line)?;
    let principals = principals.replace('"', "");
    let (second, after_second) = next_field(rest)?;
    let (options, key_text) = if is_key_type(&second) {
        (String::new(), rest)
    } else {
        (second, after_second)
    };
    if principals.is_empty() {
        return Err("no principals".to_owned());
    }
    let mut signer = Signer {
        principals,
        namespaces: None,
        valid_after: None,
        valid_before: None,
        cert_authority: false,
        key: KeyData::Ed25519(ssh_key::public::Ed25519PublicKey([0; 32])),
    };
    for option in split_options(&options)? {
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(unquote(value)?)),
            None => (option.as_str(), None),
        };
        match (name.to_ascii_lowercase().as_str(), value) {
            ("cert-authority", None) => signer.cert_authority = true,
            ("namespaces", Some(v)) => signer.namespaces = Some(v),
            ("valid-after", Some(v)) => signer.valid_after = Some(validity_time(&v)?),
            ("valid-before", Some(v)) => signer.valid_before = Some(validity_time(&v)?),
            _ => return Err(format!("unknown option {option:?}")),
        }
    }
    let key = PublicKey::from_openssh(key_text.trim())
        .map_err(|e| format!("the public key does not parse: {e}"))?;
    signer.key = key.key_data().clone();
    Ok(signer)
}

/// Whether a word is a public key type (then there are no options before it).
fn is_key_type(word: &str) -> bool {
    ["ssh-", "ecdsa-", "sk-"]
        .iter()
        .any(|p| word.starts_with(p))
}

/// The first whitespace-separated field (double quotes group, and are kept) and the rest
/// after it.
fn next_field(text: &str) -> Result<(String, &str), String> {
    let text = text.trim_start();
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                let (head, tail) = text.split_at_checked(i).unwrap_or((text, ""));
                return Ok((head.to_owned(), tail));
            }
            _ => {}
        }
    }
    if quoted {
        return Err("an unclosed quote".to_owned());
    }
    Err("no public key".to_owned())
}

/// The options field split at commas outside quotes.
fn split_options(options: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in options.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if quoted {
        return Err("an unclosed quote in the options".to_owned());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    Ok(parts.into_iter().filter(|p| !p.is_empty()).collect())
}

fn unquote(value: &str) -> Result<String, String> {
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => Ok(inner.to_owned()),
        None if !value.contains('"') => Ok(value.to_owned()),
        None => Err(format!("a badly quoted value {value:?}")),
    }
}

/// `YYYYMMDD[HHMM[SS]][Z]` as `YYYYMMDDHHMMSS`, so times compare as strings.
fn validity_time(value: &str) -> Result<String, String> {
    let digits = value.strip_suffix(['Z', 'z']).unwrap_or(value);
    let ok = digits.bytes().all(|b| b.is_ascii_digit()) && matches!(digits.len(), 8 | 12 | 14);
    if !ok {
        return Err(format!(
            "a validity time {value:?} is not YYYYMMDD[HHMM[SS]][Z]"
        ));
    }
    Ok(format!("{digits:0<14}"))
}

/// A certificate time (RFC 3339 UTC, `2026-12-01T10:00:00.000Z`) as `YYYYMMDDHHMMSS`.
pub(crate) fn compact_time(rfc3339: &str) -> Option<String> {
    let digits: String = rfc3339
        .chars()
        .take_while(|c| *c != '.' && *c != 'Z' && *c != '+')
        .filter(char::is_ascii_digit)
        .collect();
    (digits.len() == 14).then_some(digits)
}

/// OpenSSH's `match_pattern_list`: a negated pattern that matches refuses, else any
/// pattern that matches accepts. Case-sensitive, as for principals.
fn match_list(text: &str, list: &str) -> bool {
    let mut matched = false;
    for pattern in list.split(',') {
        if let Some(negated) = pattern.strip_prefix('!') {
            if match_pattern(text.as_bytes(), negated.as_bytes()) {
                return false;
            }
        } else if match_pattern(text.as_bytes(), pattern.as_bytes()) {
            matched = true;
        }
    }
    matched
}

/// `*` matches any run, `?` any one byte.
fn match_pattern(text: &[u8], pattern: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => {
            (0..=text.len()).any(|i| text.get(i..).is_some_and(|t| match_pattern(t, rest)))
        }
        Some((b'?', rest)) => text
            .split_first()
            .is_some_and(|(_, t)| match_pattern(t, rest)),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, tail)| t == c && match_pattern(tail, rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDtsD/h8x2wXHDWrqNaSbB/v6CCqCGUneZYNuILOBQvt";
    const OTHER: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL9YJa4+beEwej1zA2ZoylyObs1GzJqjAfHHXW1v9wzk";

    fn key(text: &str) -> KeyData {
        PublicKey::from_openssh(text).unwrap().key_data().clone()
    }

    const NOW: &str = "20261201100000";

    #[test]
    fn a_listed_key_is_allowed_for_its_principals_only() {
        let file = AllowedSigners::parse(&format!(
            "# team\n\nada@example.com,*@ops.example.com {ED} ada's laptop\n"
        ))
        .unwrap();
        let ed = key(ED);
        assert!(file.allows("ada@example.com", "spur-done-cert", &ed, NOW));
        assert!(file.allows("eve@ops.example.com", "spur-done-cert", &ed, NOW));
        assert!(!file.allows("bob@example.com", "spur-done-cert", &ed, NOW));
        assert!(!file.allows("ada@example.com", "spur-done-cert", &key(OTHER), NOW));
        assert_eq!(
            file.principals_of(&ed),
            ["ada@example.com,*@ops.example.com"]
        );
    }

    #[test]
    fn namespaces_validity_negation_and_cert_authority_restrict() {
        let file = AllowedSigners::parse(&format!(
            "ada@example.com namespaces=\"git,file\" {ED}\n\
             bob@example.com valid-after=\"20270101\",valid-before=\"20280101Z\" {ED}\n\
             *,!mallory@example.com {OTHER}\n\
             carol@example.com cert-authority {ED}\n"
        ))
        .unwrap();
        let (ed, other) = (key(ED), key(OTHER));
        assert!(!file.allows("ada@example.com", "spur-done-cert", &ed, NOW));
        assert!(file.allows("ada@example.com", "git", &ed, NOW));
        assert!(!file.allows("bob@example.com", "spur-done-cert", &ed, NOW));
        assert!(file.allows("bob@example.com", "spur-done-cert", &ed, "20270601000000"));
        assert!(!file.allows("bob@example.com", "spur-done-cert", &ed, "20280101000000"));
        assert!(file.allows("zed@example.com", "spur-done-cert", &other, NOW));
        assert!(!file.allows("mallory@example.com", "spur-done-cert", &other, NOW));
        assert!(!file.allows("carol@example.com", "spur-done-cert", &ed, NOW));
    }

    #[test]
    fn lines_that_do_not_parse_name_their_line() {
        for (text, fragment) in [
            ("ada@example.com\n", "no public key"),
            ("ada@example.com ssh-ed25519 AAAA\n", "does not parse"),
            (
                &format!("# x\nada@example.com bogus=1 {ED}\n") as &str,
                "unknown option",
            ),
            (&format!("a valid-after=\"2026\" {ED}\n"), "validity time"),
            (&format!("\"ada {ED}\n"), "unclosed quote"),
        ] {
            let error = AllowedSigners::parse(text).unwrap_err();
            assert!(error.reason.contains(fragment), "{text}: {error:?}");
        }
        assert_eq!(
            AllowedSigners::parse(&format!("# x\nada@example.com bogus=1 {ED}\n"))
                .unwrap_err()
                .line,
            2
        );
    }

    #[test]
    fn patterns_and_times() {
        assert!(match_pattern(b"ada@example.com", b"*@example.com"));
        assert!(match_pattern(b"ab", b"a?"));
        assert!(!match_pattern(b"abc", b"a?"));
        assert!(match_pattern(b"", b"*"));
        assert_eq!(
            compact_time("2026-12-01T10:00:00.000Z").as_deref(),
            Some("20261201100000")
        );
        assert_eq!(compact_time("yesterday"), None);
        assert_eq!(validity_time("20260101").unwrap(), "20260101000000");
    }
}
