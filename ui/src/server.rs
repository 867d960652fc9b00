//! The HTTP server: tiny_http, synchronous, a thread per request (an event stream keeps
//! its thread while the page is open; at most [`MAX_THREADS`] at once). Every request is
//! checked by `access` before it is routed; only `POST /runs/RUN/answer` writes.
//!
//! Routes (stable): `/` the runs, `/runs/RUN` one run, `/runs/RUN/graph.svg`, `/tasks`,
//! `/audit`, `POST /runs/RUN/answer` (form fields `answer` and `csrf`), `/events` (SSE),
//! `/api/runs`, `/api/runs/RUN`, `/api/tasks`, `/api/audit` (the CLI's `--json` shapes of
//! `spur runs`, `spur trace RUN`, `spur task list`, `spur audit list`), `/login/NONCE`
//! (with `--token`), `/ui.js`.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use spur_engine::graph::{to_svg, TransitionGraph};
use spur_engine::pipeline;
use spur_engine::run::journal::Record;
use spur_engine::run::question::pending;
use spur_engine::run::runs_list::{run_path, summary_of};
use spur_engine::run::RunId;
use spur_engine::store::certification::check_all;
use spur_engine::store::state_dir::StateDir;
use tiny_http::{Header, Method, Request, Response};

use crate::access::{Access, Refusal, COOKIE};
use crate::html::{escape, page, Section, SCRIPT};
use crate::runs_page::{render_runs_page, RunFilter};
use crate::source::{self, Engine};
use crate::{answer, audit_page, cli_json, events, form, run_page, tasks_page};

/// Most requests served at once (event streams included).
const MAX_THREADS: usize = 64;
/// Largest form body read.
const MAX_FORM_BYTES: u64 = 64 * 1024;

/// What `spur ui` serves, and where.
#[derive(Debug, Clone)]
pub struct UiConfig {
    /// Where to listen (port 0: any free port).
    pub listen: SocketAddr,
    /// The state directory shown (its tasks and audit log; its runs when `engine` is local).
    pub state_dir: StateDir,
    /// Whose runs are shown and answered: the state directory's, or a Restate server's.
    pub engine: Engine,
    /// The `spur` binary that answers (`spur continue`) and lists (`--json`).
    pub spur_exe: PathBuf,
    /// Require the token cookie (set from a one-time URL). Off loopback it is required.
    pub token: bool,
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// A non-loopback address without `--token`.
    #[error(
        "spur ui listens on {0} only with --token: any machine that can reach it could answer runs"
    )]
    NeedsToken(SocketAddr),
    /// The address cannot be bound.
    #[error("cannot listen on {address}: {why}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        why: String,
    },
    /// No randomness for the CSRF token.
    #[error("cannot make a CSRF token: the system gives no random bytes")]
    NoRandomness,
}

/// A bound server, not yet serving.
pub struct Ui {
    server: tiny_http::Server,
    shared: Arc<Shared>,
}

struct Shared {
    state_dir: StateDir,
    engine: Engine,
    spur_exe: PathBuf,
    access: Access,
    address: SocketAddr,
    busy: AtomicUsize,
}

impl Ui {
    /// Bind the address of `config`.
    pub fn bind(config: UiConfig) -> Result<Ui, UiError> {
        if !config.listen.ip().is_loopback() && !config.token {
            return Err(UiError::NeedsToken(config.listen));
        }
        let server = tiny_http::Server::http(config.listen).map_err(|e| UiError::Bind {
            address: config.listen,
            why: e.to_string(),
        })?;
        let address = server.server_addr().to_ip().unwrap_or(config.listen);
        let access = Access::new(address, config.token);
        if access.csrf().is_empty() {
            return Err(UiError::NoRandomness);
        }
        Ok(Ui {
            server,
            shared: Arc::new(Shared {
                state_dir: config.state_dir,
                engine: config.engine,
                spur_exe: config.spur_exe,
                access,
                address,
                busy: AtomicUsize::new(0),
            }),
        })
    }

    /// The address it is bound to.
    pub fn address(&self) -> SocketAddr {
        self.shared.address
    }

