//! `http.request`: one outbound request, hardened as the reference's task 0034 asks. Every
//! check is on the URL as rendered (a var can carry any text) and happens before a
//! connection is opened: scheme `http`/`https` only, no user or password in the URL, the
//! origin or host listed in `http.allow` (`run/http_allow.rs`; none listed denies all),
//! method, header names and values (no control characters: no header injection), timeout and
//! size bounds. Redirects are not followed unless `redirect: follow`, and then each hop is
//! checked as the first was. The body is read up to `maxResponseBytes`; a longer one fails
//! the step. Request headers are never recorded (they carry tokens). Proxies from the
//! environment are not used: the connection goes where the check said.

use std::io::Read;
use std::time::Duration;

use ureq::http::{self, Uri};

use super::{coded, ActionContext, ActionResult};
use crate::diagnostic::Code;
use crate::pipeline::HttpRequestOptions;
use crate::run::http_allow::{split_authority, HttpAllowList, Origin, Scheme};
use crate::template::is_identifier;

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
/// The reference's bounds: 30 s by default, at most 120 s.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// 1 MiB by default (the reference's), at most 16 MiB (a var that large is already unusable
/// as an environment variable).
const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1024 * 1024;
const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// Hops `redirect: follow` takes before it gives up.
const MAX_REDIRECTS: usize = 5;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Redirect {
    Manual,
    Error,
    Follow,
}

struct Request {
    method: String,
    url: Uri,
    origin: Origin,
    headers: Vec<(String, String)>,
    body: Option<String>,
    fail_on_status: Vec<u16>,
    timeout: Duration,
    max_bytes: u64,
    redirect: Redirect,
    body_var: Option<String>,
    status_var: Option<String>,
    headers_var: Option<String>,
}

pub(crate) fn run(ctx: &ActionContext<'_>, options: &HttpRequestOptions) -> ActionResult {
    let request = match resolve(ctx, options) {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    send(&request, ctx.http_allow)
}

fn refused(message: impl std::fmt::Display, help: &str) -> String {
    coded(
        Code::RunHttpRefused,
        format!("http.request: {message}"),
        help,
    )
}

fn resolve(ctx: &ActionContext<'_>, o: &HttpRequestOptions) -> Result<Request, String> {
    let url_text = ctx.required(&o.url)?;
    let method = ctx
        .optional(o.method.as_ref())?
        .unwrap_or_else(|| "GET".to_owned())
        .to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(refused(
            format!("unsupported method {method:?}"),
            "use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS",
        ));
    }
    let timeout = ctx
        .millis(o.timeout_ms.as_ref())?
        .unwrap_or(DEFAULT_TIMEOUT);
    if timeout > MAX_TIMEOUT {
        return Err(refused(
            format!("timeoutMs must be 1–120000, got {}", timeout.as_millis()),
            "the reference's bound: two minutes at most",
        ));
    }
    let max_bytes = ctx
        .optional(o.max_response_bytes.as_ref())?
        .unwrap_or(DEFAULT_MAX_RESPONSE_BYTES);
    if max_bytes == 0 || max_bytes > MAX_RESPONSE_BYTES {
        return Err(refused(
            format!("maxResponseBytes must be 1–{MAX_RESPONSE_BYTES}, got {max_bytes}"),
            "the default is 1048576 (1 MiB)",
        ));
    }
    let redirect = match ctx.optional(o.redirect.as_ref())?.as_deref() {
        None | Some("manual") => Redirect::Manual,
        Some("error") => Redirect::Error,
        Some("follow") => Redirect::Follow,
        Some(other) => {
            return Err(refused(
                format!("redirect {other:?} is not manual, error or follow"),
                "manual (the default) returns a 3xx as the response",
            ))
        }
    };
    let headers = match ctx.optional(o.headers.as_ref())? {
        None => Vec::new(),
        Some(serde_json::Value::Object(map)) => {
            let mut headers = Vec::with_capacity(map.len());
            for (name, value) in map {
                let serde_json::Value::String(value) = value else {
                    return Err(refused(
                        format!("header {name:?} must be a string"),
                        "header values are strings",
                    ));
                };
                check_header(&name, &value)?;
                headers.push((name, value));
            }
            headers
        }
        Some(_) => {
            return Err(refused(
                "headers must be a mapping of names to strings",
                "headers: {Accept: application/json}",
            ))
        }
    };
    let body = ctx.optional(o.body.as_ref())?;
    if body.is_some() && matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS") {
        return Err(refused(
            format!("a {method} request takes no body"),
            "send a body with POST, PUT, PATCH or DELETE",
        ));
    }
    let fail_on_status = match ctx.optional(o.fail_on_status.as_ref())? {
        None => Vec::new(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                serde_json::Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .collect::<Option<Vec<u16>>>()
            .ok_or_else(|| {
                refused(
                    "failOnStatus must be a list of status codes",
                    "failOnStatus: [404, 409]",
                )
            })?,
        Some(_) => {
            return Err(refused(
                "failOnStatus must be a list of status codes",
                "failOnStatus: [404, 409]",
            ))
        }
    };
    let var =
        |option: Option<&crate::pipeline::Templated<String>>| -> Result<Option<String>, String> {
            match ctx.optional(option)? {
                Some(name) if !is_identifier(&name) => Err(refused(
                    format!("{name:?} is not a var name"),
                    "var names match ^[A-Za-z_][A-Za-z0-9_]*$",
                )),
                other => Ok(other),
            }
        };
    let (url, origin) = checked_url(&url_text)?;
    Ok(Request {
        method,
        url,
        origin,
        headers,
        body,
        fail_on_status,
        timeout,
        max_bytes,
        redirect,
        body_var: var(o.body_var.as_ref())?,
        status_var: var(o.status_var.as_ref())?,
        headers_var: var(o.headers_var.as_ref())?,
    })
}

