//! `http.allow` of `.spur/config.yaml`: where `http.request` may connect. Default deny, as
//! the reference's task 0034 asks: no list, no request. An entry is an exact origin
//! (`https://api.example.com`, `http://127.0.0.1:8080`: scheme, host and port must all
//! match, the port defaulting to the scheme's) or an exact host (`example.org`: either
//! scheme, any port). No wildcard, no suffix match: `example.org` does not allow
//! `api.example.org`. A loopback or private address is allowed only by its own entry, like
//! any host. Read once when a run starts or resumes, like `defaults:`, so a step that edits
//! the config does not widen what the run's later steps may reach.
//!
//! ```yaml
//! http:
//!   allow: [https://api.example.com, example.org]
//! ```

use std::path::{Path, PathBuf};

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::source::{Located, SourceFile};
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, Loader, NodeValue, UnknownKeys};

const CODES: Codes = Codes {
    wrong_type: Code::RunHttpConfig,
    missing_key: Code::RunHttpConfig,
    unknown_key: Code::RunHttpConfig,
    duplicate_key: Code::RunHttpConfig,
};

/// A scheme `http.request` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "http" => Some(Self::Http),
            "https" => Some(Self::Https),
            _ => None,
        }
    }

    pub(crate) const fn default_port(self) -> u16 {
        match self {
            Self::Http => 80,
            Self::Https => 443,
        }
    }

    const fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
        }
    }
}

/// Where a request goes: scheme, host (lower case; an IPv6 address in brackets), port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) scheme: Scheme,
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme.as_str(), self.host, self.port)
    }
}

/// The origins and hosts a run's `http.request` steps may reach; empty denies all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpAllowList {
    origins: Vec<Origin>,
    hosts: Vec<String>,
}

/// Why `http:` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HttpConfigError {
    /// The file exists but could not be read (not a regular file, too large, …).
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `http:` has errors.
    #[error("`http:` in {} cannot be used", path.display())]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    HttpConfigError {
        Self::Unreadable { .. } => Code::RunHttpConfig,
            help("check that the file is a readable regular file");
        Self::Invalid { errors, .. } => Code::RunHttpConfig,
            help("`http.allow` is a list of origins (`https://api.example.com`, `http://127.0.0.1:8080`) and hosts (`example.org`)"),
            related(errors);
    }
}

impl HttpAllowList {
    /// Read `http:` from `<state dir>/config.yaml`; no file or no `http:` allows nothing.
    pub fn load(state_dir: &StateDir) -> Result<Self, HttpConfigError> {
        let path = state_dir.config_path();
        match read_string(&path, MAX_CONFIG_BYTES) {
            Ok(text) => Self::parse(&path, &text),
            Err(e) if e.is_missing() => Ok(Self::default()),
            Err(e) => Err(HttpConfigError::Unreadable {
                path,
                reason: e.to_string(),
            }),
        }
    }

    fn parse(path: &Path, text: &str) -> Result<Self, HttpConfigError> {
        let source = SourceFile::new(path, text);
        let mut cx = Loader::new(&source, CODES);
        let mut list = Self::default();
        // A file that is not YAML is reported by the readers of its other sections.
        if let Ok(Some(root)) = parse_config(text) {
            let entries = cx
                .fields_with(
                    &root,
                    "the configuration file",
                    &["http"],
                    UnknownKeys::Ignore,
                )
                .and_then(|top| top.get("http").filter(|n| n.value != NodeValue::Null))
                .and_then(|http| cx.fields(http, "`http`", &["allow"]))
                .and_then(|http| http.get("allow"))
                .and_then(|allow| cx.read::<Vec<Located<String>>>(allow, "`http.allow`"))
                .unwrap_or_default();
            for entry in entries {
                match parse_entry(&entry.value) {
                    Some(Entry::Origin(o)) => list.origins.push(o),
                    Some(Entry::Host(h)) => list.hosts.push(h),
                    None => {
                        let d = Diagnostic::error(
                            Code::RunHttpConfig,
                            &source,
                            entry.span,
                            format!("`{}` is not an origin or a host", entry.value),
                        )
                        .label("not an origin or a host")
                        .help("an origin is `http(s)://host[:port]` with no path, user or wildcard; a host is a name or an address");
                        cx.push(d);
                    }
                }
            }
        }
        if cx.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(HttpConfigError::Invalid {
                path: path.to_path_buf(),
                errors: cx.diagnostics,
            });
        }
        Ok(list)
    }

    /// Whether nothing is allowed (no `http.allow`).
    pub(crate) fn is_empty(&self) -> bool {
        self.origins.is_empty() && self.hosts.is_empty()
    }

    /// Whether a request to `origin` is allowed: its exact origin, or its host, is listed.
    pub(crate) fn allows(&self, origin: &Origin) -> bool {
        self.origins.contains(origin) || self.hosts.contains(&origin.host)
    }
}

enum Entry {
    Origin(Origin),
    Host(String),
}

fn parse_entry(text: &str) -> Option<Entry> {
    match text.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = Scheme::parse(scheme)?;
            let authority = rest.strip_suffix('/').unwrap_or(rest);
            let (host, port) = split_authority(authority)?;
            Some(Entry::Origin(Origin {
                scheme,
                port: port.unwrap_or(scheme.default_port()),
                host,
            }))
        }
        None => {
            let (host, port) = split_authority(text)?;
            port.is_none().then_some(Entry::Host(host))
        }
    }
}

/// `host[:port]` → the host (lower case) and the port; `None` for anything else (a path, a
/// user, a wildcard, an empty host).
pub(crate) fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        inside.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{inside}]"), port)
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        let name_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !name_ok {
            return None;
        }
        (host.to_owned(), port)
    };
    let port = match port {
        None => None,
        Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p != 0)?),
    };
    Some((host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(yaml: &str) -> Result<HttpAllowList, HttpConfigError> {
        HttpAllowList::parse(Path::new("config.yaml"), yaml)
    }

    fn origin(scheme: Scheme, host: &str, port: u16) -> Origin {
        Origin {
            scheme,
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn origins_match_exactly_and_hosts_match_any_scheme_and_port() {
        let l =
            list("http:\n  allow: [https://API.example.com, example.org, 'http://[::1]:8080/']\n")
                .unwrap();
        assert!(l.allows(&origin(Scheme::Https, "api.example.com", 443)));
        assert!(!l.allows(&origin(Scheme::Http, "api.example.com", 443)));
        assert!(!l.allows(&origin(Scheme::Https, "api.example.com", 8443)));
        assert!(l.allows(&origin(Scheme::Http, "example.org", 8080)));
        assert!(!l.allows(&origin(Scheme::Https, "api.example.org", 443)));
        assert!(l.allows(&origin(Scheme::Http, "[::1]", 8080)));
        assert!(list("other: 1\n").unwrap().is_empty());
    }

    #[test]
    fn an_entry_that_is_not_an_origin_or_a_host_is_an_error() {
        for bad in [
            "ftp://example.org",
            "https://example.org/path",
            "https://user@example.org",
            "*.example.org",
            "example.org:80",
            "https://",
        ] {
            let e = list(&format!("http: {{allow: ['{bad}']}}\n"));
            assert!(matches!(e, Err(HttpConfigError::Invalid { .. })), "{bad}");
        }
    }
}
