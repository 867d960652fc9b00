//! Item 8: `http.request`, hardened as the reference's task 0034 asks, against a server
//! this test runs on 127.0.0.1 (never the network). The server records every request it
//! reads, so "refused before connecting" is checked by what it never saw.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use crate::common::{events, Spur};

/// A server on 127.0.0.1: `/ok` answers `hello`, `/big` 5000 bytes, `/fail` 500,
/// `/redirect` a 302 to `localhost` (another host), `/slow` never answers.
fn serve() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            if let Some(kept) = answer(stream, port, &record) {
                held.push(kept);
            }
        }
    });
    (port, seen)
}

/// Read one request's head, record it, answer; a stream kept open unanswered is returned.
fn answer(stream: TcpStream, port: u16, seen: &Mutex<Vec<String>>) -> Option<TcpStream> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 || line == "\r\n" {
            break;
        }
        head.push(line.trim_end().to_owned());
    }
    let path = head.first()?.split(' ').nth(1)?.to_owned();
    let token = head
        .iter()
        .find_map(|h| h.strip_prefix("x-token: ").or(h.strip_prefix("X-Token: ")))
        .unwrap_or("-")
        .to_owned();
    seen.lock().unwrap().push(format!("{path} {token}"));
    let reply = |status: &str, headers: &str, body: &str| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
            body.len()
        )
    };
    let text = match path.as_str() {
        "/ok" => reply("200 OK", "X-Answer: 42\r\n", "hello"),
        "/big" => reply("200 OK", "", &"x".repeat(5000)),
        "/fail" => reply("500 Internal Server Error", "", "no"),
        "/redirect" => reply(
            "302 Found",
            &format!("Location: http://localhost:{port}/ok\r\n"),
            "",
        ),
        _ => return Some(stream), // `/slow`: held open, never answered
    };
    let mut stream = stream;
    stream.write_all(text.as_bytes()).ok()?;
    None
}

/// Mirrors gobing-ai/spur `src/workflow/actions/http-request.ts` and its task 0034: default
/// deny, exact allow-list, scheme and credential gates on the rendered URL, manual
/// redirects (a followed one re-checked), header control characters refused, response size
/// cap, timeout, status mapping, `bodyVar`/`statusVar`/`headersVar`.
#[test]
fn http_request_reaches_only_what_the_allow_list_names() {
    let (port, seen) = serve();
    let p = Spur::new();
    p.file(
        ".spur/config.yaml",
        format!("http:\n  allow: ['http://127.0.0.1:{port}']\n"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let pipeline = format!(
        r#"
name: http
initialState: a
defaultOnError: continue
terminalStates: [b]
secrets: [token]
vars: {{token: "", path: "", inj: "", s: "", body: "", h: "", rs: "", big: "unset"}}
states:
  - id: a
    onEnter:
      - {{kind: http.request, options: {{url: "{base}/ok", headers: {{X-Token: "${{vars.token}}"}}, statusVar: s, bodyVar: body, headersVar: h}}}}
      - {{kind: shell, options: {{command: 'printf "%s|%s" "$s" "$body" > got.txt'}}}}
      - {{kind: http.request, options: {{url: "http://localhost:{port}/ok"}}}}
      - {{kind: http.request, options: {{url: "file:///etc/passwd"}}}}
      - {{kind: http.request, options: {{url: "{base}${{vars.path}}"}}}}
      - {{kind: http.request, options: {{url: "{base}/big", maxResponseBytes: 100, bodyVar: big}}}}
      - {{kind: http.request, options: {{url: "{base}/slow", timeoutMs: 300}}}}
      - {{kind: http.request, options: {{url: "{base}/redirect", redirect: follow}}}}
      - {{kind: http.request, options: {{url: "{base}/redirect", statusVar: rs}}}}
      - {{kind: http.request, options: {{url: "{base}/fail"}}}}
      - {{kind: http.request, options: {{url: "{base}/ok", method: post, body: "x", headers: {{X-Inject: "${{vars.inj}}"}}}}}}
      - {{kind: http.request, options: {{url: "{base}/ok", failOnStatus: [200]}}}}
  - {{id: b}}
transitions: [{{from: a, to: b}}]
"#
    );
    p.pipeline(&pipeline)
        .var("token", "s3cret-token")
        .var("path", &format!("@localhost:{port}/ok"))
        .var("inj", "a\r\nX-Evil: 1")
        .json()
        .run()
        .success();
    let records = p.newest_trace();
    let finished = events(&records, "action-finished");
    let oks: Vec<bool> = finished
        .iter()
        .map(|r| r["ok"].as_bool().unwrap())
        .collect();
    assert_eq!(
        oks,
        [true, true, false, false, false, false, false, false, true, false, false, false]
    );
    assert_eq!(p.read("got.txt"), "200|hello");
    assert!(finished[0]["setVars"]["h"]
        .as_str()
        .unwrap()
        .contains(r#""x-answer":"42""#));
    let error = |i: usize| finished[i]["error"].as_str().unwrap().to_owned();
    assert!(error(2).starts_with(&format!(
        "http.request: localhost is not in the allow-list (http://localhost:{port})"
    )));
    assert!(error(2).ends_with("[spur::run::http-refused]"));
    assert!(error(3).starts_with("http.request: only http and https URLs are allowed"));
    assert!(error(4).starts_with("http.request: URLs with a user or password are not allowed"));
    assert!(error(5).starts_with(&format!(
        "http.request: the response body of http://127.0.0.1:{port} is larger than maxResponseBytes (100 bytes)"
    )));
    assert!(finished[5]
        .get("setVars")
        .is_none_or(|v| v.get("big").is_none()));
    assert!(
        error(6).contains("did not answer within 300 ms"),
        "{}",
        error(6)
    );
    assert_eq!(finished[6]["timedOut"], true);
    assert!(error(7).starts_with("http.request: localhost is not in the allow-list"));
    assert_eq!(finished[8]["setVars"]["rs"], "302");
    assert_eq!(error(9), "http.request: status 500");
    assert!(error(10)
        .starts_with(r#"http.request: the value of header "X-Inject" holds a control character"#));
    assert_eq!(error(11), "http.request: status 200 is in failOnStatus");
    // What reached the server: never localhost, never the injected header; the token (a
    // secret) only on the wire, not in the run's records.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "/ok s3cret-token",
            "/big -",
            "/slow -",
            "/redirect -",
            "/redirect -",
            "/fail -",
            "/ok -"
        ]
    );
    let journal = serde_json::to_string(&records).unwrap();
    assert!(!journal.contains("s3cret-token"));

    // Without `http.allow`, nothing is fetched.
    let q = Spur::new();
    let out = q
        .pipeline(&format!(
            "name: n\ninitialState: a\nstates: [{{id: a, onEnter: [{{kind: http.request, options: {{url: '{base}/ok'}}}}]}}]\ntransitions: []\n"
        ))
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["reason"], "action-failed");
    let finished = events(&q.newest_trace(), "action-finished")[0].clone();
    assert!(finished["error"]
        .as_str()
        .unwrap()
        .starts_with("http.request: no host allow-list is configured"));
    assert_eq!(seen.len(), 7);

    // A wildcard is not an entry: the run does not start.
    let r = Spur::new();
    r.file(".spur/config.yaml", "http: {allow: ['*.example.org']}\n");
    r.pipeline("name: n\ninitialState: a\nstates: [{id: a}]\ntransitions: []\n")
        .run()
        .code(2)
        .stderr_contains("spur::run::http-config");
}
