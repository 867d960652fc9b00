//! `spur ui --engine restate`: the runs shown and answered are a Restate server's (a real
//! server from `common::restate`, a worker of this project registered with it). A fleet
//! run is listed in `/api/runs` and `/`, its page draws its graph with the state it is in,
//! its question is answered through `POST /runs/RUN/answer` and it finishes; the markup in
//! its vars reaches the pages as text.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use super::http::{get, request};
use super::server::UiServer;
use super::APPROVE;
use crate::common::restate::{Fleet, Server};
use crate::common::{eventually, Spur};

/// A bound on each spur command here, so a broken engine fails the test, never hangs it.
const LIMIT: Duration = Duration::from_secs(60);

/// The `class` of the graph's `<g>` drawing `state` in `page`.
fn state_class(page: &str, state: &str) -> String {
    let marker = format!("data-state=\"{state}\"");
    let Some(at) = page.find(&marker) else {
        panic!("no {marker} in the page:\n{page}");
    };
    let before = page.get(..at).unwrap_or_default();
    before
        .rsplit("<g class=\"")
        .next()
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

/// The run `id` as `/api/runs` lists it.
fn listed(ui: &UiServer, id: &str) -> Value {
    let runs: Value = serde_json::from_str(&get(ui.addr, "/api/runs").body).unwrap_or_default();
    runs.as_array()
        .into_iter()
        .flatten()
        .find(|r| r["runId"] == id)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_fleet_run_is_listed_drawn_and_answered_from_the_ui_until_it_finishes() {
    // A server of its own: on the shared one, every other test's runs are listed too, and
    // reading them all for each poll below outlasted `eventually` under a full test run.
    let server = &Server::start();
    let p = Spur::new().file("approve.yaml", APPROVE);
    let _fleet = Fleet::start(server, p.path(), p.home(), 1);
    let ingress = server.ingress();
    let engine = ["--engine", "restate", "--ingress", ingress.as_str()];
    let paused = p
        .args(["run", "approve.yaml", "--json"])
        .args(engine)
        .within(LIMIT)
        .run()
        .code(3)
        .stdout_json();
    let id = paused["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("no runId in {paused}"))
        .to_owned();
    // The run is the engine's: nothing of it in the project's own state directory.
    let local = p.args(["runs", "--json"]).run().success().stdout_json();
    assert_eq!(local, serde_json::json!([]), "no local run");

    let ui = UiServer::start(&p, &engine);
    // /api/runs is what `spur runs --json` prints for the engine. The server adds a run to
    // its list a moment after it starts, so the entry is compared once both list it.
    let cli_entry = || {
        let cli = p
            .args(["runs", "--json"])
            .args(engine)
            .within(LIMIT)
            .run()
            .success()
            .stdout_json();
        cli.as_array()
            .into_iter()
            .flatten()
            .find(|r| r["runId"] == id.as_str())
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        eventually(|| !listed(&ui, &id).is_null() && !cli_entry().is_null()),
        "the run is listed"
    );
    assert_eq!(listed(&ui, &id), cli_entry());
    let api: Value = serde_json::from_str(&get(ui.addr, "/api/runs").body).unwrap_or_default();
    assert!(api.as_array().is_some(), "{api}");
    assert_eq!(listed(&ui, &id)["outcome"], "paused", "{api}");
    assert_eq!(listed(&ui, &id)["state"], "review", "{api}");
    // /api/runs/RUN is what `spur trace RUN --json` prints for the engine.
    let trace = p
        .args(["trace", &id, "--json"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    let api_run: Value =
        serde_json::from_str(&get(ui.addr, &format!("/api/runs/{id}")).body).unwrap_or_default();
    assert_eq!(api_run, trace);

    // The runs page lists it, paused, with a link to its page.
    let runs_page = get(ui.addr, "/");
    assert_eq!(runs_page.status, 200);
    assert!(
        runs_page.body.contains(&format!("data-run=\"{id}\"")),
        "{}",
        runs_page.body
    );
    assert!(
        runs_page.body.contains(&format!("href=\"/runs/{id}\"")),
        "{}",
        runs_page.body
    );

    // Its page: the graph with the state it is in, its question with the choices.
    let run_page = get(ui.addr, &format!("/runs/{id}"));
    assert_eq!(run_page.status, 200, "{}", run_page.body);
    let review = state_class(&run_page.body, "review");
    assert!(review.split(' ').any(|c| c == "current"), "{review}");
    let draft = state_class(&run_page.body, "draft");
    assert!(!draft.split(' ').any(|c| c == "current"), "{draft}");
    assert!(
        run_page.body.contains("data-choice=\"ship\""),
        "{}",
        run_page.body
    );
    // Adversarial: the run's title var (a `<script>` and an `<img onerror>`), which reaches
    // the page through the engine's records and the question, is text, never markup.
    for body in [&runs_page.body, &run_page.body] {
        assert!(!body.contains("<script>window.spurXss"), "{body}");
        assert!(!body.contains("<img src=x"), "{body}");
    }
    assert!(
        run_page.body.contains("&lt;script&gt;window.spurXss"),
        "the markup is shown as text: {}",
        run_page.body
    );

    // An answer the question does not take is refused and the run still waits.
    let csrf = run_page
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned();
    let host = ui.addr.to_string();
    let post = |form: String| {
        request(
            ui.addr,
            "POST",
            &format!("/runs/{id}/answer"),
            &[
                ("Host", host.as_str()),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            &form,
        )
    };
    let refused = post(format!("answer=maybe&csrf={csrf}"));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(listed(&ui, &id)["outcome"], "paused");

    // The page's event stream, opened before the answer, follows the run on the engine.
    let last_seq = api_run.as_array().map_or(0, Vec::len);
    let mut stream = TcpStream::connect(ui.addr).expect("connect");
    // A bound on a stuck stream; the events themselves are waited for, not timed.
    stream.set_read_timeout(Some(LIMIT)).expect("timeout");
    write!(
        stream,
        "GET /events?run={id}&after={last_seq} HTTP/1.1\r\nHost: {}\r\n\r\n",
        ui.addr
    )
    .expect("request");
    let mut events = BufReader::new(stream);
    let mut line = String::new();
    while events.read_line(&mut line).is_ok_and(|n| n > 0) && !line.starts_with(": spur ui") {
        line.clear();
    }

    // The answer from the page: the run goes on on the worker and finishes.
    let answered = post(format!("answer=ship&csrf={csrf}"));
    assert_eq!(answered.status, 303, "{}", answered.body);
    assert_eq!(
        answered.header("location"),
        Some(format!("/runs/{id}").as_str())
    );
    assert!(
        eventually(|| listed(&ui, &id)["outcome"] == "completed"),
        "the answered run did not finish: {}",
        listed(&ui, &id)
    );
    let mut seen: Vec<Value> = Vec::new();
    while !seen.iter().any(|e| e["event"] == "run-finished") {
        let mut line = String::new();
        assert!(
            events.read_line(&mut line).expect("an event") > 0,
            "the stream ended"
        );
        if let Some(data) = line.strip_prefix("data: ") {
            seen.push(serde_json::from_str(data).unwrap_or_default());
        }
    }
    let seqs: Vec<u64> = seen.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert_eq!(
        seqs.first().copied(),
        Some(last_seq as u64 + 1),
        "from the record after the page's last: {seqs:?}"
    );
    assert!(
        seqs.windows(2)
            .all(|w| w.get(1) == w.first().map(|a| a + 1).as_ref()),
        "each record once, in order: {seqs:?}"
    );
    assert!(seen.iter().all(|e| e["runId"] == id.as_str()));
    let finished = get(ui.addr, &format!("/runs/{id}"));
    let shipped = state_class(&finished.body, "shipped");
    assert!(shipped.split(' ').any(|c| c == "current"), "{shipped}");
    assert!(
        !finished.body.contains("data-choice=\"ship\""),
        "no question once answered: {}",
        finished.body
    );
    // The engine's own record of it, as `spur trace` reads it.
    let trace = p
        .args(["trace", &id, "--json"])
        .args(engine)
        .within(LIMIT)
        .run()
        .success()
        .stdout_json();
    let resumed: Vec<&Value> = trace
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["event"] == "resumed")
        .collect();
    assert_eq!(resumed.len(), 1, "{trace}");
    assert_eq!(
        resumed.first().map(|r| r["answer"].clone()),
        Some("ship".into())
    );
    // Who answered travels with the answer to the server and into its journal.
    let by = resumed.first().and_then(|r| r["answeredBy"].as_str());
    assert!(by.is_some_and(|w| w.contains("via spur ui")), "{trace}");
}

#[test]
fn the_ui_says_so_when_the_engine_cannot_be_reached() {
    let p = Spur::new();
    // A loopback port nothing listens on.
    let port = crate::common::restate::free_port();
    let ingress = format!("http://127.0.0.1:{port}");
    let ui = UiServer::start(&p, &["--engine", "restate", "--ingress", &ingress]);
    let page = get(ui.addr, "/");
    assert_eq!(page.status, 502, "{}", page.body);
    assert!(page.body.contains(&ingress), "{}", page.body);
    assert_eq!(get(ui.addr, "/api/runs").status, 502);
}
