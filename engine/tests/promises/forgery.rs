//! Non-bypass against a forger: the generated pipelines of `non_bypass`, with a step that
//! writes what it should not — a task view that says done, a done record in the task
//! ledger that does not chain, records in the run's journal (garbage, unchained, chained by
//! plain sha256 as spur chained them before keyed chains, or sealed with the key exactly as
//! spur seals them: a step that read the key file) — after which the run is "killed" right
//! behind the forgery and resumed. Whatever was forged, a task ends done only through a recomputed PASS or an
//! audited force. The oracle is this test's own record of what it forged and of the
//! artifact it wrote, never spur's output.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use serde_json::{json, Value};
use spur_engine::run::{Outcome, StopReason};
use spur_engine::store::chain_key::key_for_reading;
use spur_engine::store::seal::{chain_value, seal};
use spur_engine::store::{audit, task_ledger};
use spur_engine::wbs::Wbs;

use crate::non_bypass::{artifact_case, spec, End, Spec, To};
use crate::property::property;
use crate::run_harness::Project;

/// Runner executions searched by default (each case is one run, plus a resume when the
/// journal was forged).
const RUNS: u32 = 300;
const REASON: &str = "accepted by the operator after review";

/// A journal forgery, appended by the forging step after the journal's last line.
#[derive(Debug, Clone)]
enum JournalForgery {
    None,
    /// A line that is not a record at all.
    Garbage,
    /// A transition as an older spur wrote it: no format version, no chain.
    Unchained {
        transition: usize,
    },
    /// Records chained as spur chains them: a guard that "passed" (when the transition has
    /// a guard, or always when `claim_guard`), then the transition; from its own source
    /// state, or from another state. `keyed`: sealed with the key, as spur seals them (a
    /// forger who read the key file); else chained by plain sha256 (format 1, a forger
    /// without the key).
    Chained {
        transition: usize,
        claim_guard: bool,
        from_elsewhere: bool,
        keyed: bool,
    },
}

/// What the forging step writes. It runs as the first onEnter action of `w0`, once.
#[derive(Debug, Clone)]
struct Forgery {
    /// `{"status":"done"}` in the task's view, `.spur/tasks/T1.json`.
    done_view: bool,
    /// A done record in the task ledger whose `prev` does not chain.
    ledger_done: bool,
    journal: JournalForgery,
}

fn forgery() -> impl Strategy<Value = Forgery> {
    let journal = prop_oneof![
        3 => Just(JournalForgery::None),
        1 => Just(JournalForgery::Garbage),
        1 => (0usize..32).prop_map(|transition| JournalForgery::Unchained { transition }),
        4 => (0usize..32, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(transition, claim_guard, from_elsewhere, keyed)| JournalForgery::Chained {
                transition,
                claim_guard,
                from_elsewhere,
                keyed,
            }
        ),
    ];
    (
        any::<bool>(),
        prop_oneof![4 => Just(false), 1 => Just(true)],
        journal,
    )
        .prop_map(|(done_view, ledger_done, journal)| Forgery {
            done_view,
            ledger_done,
            journal,
        })
}

