//! A headless Chromium driven over the W3C WebDriver protocol: Debian's `chromedriver`
//! started on a free port, spoken to with JSON over [`super::http`]. Without Chromium the
//! test fails saying what to install; it is never skipped.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use super::http;
use crate::common::{eventually, repo_path};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key of an element reference in WebDriver's JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
}

impl Browser {
    /// A new headless browser session.
    pub fn start() -> Browser {
        for tool in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(tool).exists(),
                "the browser tests need {tool}: install Debian's Chromium and its driver \
                 with `apt-get install -y chromium chromium-driver` (.ci/run does)"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut browser = Browser {
            driver,
            addr,
            session: String::new(),
        };
        assert!(
            eventually(|| std::net::TcpStream::connect(addr).is_ok()),
            "chromedriver did not listen on {addr}"
        );
        let created = browser.call(
            "POST",
            "/session",
            &json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": CHROMIUM,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1280,1000"]
                }
            }}}),
        );
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        browser
    }

    /// One WebDriver command; its `value`. A WebDriver error fails the test with it.
    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = if method == "GET" {
            String::new()
        } else {
            body.to_string()
        };
        let reply = http::request(
            self.addr,
            method,
            path,
            &[
                ("Host", &self.addr.to_string()),
                ("Content-Type", "application/json"),
            ],
            &body,
        );
        let parsed: Value = serde_json::from_str(&reply.body)
            .unwrap_or_else(|_| panic!("webdriver {method} {path}: {}", reply.body));
        assert!(
            reply.status == 200,
            "webdriver {method} {path}: {} {}",
            reply.status,
            parsed
        );
        parsed["value"].clone()
    }

    fn session_path(&self, rest: &str) -> String {
        format!("/session/{}{rest}", self.session)
    }

    pub fn open(&self, url: &str) {
        self.call("POST", &self.session_path("/url"), &json!({ "url": url }));
    }

    /// The elements `css` selects now.
    pub fn find_all(&self, css: &str) -> Vec<String> {
        let found = self.call(
            "POST",
            &self.session_path("/elements"),
            &json!({"using": "css selector", "value": css}),
        );
        found
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
            .collect()
    }

    /// The one element `css` selects, waited for (bounded).
    pub fn find(&self, css: &str) -> String {
        assert!(
            eventually(|| !self.find_all(css).is_empty()),
            "no element {css:?} on {}",
            self.script("return document.location.href + '\\n' + document.body.innerText")
        );
        self.find_all(css).remove(0)
    }

    pub fn click(&self, element: &str) {
        self.call(
            "POST",
            &self.session_path(&format!("/element/{element}/click")),
            &json!({}),
        );
    }

    pub fn text(&self, element: &str) -> String {
        self.call(
            "GET",
            &self.session_path(&format!("/element/{element}/text")),
            &Value::Null,
        )
        .as_str()
        .unwrap_or("")
        .to_owned()
    }

    /// The value a script returns.
    pub fn script(&self, source: &str) -> Value {
        self.call(
            "POST",
            &self.session_path("/execute/sync"),
            &json!({"script": source, "args": []}),
        )
    }

    /// A screenshot of the window, kept as `target/ui-screenshots/NAME.png`.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let encoded = self.call("GET", &self.session_path("/screenshot"), &Value::Null);
        let png = base64_decode(encoded.as_str().unwrap_or(""));
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is no PNG");
        let dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_path("target"))
            .join("ui-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http::request(
                self.addr,
                "DELETE",
                &format!("/session/{}", self.session),
                &[("Host", &self.addr.to_string())],
                "",
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u32> = text.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | (d << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..group.len().saturating_sub(1)]);
    }
    out
}