    /// With a token: the one-time URL that logs a browser in.
    pub fn login_url(&self) -> Option<String> {
        self.shared
            .access
            .login_path()
            .map(|p| format!("http://{}{p}", self.shared.address))
    }

    /// Serve until the process ends.
    pub fn run(self) {
        for request in self.server.incoming_requests() {
            let shared = Arc::clone(&self.shared);
            if shared.busy.fetch_add(1, Ordering::SeqCst) >= MAX_THREADS {
                shared.busy.fetch_sub(1, Ordering::SeqCst);
                let _ = request.respond(text(503, "too many requests at once"));
                continue;
            }
            std::thread::spawn(move || {
                handle(&shared, request);
                shared.busy.fetch_sub(1, Ordering::SeqCst);
            });
        }
    }
}

type Body = Response<std::io::Cursor<Vec<u8>>>;

fn header(request: &Request, name: &str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_owned())
}

fn with_headers(response: Body, content_type: &str) -> Body {
    let mut response = response;
    for (k, v) in [
        ("Content-Type", content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "same-origin"),
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    ] {
        if let Ok(h) = Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            response = response.with_header(h);
        }
    }
    response
}

fn text(status: u16, message: &str) -> Body {
    with_headers(
        Response::from_string(format!("{message}\n")).with_status_code(status),
        "text/plain; charset=utf-8",
    )
}

fn html(status: u16, body: String) -> Body {
    with_headers(
        Response::from_string(body).with_status_code(status),
        "text/html; charset=utf-8",
    )
}

fn json(value: &impl serde::Serialize) -> Body {
    let body = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    with_headers(
        Response::from_string(body),
        "application/json; charset=utf-8",
    )
}

fn redirect(location: &str) -> Body {
    let mut response = text(303, "see other");
    if let Ok(h) = Header::from_bytes(&b"Location"[..], location.as_bytes()) {
        response = response.with_header(h);
    }
    response
}

fn not_found(what: &str) -> Body {
    html(
        404,
        page(
            Section::Runs,
            "Not found",
            &format!("<h1>Not found</h1><p>{}</p>", escape(what)),
            None,
        ),
    )
}

