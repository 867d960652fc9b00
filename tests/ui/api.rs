//! The JSON API has the CLI's `--json` shapes, and `/events` pushes journal records as
//! they are written.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use super::http::get;
use super::paused_project;
use super::server::UiServer;

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
fn the_api_answers_what_the_cli_prints_with_json() {
    let (project, id) = paused_project();
    project.args(["init"]).run().success();
    project.args(["task", "create", "a task"]).run().success();
    let ui = UiServer::start(&project, &[]);
    let cli = |args: &[&str]| project.args(args).run().stdout_json();
    assert_eq!(
        json(&get(ui.addr, "/api/runs").body),
        cli(&["runs", "--json"])
    );
    assert_eq!(
        json(&get(ui.addr, &format!("/api/runs/{id}")).body),
        cli(&["trace", &id, "--json"])
    );
    assert_eq!(
        json(&get(ui.addr, "/api/tasks").body),
        cli(&["task", "list", "--json"])
    );
    assert_eq!(
        json(&get(ui.addr, "/api/audit").body),
        cli(&["audit", "list", "--json"])
    );
    assert_eq!(get(ui.addr, "/api/runs/not-a-run").status, 404);
    assert_eq!(get(ui.addr, "/no/such/page").status, 404);
}

#[test]
fn events_push_each_record_a_run_writes_after_the_page_was_rendered() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    let last_seq = project.trace(&id).len();
    let mut stream = TcpStream::connect(ui.addr).expect("connect");
    // A bound on a stuck stream; the events themselves are waited for, not timed.
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    write!(
        stream,
        "GET /events?run={id}&after={last_seq} HTTP/1.1\r\nHost: {}\r\n\r\n",
        ui.addr
    )
    .expect("request");
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).expect("status");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // Headers, then the stream's opening comment.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && !line.starts_with(": spur ui") {
        line.clear();
    }
    project
        .args(["continue", &id, "--answer", "ship"])
        .run()
        .success();
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &Value| e["event"] == "run-finished") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).expect("an event") > 0,
            "the stream ended"
        );
        if let Some(data) = line.strip_prefix("data: ") {
            seen.push(json(data));
        }
    }
    assert_eq!(
        seen.first().map(|e| e["event"].clone()),
        Some("resumed".into())
    );
    assert_eq!(
        seen.first().map(|e| e["seq"].clone()),
        Some((last_seq as u64 + 1).into())
    );
    assert!(seen.iter().all(|e| e["runId"] == id.as_str()));
    let seqs: Vec<u64> = seen.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "each record once, in order: {seqs:?}"
    );
}

/// A `pause: true` state is continued with no answer, an `hitl.input` with free text; both
/// through the form, both recorded with who gave them.
#[test]
fn a_pause_state_and_a_free_text_question_are_answered_through_the_form() {
    let project = crate::common::Spur::new().file(
        "p.yaml",
        "name: two-pauses\ninitialState: hold\n\
         states:\n\
         \x20 - {id: hold, pause: true}\n\
         \x20 - id: ask\n\
         \x20   onEnter: [{kind: hitl.input, options: {prompt: 'Name?', var: who}}]\n\
         \x20 - {id: end}\n\
         transitions:\n\
         \x20 - {from: hold, to: ask}\n\
         \x20 - {from: ask, to: end}\n",
    );
    let paused = project
        .args(["run", "p.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let id = paused["runId"].as_str().unwrap_or_default().to_owned();
    let ui = UiServer::start(&project, &[]);
    let page = get(ui.addr, &format!("/runs/{id}"));
    assert!(page.body.contains("for the operator"), "{}", page.body);
    let csrf = page
        .body
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned();
    let post = |form: String| {
        super::http::request(
            ui.addr,
            "POST",
            &format!("/runs/{id}/answer"),
            &[
                ("Host", &ui.addr.to_string()),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            &form,
        )
    };
    assert_eq!(post(format!("answer=&csrf={csrf}")).status, 303);
    assert_eq!(
        super::outcome(&project, &id),
        "paused",
        "now on the question"
    );
    let page = get(ui.addr, &format!("/runs/{id}"));
    assert!(page.body.contains("id=\"answer-text\""), "{}", page.body);
    assert_eq!(post(format!("answer=Ada+%3CL%3E&csrf={csrf}")).status, 303);
    assert_eq!(super::outcome(&project, &id), "completed");
    let trace = project.trace(&id);
    let resumed = crate::common::events(&trace, "resumed");
    assert_eq!(resumed.len(), 2, "{trace:?}");
    assert!(resumed.iter().all(|r| r["answeredBy"]
        .as_str()
        .is_some_and(|w| w.contains("via spur ui"))));
    assert_eq!(
        resumed.get(1).map(|r| r["answer"].clone()),
        Some("Ada <L>".into())
    );
}
