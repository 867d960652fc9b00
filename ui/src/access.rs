//! Who may talk to the server. Three checks, in this order, on every request:
//!
//! 1. **Host.** The `Host` header must name the address the server is bound to (for a
//!    loopback address, `localhost` with its port too). A page on another site that
//!    resolves its own name to 127.0.0.1 (DNS rebinding) sends its own name: refused.
//! 2. **Token** (`--token`, required off loopback). The server prints a one-time URL,
//!    `/login/NONCE`; opening it sets a cookie holding the token (HttpOnly, SameSite=Strict)
//!    and spends the nonce. Every other request, the event stream included, must carry the
//!    cookie.
//! 3. **CSRF**, for the one request that writes (an answer): the form carries the token the
//!    server put in it, and an `Origin` header, when sent, must be the server's own.

use std::net::SocketAddr;
use std::sync::Mutex;

/// The cookie that carries the token.
pub(crate) const COOKIE: &str = "spur_ui_token";

/// What the server accepts, fixed when it binds.
#[derive(Debug)]
pub(crate) struct Access {
    hosts: Vec<String>,
    /// Bound to every interface (0.0.0.0, ::): the names it is reached by cannot be known,
    /// so any host with this port passes check 1, and the token (required off loopback)
    /// is what guards it.
    any_host_on_port: Option<u16>,
    origins: Vec<String>,
    csrf: String,
    token: Option<String>,
    nonce: Mutex<Option<String>>,
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The Host header is not the bound address (status 421).
    Host(String),
    /// No valid token cookie (status 401).
    Token,
}

impl Access {
    /// The checks for a server bound to `bound`; `token`: require a token cookie.
    pub(crate) fn new(bound: SocketAddr, token: bool) -> Access {
        let port = bound.port();
        let mut hosts = vec![bound.to_string()];
        if bound.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
            hosts.push(format!("127.0.0.1:{port}"));
            hosts.push(format!("[::1]:{port}"));
        }
        hosts.dedup();
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Access {
            hosts,
            any_host_on_port: bound.ip().is_unspecified().then_some(port),
            origins,
            csrf: random_hex(),
            token: token.then(random_hex),
            nonce: Mutex::new(token.then(random_hex)),
        }
    }

    /// The token forms must carry.
    pub(crate) fn csrf(&self) -> &str {
        &self.csrf
    }

    /// The one-time login path (`/login/NONCE`), until it is used.
    pub(crate) fn login_path(&self) -> Option<String> {
        self.nonce
            .lock()
            .ok()
            .and_then(|n| n.as_ref().map(|n| format!("/login/{n}")))
    }

    /// Check 1: `host` (the Host header) names this server.
    pub(crate) fn host_ok(&self, host: Option<&str>) -> bool {
        let host = host.unwrap_or("");
        if let Some(port) = self.any_host_on_port {
            return host
                .rsplit_once(':')
                .is_some_and(|(_, p)| p == port.to_string());
        }
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Check 1 and 2 for a request with `host` and `cookie` headers.
    pub(crate) fn admit(&self, host: Option<&str>, cookie: Option<&str>) -> Result<(), Refusal> {
        if !self.host_ok(host) {
            return Err(Refusal::Host(host.unwrap_or("").to_owned()));
        }
        match &self.token {
            None => Ok(()),
            Some(token) if cookie_value(cookie, COOKIE).is_some_and(|v| same(v, token)) => Ok(()),
            Some(_) => Err(Refusal::Token),
        }
    }

    /// `/login/NONCE`: the token to set as the cookie when `nonce` is the unspent one (it is
    /// spent now), else `None`.
    pub(crate) fn log_in(&self, nonce: &str) -> Option<String> {
        let mut slot = self.nonce.lock().ok()?;
        let expected = slot.as_deref()?;
        if !same(nonce, expected) {
            return None;
        }
        *slot = None;
        self.token.clone()
    }

    /// Check 3: `given` is the form's token, `origin` the request's Origin header.
    pub(crate) fn csrf_ok(&self, given: Option<&str>, origin: Option<&str>) -> bool {
        let origin_ok =
            origin.is_none_or(|o| self.origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
        origin_ok && given.is_some_and(|g| same(g, &self.csrf))
    }
}

/// The value of cookie `name` in a Cookie header.
fn cookie_value<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// 32 random bytes as hex (the zero string if the system has no randomness, which then
/// matches nothing a client can guess… except itself: see `Ui::bind`, which refuses it).
pub(crate) fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        return String::new();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::{cookie_value, Access, Refusal};

    fn loopback() -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], 7878))
    }

    #[test]
    fn only_the_bound_address_and_localhost_are_hosts() {
        let access = Access::new(loopback(), false);
        assert_eq!(access.admit(Some("127.0.0.1:7878"), None), Ok(()));
        assert_eq!(access.admit(Some("LOCALHOST:7878"), None), Ok(()));
        assert!(matches!(
            access.admit(Some("evil.example:7878"), None),
            Err(Refusal::Host(_))
        ));
        assert!(matches!(
            access.admit(Some("127.0.0.1:80"), None),
            Err(Refusal::Host(_))
        ));
        assert!(matches!(access.admit(None, None), Err(Refusal::Host(_))));
    }

    #[test]
    fn bound_to_every_interface_any_name_with_the_port_is_a_host() {
        let access = Access::new(std::net::SocketAddr::from(([0, 0, 0, 0], 7878)), true);
        assert!(access.host_ok(Some("build-box.lan:7878")));
        assert!(access.host_ok(Some("192.168.1.5:7878")));
        assert!(!access.host_ok(Some("build-box.lan:80")));
        assert!(!access.host_ok(Some("build-box.lan")));
        assert!(!access.host_ok(None));
    }

    #[test]
    fn a_token_is_set_from_the_one_time_path_once() {
        let access = Access::new(loopback(), true);
        let path = access.login_path().unwrap_or_default();
        let nonce = path.trim_start_matches("/login/").to_owned();
        assert_eq!(
            access.admit(Some("127.0.0.1:7878"), None),
            Err(Refusal::Token)
        );
        assert_eq!(access.log_in("wrong"), None);
        let token = access.log_in(&nonce).unwrap_or_default();
        assert!(!token.is_empty());
        assert_eq!(access.log_in(&nonce), None, "the nonce is spent");
        let cookie = format!("a=b; spur_ui_token={token}");
        assert_eq!(access.admit(Some("127.0.0.1:7878"), Some(&cookie)), Ok(()));
        assert_eq!(
            access.admit(Some("127.0.0.1:7878"), Some("spur_ui_token=nope")),
            Err(Refusal::Token)
        );
    }

    #[test]
    fn csrf_needs_the_token_and_a_same_origin() {
        let access = Access::new(loopback(), false);
        let csrf = access.csrf().to_owned();
        assert!(access.csrf_ok(Some(&csrf), None));
        assert!(access.csrf_ok(Some(&csrf), Some("http://127.0.0.1:7878")));
        assert!(!access.csrf_ok(Some(&csrf), Some("http://evil.example")));
        assert!(!access.csrf_ok(Some("x"), None));
        assert!(!access.csrf_ok(None, None));
        assert_eq!(cookie_value(Some("x=1; y=2"), "y"), Some("2"));
    }
}