fn handle(shared: &Shared, mut request: Request) {
    let host = header(&request, "Host");
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let path = path.to_owned();
    let query = query.to_owned();
    if let Some(nonce) = path.strip_prefix("/login/") {
        if !shared.access.host_ok(host.as_deref()) {
            let _ = request.respond(text(
                421,
                "refused: the Host header is not this server's address",
            ));
            return;
        }
        let response = match shared.access.log_in(nonce) {
            Some(token) => {
                let cookie = format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
                let mut r = redirect("/");
                if let Ok(h) = Header::from_bytes(&b"Set-Cookie"[..], cookie.as_bytes()) {
                    r = r.with_header(h);
                }
                r
            }
            None => text(
                403,
                "this login link was used already or is not this server's",
            ),
        };
        let _ = request.respond(response);
        return;
    }
    match shared
        .access
        .admit(host.as_deref(), header(&request, "Cookie").as_deref())
    {
        Ok(()) => {}
        Err(Refusal::Host(h)) => {
            let _ = request.respond(text(
                421,
                &format!("refused: Host {h:?} is not this server's address (DNS rebinding?)"),
            ));
            return;
        }
        Err(Refusal::Token) => {
            let _ = request.respond(text(
                401,
                "refused: open the one-time login URL spur ui printed first",
            ));
            return;
        }
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let method = request.method().clone();
    let response = match (&method, segments.as_slice()) {
        (Method::Get, [""]) => runs(shared, &query),
        (Method::Get, ["ui.js"]) => with_headers(
            Response::from_string(SCRIPT),
            "text/javascript; charset=utf-8",
        ),
        (Method::Get, ["runs", id]) => run(shared, id, None),
        (Method::Get, ["runs", id, "graph.svg"]) => graph(shared, id),
        (Method::Post, ["runs", id, "answer"]) => {
            let peer = request
                .remote_addr()
                .map_or_else(|| "?".to_owned(), ToString::to_string);
            let origin = header(&request, "Origin");
            let mut body = Vec::new();
            let read = request
                .as_reader()
                .take(MAX_FORM_BYTES)
                .read_to_end(&mut body);
            match read {
                Ok(_) => answer_post(shared, id, &body, origin.as_deref(), &peer),
                Err(_) => text(400, "cannot read the form"),
            }
        }
        (Method::Get, ["tasks"]) => tasks(shared),
        (Method::Get, ["audit"]) => audit(shared),
        (Method::Get, ["events"]) => {
            let follow = follow(&query);
            let mut out = request.into_writer();
            events::stream(&mut *out, &shared.state_dir, &shared.engine, follow);
            return;
        }
        (Method::Get, ["api", "runs"]) => match source::list(&shared.state_dir, &shared.engine) {
            Ok(runs) => json(&runs),
            Err(e) => text(502, &e),
        },
        (Method::Get, ["api", "runs", id]) => match RunId::parse(id)
            .ok()
            .and_then(|id| source::read(&shared.state_dir, &shared.engine, &id).ok())
        {
            Some(content) => json(&content.records),
            None => text(404, "no such run"),
        },
        (Method::Get, ["api", "tasks"]) => {
            match cli_json::spur_json(
                &shared.spur_exe,
                &shared.state_dir,
                &["task", "list", "--json"],
            ) {
                Ok(v) => json(&v),
                Err(e) => text(500, &e),
            }
        }
        (Method::Get, ["api", "audit"]) => {
            match cli_json::spur_json(
                &shared.spur_exe,
                &shared.state_dir,
                &["audit", "list", "--json"],
            ) {
                Ok(v) => json(&v),
                Err(e) => text(500, &e),
            }
        }
        (Method::Get | Method::Post, _) => not_found(&format!("no page at {path}")),
        _ => text(405, "only GET, and POST for an answer"),
    };
    let _ = request.respond(response);
}

fn follow(query: &str) -> events::Follow {
    let pairs = form::pairs(query);
    match form::value(&pairs, "run").and_then(|r| RunId::parse(r).ok()) {
        Some(id) => events::Follow::Run {
            id,
            after: form::value(&pairs, "after")
                .and_then(|a| a.parse().ok())
                .unwrap_or(0),
        },
        None => events::Follow::All,
    }
}

fn runs(shared: &Shared, query: &str) -> Body {
    let runs = match source::list(&shared.state_dir, &shared.engine) {
        Ok(runs) => runs,
        Err(e) => {
            return html(
                502,
                page(
                    Section::Runs,
                    "Runs",
                    &format!("<h1>Runs</h1><p class=\"bad\">{}</p>", escape(&e)),
                    None,
                ),
            )
        }
    };
    html(
        200,
        render_runs_page(&runs, &RunFilter::from_query(query), jiff::Timestamp::now()),
    )
}

fn run(shared: &Shared, id: &str, answer_error: Option<String>) -> Body {
    let Ok(run_id) = RunId::parse(id) else {
        return not_found("not a run id");
    };
    let content = match source::read(&shared.state_dir, &shared.engine, &run_id) {
        Ok(c) => c,
        Err(e) => return not_found(&e),
    };
    let Some(summary) = summary_of(&run_id, &content.records) else {
        return not_found("the journal does not start with run-started");
    };
    let loaded = load_pipeline(shared, &run_id, &content.records);
    let graph = loaded.as_ref().map(|p| {
        let graph = TransitionGraph::new(p);
        to_svg(p, &graph, run_path(&content.records).as_ref())
    });
    let pending = loaded
        .as_ref()
        .ok()
        .and_then(|p| pending(p, &content.records, run_id.as_str()));
    let run_dir = shared.state_dir.runs_dir().join(run_id.as_str());
    let view = run_page::RunView {
        summary: &summary,
        records: &content.records,
        graph: graph.map_err(Clone::clone),
        pending,
        journal_note: content.journal_note,
        run_dir: &run_dir,
        csrf: shared.access.csrf(),
        answer_error: answer_error.clone(),
    };
    html(
        if answer_error.is_some() { 400 } else { 200 },
        run_page::render(&view),
    )
}

/// The run's pipeline as recorded in its journal, loaded (a file with errors is not drawn).
fn load_pipeline(
    shared: &Shared,
    run_id: &RunId,
    records: &[Record],
) -> Result<pipeline::Pipeline, String> {
    let path = source::pipeline_path(&shared.state_dir, &shared.engine, run_id, records)?;
    let source = pipeline::read_source(&path).map_err(|e| e.to_string())?;
    let loaded = pipeline::load(&source).map_err(|e| e.to_string())?;
    if loaded.diagnostics.iter().any(|d| d.is_error()) {
        return Err(format!("{} has errors (see `spur check`)", path.display()));
    }
    Ok(loaded.pipeline)
}

fn graph(shared: &Shared, id: &str) -> Body {
    let Ok(run_id) = RunId::parse(id) else {
        return text(404, "not a run id");
    };
    let Ok(content) = source::read(&shared.state_dir, &shared.engine, &run_id) else {
        return text(404, "no such run");
    };
    match load_pipeline(shared, &run_id, &content.records) {
        Ok(p) => {
            let graph = TransitionGraph::new(&p);
            with_headers(
                Response::from_string(to_svg(&p, &graph, run_path(&content.records).as_ref())),
                "image/svg+xml",
            )
        }
        Err(e) => text(404, &e),
    }
}

fn answer_post(shared: &Shared, id: &str, body: &[u8], origin: Option<&str>, peer: &str) -> Body {
    let Ok(run_id) = RunId::parse(id) else {
        return text(404, "not a run id");
    };
    let pairs = form::pairs(&String::from_utf8_lossy(body));
    if !shared.access.csrf_ok(form::value(&pairs, "csrf"), origin) {
        return text(
            403,
            "refused: the form's CSRF token is missing or wrong (reload the page)",
        );
    }
    let Ok(content) = source::read(&shared.state_dir, &shared.engine, &run_id) else {
        return text(404, "no such run");
    };
    let pipeline = match load_pipeline(shared, &run_id, &content.records) {
        Ok(p) => p,
        Err(e) => return run(shared, id, Some(e)),
    };
    let Some(waiting) = pending(&pipeline, &content.records, run_id.as_str()) else {
        return run(
            shared,
            id,
            Some("this run is not waiting for an answer".into()),
        );
    };
    let given = form::value(&pairs, "answer").unwrap_or("");
    let answer = match &waiting.question {
        Some(q) => match q.answer_for(given) {
            Some(a) => Some(a),
            None => {
                return run(
                    shared,
                    id,
                    Some(format!(
                        "{given:?} is not one of: {}",
                        q.shown_choices(", ")
                    )),
                )
            }
        },
        None => None,
    };
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let who = format!("{user} via spur ui from {peer}");
    match answer::give(
        &shared.spur_exe,
        &shared.state_dir,
        &shared.engine,
        run_id.as_str(),
        answer.as_deref(),
        &who,
    ) {
        Ok(()) => redirect(&format!("/runs/{}", run_id.as_str())),
        Err(said) => run(shared, id, Some(format!("spur continue refused: {said}"))),
    }
}

fn tasks(shared: &Shared) -> Body {
    match cli_json::spur_json(
        &shared.spur_exe,
        &shared.state_dir,
        &["task", "list", "--json"],
    ) {
        Ok(list) => html(
            200,
            tasks_page::render(&list, &check_all(&shared.state_dir), &shared.state_dir),
        ),
        Err(e) => html(
            500,
            page(
                Section::Tasks,
                "Tasks",
                &format!("<h1>Tasks</h1><p class=\"bad\">{}</p>", escape(&e)),
                None,
            ),
        ),
    }
}

fn audit(shared: &Shared) -> Body {
    let verify = cli_json::spur_json(
        &shared.spur_exe,
        &shared.state_dir,
        &["audit", "verify", "--json"],
    );
    let list = cli_json::spur_json(
        &shared.spur_exe,
        &shared.state_dir,
        &["audit", "list", "--json"],
    );
    html(200, audit_page::render(&verify, &list))
}
