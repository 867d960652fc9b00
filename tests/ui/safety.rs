//! What the server refuses: another Host (DNS rebinding), an answer without the form's
//! CSRF token, with a wrong one or from another origin, a request without the token cookie
//! under `--token`, a non-loopback address without `--token`; and markup from files,
//! which reaches pages as text.

use super::http::{get, request, Reply};
use super::server::UiServer;
use super::{outcome, paused_project};
use crate::common::Spur;

/// The CSRF token in the run page's answer form.
fn csrf_of(ui: &UiServer, id: &str) -> String {
    let page = get(ui.addr, &format!("/runs/{id}"));
    let start = page
        .body
        .find("name=\"csrf\" value=\"")
        .map(|i| i + "name=\"csrf\" value=\"".len())
        .unwrap_or_else(|| panic!("no csrf field in {}", page.body));
    page.body[start..]
        .split('"')
        .next()
        .unwrap_or("")
        .to_owned()
}

fn post_answer(ui: &UiServer, id: &str, form: &str, extra: &[(&str, &str)]) -> Reply {
    let host = ui.addr.to_string();
    let mut headers = vec![
        ("Host", host.as_str()),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    headers.extend_from_slice(extra);
    request(
        ui.addr,
        "POST",
        &format!("/runs/{id}/answer"),
        &headers,
        form,
    )
}

#[test]
fn a_request_naming_another_host_is_refused_on_every_route() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    for path in [
        "/",
        &format!("/runs/{id}"),
        "/api/runs",
        "/events",
        "/tasks",
    ] {
        for host in [
            "evil.example",
            "evil.example:80",
            &format!("rebind.example:{}", ui.addr.port()),
        ] {
            let reply = request(ui.addr, "GET", path, &[("Host", host)], "");
            assert_eq!(reply.status, 421, "{path} with Host {host}: {}", reply.body);
            assert!(
                !reply.body.contains(&id),
                "nothing of the state leaks: {}",
                reply.body
            );
        }
    }
    let no_host = request(ui.addr, "GET", "/", &[], "");
    assert_eq!(no_host.status, 421);
    let localhost = request(
        ui.addr,
        "GET",
        "/",
        &[("Host", &format!("localhost:{}", ui.addr.port()))],
        "",
    );
    assert_eq!(
        localhost.status, 200,
        "localhost names a loopback server too"
    );
}

#[test]
fn an_answer_without_the_right_csrf_token_or_from_another_origin_is_refused_and_changes_nothing() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    let csrf = csrf_of(&ui, &id);
    assert_eq!(csrf.len(), 64, "a 32-byte random token: {csrf}");
    let wrong: String = csrf.chars().rev().collect();
    for (form, extra) in [
        ("answer=ship".to_owned(), vec![]),
        (format!("answer=ship&csrf={wrong}"), vec![]),
        ("answer=ship&csrf=".to_owned(), vec![]),
        (
            format!("answer=ship&csrf={csrf}"),
            vec![("Origin", "http://evil.example")],
        ),
    ] {
        let reply = post_answer(&ui, &id, &form, &extra);
        assert_eq!(reply.status, 403, "{form} {extra:?}: {}", reply.body);
    }
    assert_eq!(
        outcome(&project, &id),
        "paused",
        "no refused answer reached the run"
    );
    assert!(
        !project
            .read(&format!(".spur/runs/{id}/journal.jsonl"))
            .contains("\"resumed\""),
        "nothing was journaled"
    );

    let not_a_choice = post_answer(&ui, &id, &format!("answer=maybe&csrf={csrf}"), &[]);
    assert_eq!(not_a_choice.status, 400);
    assert!(
        not_a_choice
            .body
            .contains("is not one of: ship, rework, cancel"),
        "{}",
        not_a_choice.body
    );
    assert_eq!(outcome(&project, &id), "paused");

    let origin = format!("http://{}", ui.addr);
    let taken = post_answer(
        &ui,
        &id,
        &format!("answer=ship&csrf={csrf}"),
        &[("Origin", &origin)],
    );
    assert_eq!(taken.status, 303, "{}", taken.body);
    assert_eq!(
        taken.header("location"),
        Some(format!("/runs/{id}").as_str())
    );
    assert_eq!(outcome(&project, &id), "completed");
}

#[test]
fn markup_in_vars_prompts_and_logs_reaches_every_page_as_text() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    let run = get(ui.addr, &format!("/runs/{id}"));
    assert_eq!(run.status, 200);
    for hostile in ["<script>window.spurXss", "<img src=x", "<b><script>"] {
        assert!(
            !run.body.contains(hostile),
            "{hostile} unescaped in the run page"
        );
    }
    assert!(run
        .body
        .contains("&lt;script&gt;window.spurXss = 1&lt;/script&gt;"));
    let svg = get(ui.addr, &format!("/runs/{id}/graph.svg"));
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    assert!(svg.body.contains("data-state=\"review\""));
    assert!(
        run.header("content-security-policy")
            .is_some_and(|p| p.contains("script-src 'self'")),
        "inline script is refused by policy too"
    );
}

#[test]
fn a_hostile_task_title_is_escaped_on_the_board() {
    let project = Spur::new();
    project.args(["init"]).run().success();
    project
        .args(["task", "create", "<script>window.spurXss=1</script> & co"])
        .run()
        .success();
    let ui = UiServer::start(&project, &[]);
    let board = get(ui.addr, "/tasks");
    assert_eq!(board.status, 200, "{}", board.body);
    assert!(
        !board.body.contains("<script>window.spurXss"),
        "{}",
        board.body
    );
    assert!(
        board
            .body
            .contains("&lt;script&gt;window.spurXss=1&lt;/script&gt; &amp; co"),
        "{}",
        board.body
    );
}

#[test]
fn with_a_token_every_request_needs_the_cookie_the_one_time_url_sets() {
    let (project, _) = paused_project();
    let ui = UiServer::start(&project, &["--token"]);
    let login = ui
        .login_path
        .clone()
        .expect("spur ui --token prints a login URL");
    let host = ui.addr.to_string();
    for path in ["/", "/api/runs", "/events"] {
        assert_eq!(get(ui.addr, path).status, 401, "{path} without the cookie");
    }
    let logged_in = get(ui.addr, &login);
    assert_eq!(logged_in.status, 303);
    let cookie = logged_in
        .header("set-cookie")
        .expect("a cookie")
        .split(';')
        .next()
        .unwrap_or("")
        .to_owned();
    assert!(logged_in
        .header("set-cookie")
        .is_some_and(|c| c.contains("HttpOnly") && c.contains("SameSite=Strict")));
    assert_eq!(get(ui.addr, &login).status, 403, "the login URL works once");
    let with = request(
        ui.addr,
        "GET",
        "/",
        &[("Host", &host), ("Cookie", &cookie)],
        "",
    );
    assert_eq!(with.status, 200);
    let forged = request(
        ui.addr,
        "GET",
        "/",
        &[("Host", &host), ("Cookie", "spur_ui_token=00")],
        "",
    );
    assert_eq!(forged.status, 401);
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    Spur::new()
        .args(["ui", "--listen", "0.0.0.0:0"])
        .run()
        .code(2)
        .stderr_contains("spur::ui::cannot-serve")
        .stderr_contains("only with --token");
}