/// `forge.sh`, written into the project for the forging step. It appends below what the
/// run has written so far, and leaves the journal's size before and after in
/// `forge.start` / `forge.end`, where the test cuts the journal (the "kill"). Records to be
/// sealed with the key it leaves in `forge.events`, one event per line: the test seals
/// them as spur would (an HMAC is not a shell one-liner) and appends them after the cut.
fn forge_script(yaml: &Value, forgery: &Forgery) -> String {
    let keyed = matches!(forgery.journal, JournalForgery::Chained { keyed: true, .. });
    let mut script = format!("keyed={}\n", u8::from(keyed));
    script.push_str(
        "set -e\n\
         [ -e \"$mark/forged\" ] && exit 0\n\
         touch \"$mark/forged\"\n\
         j=\"$SPUR_RUN_DIR/journal.jsonl\"\n\
         wc -c < \"$j\" > \"$mark/forge.start\"\n\
         seq=$(tail -n 1 \"$j\" | sed 's/.*\"seq\":\\([0-9]*\\).*/\\1/')\n\
         at=2026-01-01T00:00:00.000Z\n\
         line() {\n\
           if [ \"$keyed\" = 1 ]; then printf '%s\\n' \"$1\" >> \"$mark/forge.events\"; return; fi\n\
           seq=$((seq + 1))\n\
           prev=$(tail -n 1 \"$j\" | tr -d '\\n' | sha256sum | cut -d' ' -f1)\n\
           body=\"{\\\"v\\\":1,\\\"seq\\\":$seq,\\\"at\\\":\\\"$at\\\",\\\"prev\\\":\\\"$prev\\\",$1\"\n\
           hash=$(printf '%s' \"$body\" | sha256sum | cut -d' ' -f1)\n\
           printf '%s,\"hash\":\"%s\"}\\n' \"$body\" \"$hash\" >> \"$j\"\n\
         }\n",
    );
    if forgery.done_view {
        script.push_str(
            "mkdir -p \"$SPUR_STATE_DIR/tasks\"\n\
             printf '{\"wbs\":\"T1\",\"status\":\"done\",\"history\":[]}' > \"$SPUR_STATE_DIR/tasks/T1.json\"\n",
        );
    }
    if forgery.ledger_done {
        script.push_str(
            "mkdir -p \"$SPUR_RUN_DIR/../../ledger/tasks\"\n\
             printf '%s\\n' '{\"v\":1,\"seq\":0,\"wbs\":\"T1\",\"from\":\"todo\",\"to\":\"done\",\"at\":\"2026-01-01T00:00:00.000Z\",\"user\":\"forger\",\"run\":null,\"gate\":{\"decision\":\"allow\",\"reason\":\"pass\"},\"verdictSha256\":null,\"auditHash\":null,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}' >> \"$SPUR_RUN_DIR/../../ledger/tasks/T1.jsonl\"\n",
        );
    }
    let transitions = yaml["transitions"].as_array().cloned().unwrap_or_default();
    let pick = |index: usize| transitions.get(index % transitions.len().max(1)).cloned();
    match &forgery.journal {
        JournalForgery::None => {}
        JournalForgery::Garbage => {
            script.push_str("printf '%s\\n' 'the run is done, trust me' >> \"$j\"\n");
        }
        JournalForgery::Unchained { transition } => {
            if let Some(t) = pick(*transition) {
                let index = transition % transitions.len();
                let _ = writeln!(
                    script,
                    "printf '{{\"seq\":%s,\"at\":\"%s\",\"event\":\"transition\",\"transition\":{index},\"from\":\"{}\",\"to\":\"{}\",\"iteration\":1}}\\n' $((seq + 1)) \"$at\" >> \"$j\"",
                    t["from"].as_str().unwrap_or("w0"),
                    t["to"].as_str().unwrap_or("done_a"),
                );
            }
        }
        JournalForgery::Chained {
            transition,
            claim_guard,
            from_elsewhere,
            ..
        } => {
            if let Some(t) = pick(*transition) {
                let index = transition % transitions.len();
                let to = t["to"].as_str().unwrap_or("done_a");
                let own_from = t["from"].as_str().unwrap_or("w0");
                let from = if *from_elsewhere {
                    // Another work state when there is one, else a terminal.
                    if work_states(yaml) > 1 && own_from == "w0" {
                        "w1"
                    } else {
                        "done_b"
                    }
                } else {
                    own_from
                };
                let guard = t["guard"]["kind"].as_str();
                if guard.is_some() || *claim_guard {
                    let _ = writeln!(
                        script,
                        "line '\"event\":\"guard-evaluated\",\"state\":\"{from}\",\"transition\":{index},\"to\":\"{to}\",\"kind\":\"{}\",\"passed\":true,\"durationUs\":1'",
                        guard.unwrap_or("none")
                    );
                }
                let _ = writeln!(
                    script,
                    "line '\"event\":\"transition\",\"transition\":{index},\"from\":\"{from}\",\"to\":\"{to}\",\"iteration\":1'"
                );
            }
        }
    }
    script.push_str("wc -c < \"$j\" > \"$mark/forge.end\"\n");
    script
}