/// A header name is an RFC 9110 token; a value has no control character but tab.
fn check_header(name: &str, value: &str) -> Result<(), String> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(refused(
            format!("invalid header name {name:?}"),
            "a header name is letters, digits and !#$%&'*+-.^_`|~",
        ));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        // The value is not shown: it may be a token.
        return Err(refused(
            format!("the value of header {name:?} holds a control character"),
            "a line break in a header value would start another header",
        ));
    }
    Ok(())
}

/// The URL parsed as the client will use it, with its origin: `http`/`https`, no user or
/// password, a host.
fn checked_url(text: &str) -> Result<(Uri, Origin), String> {
    let written_scheme = text.split_once(':').map_or("", |(s, _)| s);
    if Scheme::parse(written_scheme).is_none() {
        return Err(refused(
            format!("only http and https URLs are allowed, got {text:?}"),
            "file:, ftp: and other schemes are never fetched",
        ));
    }
    let url: Uri = text
        .parse()
        .map_err(|_| refused(format!("invalid URL {text:?}"), "an absolute http(s) URL"))?;
    let Some(scheme) = url.scheme_str().and_then(Scheme::parse) else {
        return Err(refused(
            format!("only http and https URLs are allowed, got {text:?}"),
            "file:, ftp: and other schemes are never fetched",
        ));
    };
    let Some(authority) = url.authority() else {
        return Err(refused(
            format!("no host in {text:?}"),
            "an absolute http(s) URL",
        ));
    };
    if authority.as_str().contains('@') {
        return Err(refused(
            "URLs with a user or password are not allowed",
            "send credentials in a header, from a secret var",
        ));
    }
    let Some((host, port)) = split_authority(authority.as_str()) else {
        return Err(refused(
            format!("invalid host in {text:?}"),
            "an absolute http(s) URL",
        ));
    };
    let origin = Origin {
        scheme,
        host,
        port: port.unwrap_or(scheme.default_port()),
    };
    Ok((url, origin))
}

/// Whether `allow` lets the run reach `origin`; why not, otherwise.
fn permitted(allow: &HttpAllowList, origin: &Origin) -> Result<(), String> {
    if allow.is_empty() {
        return Err(refused(
            "no host allow-list is configured: outbound HTTP is denied",
            "list the origins or hosts steps may reach under `http.allow` in .spur/config.yaml",
        ));
    }
    if !allow.allows(origin) {
        return Err(refused(
            format!("{} is not in the allow-list ({origin})", origin.host),
            "add its origin or host to `http.allow` in .spur/config.yaml (exact match; no wildcard)",
        ));
    }
    Ok(())
}

