//! The calls of a client of the engine: start a run, wait for its reply, answer its pause,
//! ask whether it is paused (ingress); register a worker (admin). Blocking HTTP (ureq).

use spur_engine::run::journal::Record;

use crate::protocol::{RunReply, RunRequest, RunStatus};

/// A call to the engine failed: the URL and why.
#[derive(Debug)]
pub struct ClientError(pub String);

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// POST `body` (JSON; none when empty: a handler without input takes no content type).
fn post(url: &str, body: &str) -> Result<String, ClientError> {
    let fail = |why: String| ClientError(format!("POST {url}: {why}"));
    let request = agent().post(url);
    let sent = if body.is_empty() {
        request.send_empty()
    } else {
        request
            .header("content-type", "application/json")
            .send(body)
    };
    let mut response = sent.map_err(|e| fail(e.to_string()))?;
    let status = response.status();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| fail(e.to_string()))?;
    if !status.is_success() {
        return Err(fail(format!("{status}: {}", text.trim())));
    }
    Ok(text)
}

fn get(url: &str) -> Result<String, ClientError> {
    let fail = |why: String| ClientError(format!("GET {url}: {why}"));
    let mut response = agent().get(url).call().map_err(|e| fail(e.to_string()))?;
    let status = response.status();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| fail(e.to_string()))?;
    if !status.is_success() {
        return Err(fail(format!("{status}: {}", text.trim())));
    }
    Ok(text)
}

fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

/// Start run `run_id` of `request` and return at once.
pub fn submit(ingress: &str, run_id: &str, request: &RunRequest) -> Result<(), ClientError> {
    let body = serde_json::to_string(request).map_err(|e| ClientError(e.to_string()))?;
    post(
        &format!("{}/SpurRun/{run_id}/run/send", base(ingress)),
        &body,
    )
    .map(|_| ())
}

/// Wait for run `run_id` to end and read its reply.
pub fn wait(ingress: &str, run_id: &str) -> Result<RunReply, ClientError> {
    let text = get(&format!(
        "{}/restate/workflow/SpurRun/{run_id}/attach",
        base(ingress)
    ))?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the run's reply: {e}")))
}

/// Answer the pause run `run_id` waits at.
pub fn answer(
    ingress: &str,
    run_id: &str,
    answer: &str,
    answered_by: Option<&str>,
) -> Result<(), ClientError> {
    let body = serde_json::to_string(&spur_engine::run::PauseAnswer {
        answer: answer.to_owned(),
        answered_by: answered_by.map(str::to_owned),
    })
    .map_err(|e| ClientError(e.to_string()))?;
    post(&format!("{}/SpurRun/{run_id}/answer", base(ingress)), &body).map(|_| ())
}

/// Whether run `run_id` waits at a pause.
pub fn status(ingress: &str, run_id: &str) -> Result<RunStatus, ClientError> {
    let text = post(&format!("{}/SpurRun/{run_id}/status", base(ingress)), "")?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the run's status: {e}")))
}

/// Register the worker endpoint `uri` with the server's admin API (again if it was).
pub fn register(admin: &str, uri: &str) -> Result<String, ClientError> {
    let body = serde_json::json!({ "uri": uri, "force": true }).to_string();
    post(&format!("{}/deployments", base(admin)), &body)
}

/// The journal records of run `run_id` so far (none when the engine does not know it).
pub fn records(ingress: &str, run_id: &str) -> Result<Vec<Record>, ClientError> {
    let text = post(&format!("{}/SpurRun/{run_id}/records", base(ingress)), "")?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the run's records: {e}")))
}

/// The ids of the runs sent to the engine, oldest first.
pub fn runs(ingress: &str) -> Result<Vec<String>, ClientError> {
    let text = post(
        &format!("{}/Runs/{}/list", base(ingress), crate::runs::ALL),
        "",
    )?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the engine's runs: {e}")))
}

/// Task `wbs`'s records on the engine: its ledger's lines and verdict artifact.
pub fn task_records(ingress: &str, wbs: &str) -> Result<crate::task::TaskRecords, ClientError> {
    let text = post(&format!("{}/Task/{wbs}/records", base(ingress)), "")?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("task {wbs}'s records: {e}")))
}

/// The audit chain's lines on the engine.
pub fn audit_lines(ingress: &str) -> Result<Vec<String>, ClientError> {
    let text = post(
        &format!("{}/Audit/{}/lines", base(ingress), crate::audit::ALL),
        "",
    )?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the audit chain: {e}")))
}

/// The tasks whose ledgers the engine holds.
pub fn tasks(ingress: &str) -> Result<Vec<String>, ClientError> {
    let text = post(
        &format!("{}/Audit/{}/tasks", base(ingress), crate::audit::ALL),
        "",
    )?;
    serde_json::from_str(&text).map_err(|e| ClientError(format!("the engine's tasks: {e}")))
}