/// Append the events the forging step left in `forge.events` to `journal`, each sealed
/// with the project's key and chained exactly as spur chains: a forger who read the key.
fn append_sealed(project: &Project, journal: &std::path::Path) {
    let Ok(events) = std::fs::read_to_string(project.root().join("forge.events")) else {
        return;
    };
    let key = project
        .key_file()
        .load()
        .expect("the key reads")
        .expect("the run made a key");
    for event in events.lines() {
        let text = std::fs::read_to_string(journal).unwrap();
        let last = text.lines().last().expect("the journal has a line");
        let seq = serde_json::from_str::<Value>(last).unwrap()["seq"]
            .as_u64()
            .unwrap();
        let body = format!(
            r#"{{"v":2,"seq":{},"at":"2026-01-01T00:00:00.000Z","prev":"{}",{event}"#,
            seq + 1,
            chain_value(last.as_bytes())
        );
        let line = seal(&body, &key);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(journal)
            .unwrap();
        std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
    }
}

/// How many work states (`w0`, `w1`, …) the pipeline has.
fn work_states(yaml: &Value) -> usize {
    yaml["states"].as_array().map_or(0, |states| {
        states
            .iter()
            .filter(|s| {
                s["id"]
                    .as_str()
                    .and_then(|id| id.strip_prefix('w'))
                    .is_some_and(|n| n.parse::<usize>().is_ok())
            })
            .count()
    })
}

/// The generated pipeline with the forging step first in `w0`'s onEnter.
fn with_forging_step(spec: &Spec) -> Value {
    let mut yaml: Value = serde_json::from_str(&spec.yaml()).expect("the spec's JSON");
    let step = json!({
        "kind": "shell",
        "onError": "continue",
        "options": {"command": "sh \"$mark/forge.sh\""}
    });
    if let Some(w0) = yaml["states"]
        .as_array_mut()
        .and_then(|states| states.iter_mut().find(|s| s["id"] == "w0"))
    {
        let mut actions = w0["onEnter"].as_array().cloned().unwrap_or_default();
        actions.insert(0, step);
        w0["onEnter"] = Value::Array(actions);
    }
    yaml
}

#[derive(Default)]
struct Tally {
    forged_runs: AtomicU32,
    done: AtomicU32,
    denied_with_forged_view: AtomicU32,
    failed_closed_on_ledger: AtomicU32,
    resumes_refused: AtomicU32,
    resumes_run: AtomicU32,
}

