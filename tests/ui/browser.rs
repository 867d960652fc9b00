//! In a real browser: the runs page lists a paused run, its page draws the graph with the
//! current state marked, its question's buttons answer it and the page shows it finished.
//! Screenshots of each step land in `target/ui-screenshots/`.

use super::server::UiServer;
use super::webdriver::Browser;
use super::{outcome, paused_project};
use crate::common::{events, eventually};

#[test]
fn a_paused_run_is_found_drawn_and_answered_from_the_page_until_it_finishes() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    let browser = Browser::start();

    browser.open(&ui.url("/"));
    let row = browser.find(&format!("tr[data-run=\"{id}\"]"));
    let row_text = browser.text(&row);
    assert!(
        row_text.contains("approve") && row_text.contains("paused"),
        "{row_text}"
    );
    browser.screenshot("runs");

    let link = browser.find(&format!("tr[data-run=\"{id}\"] a"));
    browser.click(&link);
    browser.find("#graph svg g.state.current");
    assert_eq!(
        browser.script("return document.querySelector('#graph svg g.state.current').getAttribute('data-state')"),
        "review",
        "the graph marks the state the run is in"
    );
    assert_eq!(
        browser.find_all("#graph svg g.edge.taken").len(),
        1,
        "one transition taken so far: draft → review"
    );
    let prompt = browser.text(&browser.find("#prompt"));
    assert!(
        prompt.contains("<script>"),
        "the prompt's markup is shown as text: {prompt}"
    );
    assert_eq!(
        browser.script("return window.spurXss === undefined"),
        true,
        "no markup from the run's vars ran in the page"
    );
    browser.screenshot("run-paused");

    browser.click(&browser.find("button[data-choice=\"ship\"]"));
    browser.find("span.badge[data-outcome=\"completed\"]");
    assert_eq!(
        browser.script("return document.querySelector('#graph svg g.state.current').getAttribute('data-state')"),
        "shipped"
    );
    assert!(
        browser.find_all("#question").is_empty(),
        "no question once answered"
    );
    browser.screenshot("run-finished");

    assert!(eventually(|| outcome(&project, &id) == "completed"));
    let trace = project.trace(&id);
    let resumed = events(&trace, "resumed")
        .first()
        .copied()
        .unwrap_or_else(|| panic!("no resumed record in {trace:?}"));
    assert_eq!(resumed["answer"], "ship");
    assert!(
        resumed["answeredBy"]
            .as_str()
            .is_some_and(|w| w.contains("via spur ui from 127.0.0.1")),
        "the answer says who gave it: {resumed}"
    );
}

#[test]
fn an_open_runs_page_follows_a_run_live_when_it_is_answered_elsewhere() {
    let (project, id) = paused_project();
    let ui = UiServer::start(&project, &[]);
    let browser = Browser::start();
    browser.open(&ui.url("/"));
    browser.find(&format!(
        "tr[data-run=\"{id}\"] span.badge[data-outcome=\"paused\"]"
    ));
    // Answered on the command line: the page learns of it from the event stream alone.
    project
        .args(["continue", &id, "--answer", "ship"])
        .run()
        .success();
    browser.find(&format!(
        "tr[data-run=\"{id}\"] span.badge[data-outcome=\"completed\"]"
    ));
    browser.open(&ui.url(&format!("/runs/{id}")));
    browser.find("span.badge[data-outcome=\"completed\"]");
}
