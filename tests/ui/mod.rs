//! `spur ui`: the server started as `spur ui --listen 127.0.0.1:0` in a temp project, spoken
//! to over raw HTTP (so a test can send any Host, Origin or form it likes) and through a
//! real headless Chromium driven over the W3C WebDriver protocol.

mod api;
mod board;
mod browser;
mod fleet;
mod http;
mod safety;
mod server;
mod webdriver;

/// A pipeline that pauses on an `hitl.select` in `review`; `ship` ends it in `shipped`. Its
/// `title` var and its prompt carry markup that must reach pages as text.
const APPROVE: &str = r#"name: approve
initialState: draft
vars:
  title: "<script>window.spurXss = 1</script><img src=x onerror=\"window.spurXss = 2\">"
states:
  - id: draft
    onEnter:
      - kind: shell
        options:
          command: echo "drafting ${vars.title}"
  - id: review
    onEnter:
      - kind: hitl.select
        options:
          prompt: "Ship <b>${vars.title}</b>?"
          options: [ship, rework]
          var: choice
  - id: shipped
  - id: failed
terminalStates: [shipped, failed]
failureStates: [failed]
transitions:
  - {from: draft, to: review, guard: {kind: always}}
  - {from: review, to: shipped, guard: {kind: jq, options: {expr: '.vars.choice == "ship"'}}}
  - {from: review, to: failed}
"#;

/// A project with one run of [`APPROVE`] paused in `review`; its run id.
fn paused_project() -> (crate::common::Spur, String) {
    let project = crate::common::Spur::new().file("approve.yaml", APPROVE);
    let paused = project
        .args(["run", "approve.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let id = paused["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("no runId in {paused}"))
        .to_owned();
    (project, id)
}

/// The outcome `spur runs --json` gives the run `id`.
fn outcome(project: &crate::common::Spur, id: &str) -> String {
    let runs = project.args(["runs"]).json().run().success().stdout_json();
    runs.as_array()
        .into_iter()
        .flatten()
        .find(|r| r["runId"] == id)
        .and_then(|r| r["outcome"].as_str())
        .unwrap_or("")
        .to_owned()
}