fn send(request: &Request, allow: &HttpAllowList) -> ActionResult {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(request.timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let mut url = request.url.clone();
    let mut origin = request.origin.clone();
    let mut method = request.method.clone();
    let mut body = request.body.clone();
    let mut hops = 0;
    let response = loop {
        if let Err(e) = permitted(allow, &origin) {
            return ActionResult::failed(e);
        }
        let response = match exchange(&agent, &method, &url, &request.headers, body.as_deref()) {
            Ok(r) => r,
            Err(e) => return network_failure(e, &origin, request.timeout),
        };
        let status = response.status().as_u16();
        if !(300..400).contains(&status) || request.redirect == Redirect::Manual {
            break response;
        }
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if request.redirect == Redirect::Error {
            return ActionResult::failed(format!(
                "http.request: {status} redirect to {location:?} not followed (redirect: error)"
            ));
        }
        hops += 1;
        if hops > MAX_REDIRECTS {
            return ActionResult::failed(format!(
                "http.request: more than {MAX_REDIRECTS} redirects"
            ));
        }
        let next = match next_url(&url, &origin, &location) {
            Ok(next) => next,
            Err(e) => return ActionResult::failed(e),
        };
        (url, origin) = next;
        // 303 (and 301/302, as clients do) turn into a GET without a body; 307/308 repeat.
        if matches!(status, 301..=303) && method != "HEAD" {
            method = "GET".to_owned();
            body = None;
        }
    };
    finish(request, response, &method)
}

/// Send one request; redirects come back as responses.
fn exchange(
    agent: &ureq::Agent,
    method: &str,
    url: &Uri,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Result<http::Response<ureq::Body>, ureq::Error> {
    let mut builder = http::Request::builder().method(method).uri(url.clone());
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    match body {
        Some(body) => agent.run(builder.body(body.as_bytes().to_vec())?),
        None => agent.run(builder.body(())?),
    }
}

/// A `Location`: absolute, or a path on the same origin.
fn next_url(current: &Uri, origin: &Origin, location: &str) -> Result<(Uri, Origin), String> {
    if location.starts_with('/') && !location.starts_with("//") {
        let scheme = current.scheme_str().unwrap_or("https");
        let authority = current.authority().map_or("", |a| a.as_str());
        let (url, _) = checked_url(&format!("{scheme}://{authority}{location}"))?;
        return Ok((url, origin.clone()));
    }
    checked_url(location)
}

fn network_failure(e: ureq::Error, origin: &Origin, timeout: Duration) -> ActionResult {
    match e {
        ureq::Error::Timeout(_) => ActionResult {
            timed_out: true,
            ..ActionResult::failed(format!(
                "http.request: {origin} did not answer within {} ms (timeoutMs)",
                timeout.as_millis()
            ))
        },
        ureq::Error::Io(io) => {
            ActionResult::failed(format!("http.request: cannot reach {origin}: {io}"))
        }
        other => ActionResult::failed(format!("http.request: {origin}: {other}")),
    }
}

fn finish(request: &Request, response: http::Response<ureq::Body>, method: &str) -> ActionResult {
    let status = response.status().as_u16();
    let headers: serde_json::Map<String, serde_json::Value> = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                serde_json::Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()),
            )
        })
        .collect();
    let mut bytes = Vec::new();
    if method != "HEAD" {
        let reader = response.into_body().into_reader();
        if let Err(e) = reader.take(request.max_bytes + 1).read_to_end(&mut bytes) {
            return ActionResult::failed(format!(
                "http.request: reading the response of {}: {e}",
                request.origin
            ));
        }
    }
    if bytes.len() as u64 > request.max_bytes {
        return ActionResult::failed(format!(
            "http.request: the response body of {} is larger than maxResponseBytes ({} bytes); nothing was kept",
            request.origin, request.max_bytes
        ));
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let line = format!(
        "{method} {}{} → {status} ({} bytes)",
        request.origin,
        request.url.path(),
        bytes.len()
    );
    let failed = if request.fail_on_status.contains(&status) {
        Some(format!("http.request: status {status} is in failOnStatus"))
    } else if status >= 400 {
        Some(format!("http.request: status {status}"))
    } else {
        None
    };
    if let Some(error) = failed {
        return ActionResult {
            message: Some(line),
            ..ActionResult::failed(error)
        };
    }
    let mut result = ActionResult {
        message: Some(line),
        ..ActionResult::ok()
    };
    if let Some(var) = &request.body_var {
        result.set_vars.insert(var.clone(), text);
    }
    if let Some(var) = &request.status_var {
        result.set_vars.insert(var.clone(), status.to_string());
    }
    if let Some(var) = &request.headers_var {
        result
            .set_vars
            .insert(var.clone(), serde_json::Value::Object(headers).to_string());
    }
    result
}