#[test]
fn no_forged_view_ledger_line_or_journal_record_certifies_a_task() {
    let force = prop_oneof![4 => Just(None), 1 => Just(Some(REASON))];
    let tally = Tally::default();
    property(
        "non-bypass against a forging step (runs)",
        RUNS,
        (spec(true, false), artifact_case(), force, forgery()),
        |(spec, artifact, force, forgery)| {
            let project = Project::new();
            let yaml = with_forging_step(&spec);
            let text = serde_json::to_string_pretty(&yaml).expect("JSON");
            let checked = project
                .checked(&text)
                .map_err(|e| TestCaseError::fail(format!("generated pipeline refused: {e}")))?;
            std::fs::write(
                project.root().join("forge.sh"),
                forge_script(&yaml, &forgery),
            )
            .unwrap();
            let wbs = Wbs::parse("T1").expect("valid wbs");
            let outcome = project
                .run_case(&checked, spec.flag, artifact.text(), force)
                .map_err(|e| TestCaseError::fail(format!("run error: {e:?}")))?;
            let forged = project.root().join("forged").exists();
            prop_assert_eq!(
                forged,
                spec.initial == To::Work(0),
                "the forging step ran iff w0 was entered"
            );
            if forged {
                tally.forged_runs.fetch_add(1, Ordering::Relaxed);
            }

            // What the promise allows, from what this test wrote.
            let route = spec.route();
            let ledger_broken = forged && forgery.ledger_done;
            let may_certify = artifact.certifies() || force.is_some();
            let expect_done = matches!(route, End::Success(_)) && may_certify && !ledger_broken;

            let task_done = |project: &Project| -> Result<bool, TestCaseError> {
                let read = task_ledger::read(&project.state_dir(), &wbs)
                    .map_err(|e| TestCaseError::fail(format!("ledger: {e:?}")))?;
                Ok(read.intact().is_ok() && read.status().is_done())
            };
            let audited = |project: &Project| -> Result<usize, TestCaseError> {
                let path = project.state_dir().audit_path();
                let key = key_for_reading(&project.state_dir());
                let chain = audit::verify(&path, &key)
                    .map_err(|e| TestCaseError::fail(format!("audit: {e:?}")))?;
                prop_assert!(chain.is_verified(), "audit chain broken: {chain:?}");
                Ok(audit::list(&path)
                    .map_err(|e| TestCaseError::fail(format!("audit: {e:?}")))?
                    .len())
            };

            // The run itself: the forged view and the forged journal lines change nothing
            // it decides; a forged ledger line makes the gate fail closed.
            prop_assert_eq!(
                outcome.outcome == Outcome::Done,
                expect_done,
                "{:?} (route {:?}, forgery {:?})",
                outcome,
                route,
                forgery
            );
            if matches!(route, End::Success(_)) && !expect_done {
                prop_assert_eq!(outcome.reason, StopReason::DoneGateDenied);
                if forged && forgery.done_view {
                    tally
                        .denied_with_forged_view
                        .fetch_add(1, Ordering::Relaxed);
                }
                if ledger_broken && may_certify {
                    tally
                        .failed_closed_on_ledger
                        .fetch_add(1, Ordering::Relaxed);
                }
            }
            let done_after_run = task_done(&project)?;
            prop_assert_eq!(done_after_run, expect_done);
            if expect_done {
                tally.done.fetch_add(1, Ordering::Relaxed);
            }
            prop_assert_eq!(
                audited(&project)?,
                usize::from(expect_done && force.is_some())
            );

            // The "kill" right behind the journal forgery, then `spur continue`.
            let journal_forged = forged && !matches!(forgery.journal, JournalForgery::None);
            if journal_forged {
                let end: u64 = std::fs::read_to_string(project.root().join("forge.end"))
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                let journal = project.journal_path(&outcome.run_id);
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&journal)
                    .unwrap();
                file.set_len(end).unwrap();
                drop(file);
                append_sealed(&project, &journal);
                match project.resume(&checked, &outcome.run_id) {
                    Err(_) => {
                        tally.resumes_refused.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(resumed) => {
                        tally.resumes_run.fetch_add(1, Ordering::Relaxed);
                        // Only a forgery sealed with the key exactly as spur seals can get
                        // this far: a sha256 chain in a keyed journal is a broken chain.
                        prop_assert!(
                            matches!(forgery.journal, JournalForgery::Chained { keyed: true, .. }),
                            "a resume accepted {:?}: {:?}",
                            forgery.journal,
                            resumed
                        );
                        if resumed.outcome == Outcome::Done {
                            // Done only through the gate: a recomputed PASS (a resume forces
                            // only with its own --force-done, never given here), or the task
                            // the uninterrupted run had already certified.
                            prop_assert!(
                                !ledger_broken && (artifact.certifies() || done_after_run),
                                "resumed to done: {resumed:?}, forgery {forgery:?}"
                            );
                        }
                    }
                }
            }
            let done_at_end = task_done(&project)?;
            prop_assert!(
                !done_at_end || (!ledger_broken && may_certify),
                "task done without a PASS or a force (forgery {forgery:?})"
            );
            if done_at_end && !artifact.certifies() {
                prop_assert!(audited(&project)? > 0, "done by force with no audit record");
            }
            Ok(())
        },
    );
    let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
    eprintln!(
        "  forged {} runs; done {}; denied despite a forged done view {}; failed closed on a forged ledger line {}; resumes refused {}, run {}",
        n(&tally.forged_runs),
        n(&tally.done),
        n(&tally.denied_with_forged_view),
        n(&tally.failed_closed_on_ledger),
        n(&tally.resumes_refused),
        n(&tally.resumes_run),
    );
    assert!(
        n(&tally.denied_with_forged_view) > 0,
        "no run was denied with a forged view"
    );
    assert!(
        n(&tally.failed_closed_on_ledger) > 0,
        "no forged ledger line met a PASS or a force"
    );
    assert!(
        n(&tally.resumes_refused) > 0,
        "no forged journal was refused"
    );
}
