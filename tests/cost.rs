//! Cost and budgets through the binary: each agent CLI's own machine-readable output, read
//! from stand-ins of the same names on PATH that print the documented formats
//! (`tests/fixtures/agent-cli/`, each citing its source); usage in the journal, `spur
//! runs`, `spur trace` and `spur task show`; budgets that refuse a step before it starts
//! and stop an agent mid-run; the task's usage ledger over runs, a crash, and an edit.

use std::time::Duration;

use serde_json::Value;

use crate::common::{process_is_running, Spur};
use crate::run::make_executable;

const CLIS: [&str; 5] = ["claude", "codex", "gemini", "opencode", "aider"];

/// The stand-in `name` from the fixtures in the project's `bin/`.
fn stub(p: &Spur, name: &str) {
    p.fixture(
        &format!("tests/fixtures/agent-cli/{name}"),
        &format!("bin/{name}"),
    );
    make_executable(&p.join(&format!("bin/{name}")));
}

/// The project's `bin/` first, then the system's.
fn path(p: &Spur) -> String {
    format!("{}:/usr/bin:/bin", p.join("bin").display())
}

/// The `action-finished` records of a run, in order.
fn finished(p: &Spur, run_id: &str) -> Vec<Value> {
    p.trace(run_id)
        .into_iter()
        .filter(|r| r["event"] == "action-finished")
        .collect()
}

fn newest_run(p: &Spur) -> String {
    p.runs()[0]["runId"].as_str().unwrap().to_owned()
}

#[test]
fn each_cli_is_asked_for_its_own_format_and_its_usage_is_recorded() {
    let p = Spur::new();
    let mut config = String::from("agents:\n");
    for name in CLIS {
        stub(&p, name);
        config.push_str(&format!("  {name}: {{ preset: {name} }}\n"));
    }
    // codex and gemini report no cost: priced from the table, by agent name and by model.
    config.push_str(
        "prices:\n  codex: { input: 1.25, cachedInput: 0.125, output: 10 }\n  gemini-2.5-pro: { input: 1.25, cachedInput: 0.3125, output: 10 }\n",
    );
    p.file(".spur/config.yaml", config);
    let steps: String = CLIS
        .iter()
        .map(|a| format!("      - {{kind: agent.run, options: {{agent: {a}, input: fix it, answerFile: answers/{a}.txt}}}}\n"))
        .collect();
    let yaml = format!(
        "name: clis\ninitialState: a\nstates:\n  - id: a\n    onEnter:\n{steps}  - {{id: b}}\ntransitions: [{{from: a, to: b}}]\n"
    );
    p.pipeline(&yaml).env("PATH", path(&p)).run().success();

    // The answer, as the CLI's text output would have been.
    for name in ["claude", "codex", "gemini", "opencode"] {
        assert_eq!(
            p.read(&format!("answers/{name}.txt")),
            "Fixed the typo in README.md.\n",
            "{name}"
        );
    }
    assert!(p
        .read("answers/aider.txt")
        .contains(">>>>>>> REPLACE\n\nTokens: 2.5k sent"));

    let run_id = p.only_run_id();
    let usage: Vec<Value> = finished(&p, &run_id)
        .iter()
        .map(|r| r["usage"].clone())
        .collect();
    let [claude, codex, gemini, opencode, aider] = usage.as_slice() else {
        panic!("{usage:?}")
    };
    // claude: cache reads and writes are input; its own cost, model and duration.
    assert_eq!(claude["inputTokens"], 11203);
    assert_eq!(claude["cachedTokens"], 10000);
    assert_eq!(claude["outputTokens"], 50);
    assert_eq!(claude["costUsd"], 0.0123);
    assert_eq!(claude["costSource"], "reported");
    assert_eq!(claude["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(claude["durationMs"], 4210);
    // codex: tokens only, priced by the agent's name.
    assert_eq!(codex["inputTokens"], 7572);
    assert_eq!(codex["cachedTokens"], 1792);
    assert_eq!(codex["outputTokens"], 25);
    assert_eq!(codex["costSource"], "priced");
    let codex_cost = ((7572.0 - 1792.0) * 1.25 + 1792.0 * 0.125 + 25.0 * 10.0) / 1e6;
    assert!((codex["costUsd"].as_f64().unwrap() - codex_cost).abs() < 1e-12);
    // gemini: candidates and thoughts are output; priced by the model it names.
    assert_eq!(gemini["inputTokens"], 24939);
    assert_eq!(gemini["cachedTokens"], 21263);
    assert_eq!(gemini["outputTokens"], 174);
    assert_eq!(gemini["model"], "gemini-2.5-pro");
    assert_eq!(gemini["costSource"], "priced");
    assert_eq!(gemini["durationMs"], 5053);
    // opencode: cache writes are input; its own cost.
    assert_eq!(opencode["inputTokens"], 8079);
    assert_eq!(opencode["outputTokens"], 7);
    assert_eq!(opencode["costUsd"], 0.030399);
    // aider: its rounded report line.
    assert_eq!(aider["inputTokens"], 2500);
    assert_eq!(aider["cachedTokens"], 1200);
    assert_eq!(aider["outputTokens"], 345);
    assert_eq!(aider["costUsd"], 0.0123);

    let runs = p.runs();
    let total = &runs[0]["usage"];
    assert_eq!(total["steps"], 5);
    assert_eq!(
        total["inputTokens"].as_u64().unwrap() + total["outputTokens"].as_u64().unwrap(),
        11253 + 7597 + 25113 + 8086 + 2845
    );
    assert_eq!(total["unpricedSteps"], 0);
    let listed = p.args(["runs"]).run().success();
    assert!(listed.stdout().contains("COST"), "{}", listed.stdout());
    assert!(listed.stdout().contains("$0.0"), "{}", listed.stdout());
    let trace = p.args(["trace", &run_id]).run().success();
    assert!(
        trace.stdout().contains("spent: 54894 tokens"),
        "{}",
        trace.stdout()
    );
    assert!(trace
        .stdout()
        .contains("11253 tokens, $0.0123 claude-sonnet-4-5-20250929"));
}

/// A codex stand-in for a fix loop: each round appends to `rounds`, reports one turn of
/// 6000 tokens in codex's `--json` events, and in round 3 then keeps working (it would
/// report a second turn) until it is stopped. Same event shapes as the cited fixture.
const LOOPING_CODEX: &str = r#"#!/bin/sh
echo x >> rounds
round=$(wc -l < rounds)
echo $$ > agent.pid
echo '{"type":"thread.started","thread_id":"t-'"$round"'"}'
echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"round '"$round"'"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":5990,"cached_input_tokens":0,"output_tokens":10}}'
if [ "$round" -eq 3 ]; then
  sleep 600
  echo '{"type":"turn.completed","usage":{"input_tokens":5990,"cached_input_tokens":0,"output_tokens":10}}'
  touch not-stopped
fi
"#;

const FIX_LOOP: &str = r#"name: fixloop
initialState: fix
terminalStates: [done]
iterationBound: 20
vars: { wbs: "" }
states:
  - id: fix
    onEnter:
      - { kind: agent.run, options: { agent: codex, input: "fix ${vars.wbs}" } }
  - id: check
  - id: done
transitions:
  - { from: fix, to: check }
  - { from: check, to: done, terminalReason: paused-operator, guard: { kind: shell, options: { command: 'test "$(wc -l < rounds)" -ge 4' } } }
  - { from: check, to: fix }
"#;

fn fix_loop(budgets: &str) -> Spur {
    let p = Spur::new();
    p.file("bin/codex", LOOPING_CODEX);
    make_executable(&p.join("bin/codex"));
    p.file(
        ".spur/config.yaml",
        format!("agents:\n  codex: {{ preset: codex }}\n{budgets}"),
    );
    p
}

#[test]
fn a_run_budget_stops_the_fix_loop_mid_step_and_retry_goes_on_once_it_is_raised() {
    let p = fix_loop("budgets:\n  run: { tokens: 15000 }\n");
    let out = p
        .pipeline(FIX_LOOP)
        .var("wbs", "0042")
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let said = format!("{}{}", out.stdout(), out.stderr());
    // Round 3 started (12000 spent, under 15000) and crossed the budget as it reported.
    assert!(said.contains("was stopped"), "{said}");
    assert!(
        said.contains("`budgets.run.tokens` (15000 tokens)"),
        "{said}"
    );
    assert!(
        said.contains("this run has spent 18000 tokens in 3 steps"),
        "{said}"
    );
    assert!(said.contains("spur retry"), "{said}");
    assert!(said.contains("spur::cost::budget-exceeded"), "{said}");
    assert_eq!(p.read("rounds").lines().count(), 3);
    assert!(!p.exists("not-stopped"), "the agent went on after crossing");
    let pid = p.read("agent.pid");
    assert!(
        !process_is_running(pid.trim()),
        "the agent's process outlived the stop"
    );

    // What the stopped step had reported is on record.
    let run_id = p.only_run_id();
    let steps = finished(&p, &run_id);
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2]["ok"], false);
    assert_eq!(steps[2]["usage"]["inputTokens"], 5990);

    // Raised, the run goes on from the failed step.
    p.file(
        ".spur/config.yaml",
        "agents:\n  codex: { preset: codex }\nbudgets:\n  run: { tokens: 100000 }\n",
    );
    let retried = p
        .args(["retry", &run_id])
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(retried.exit_code(), Some(0), "{}", retried.stderr());
    assert_eq!(p.read("rounds").lines().count(), 4);
    assert_eq!(p.runs()[0]["usage"]["steps"], 4);
    assert_eq!(p.runs()[0]["outcome"], "completed");
}

#[test]
fn a_spent_budget_fails_the_next_agent_step_without_starting_it() {
    let p = fix_loop("budgets:\n  run: { tokens: 6000 }\n");
    let out = p
        .pipeline(FIX_LOOP)
        .var("wbs", "0042")
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let said = format!("{}{}", out.stdout(), out.stderr());
    assert!(said.contains("did not start"), "{said}");
    assert!(
        said.contains("`budgets.run.tokens` (6000 tokens) is spent"),
        "{said}"
    );
    assert_eq!(p.read("rounds").lines().count(), 1, "round 2 was started");
}

#[test]
fn a_task_budget_counts_every_run_of_the_task() {
    let p = fix_loop("budgets:\n  task: { tokens: 12000 }\n");
    // Each run does one round: a pipeline without the loop.
    let once = FIX_LOOP
        .replace("  - { from: check, to: fix }\n", "")
        .replace("-ge 4", "-ge 1");
    let run = |code| {
        let out = p
            .pipeline(&once)
            .var("wbs", "0042")
            .env("PATH", path(&p))
            .within(Duration::from_secs(120))
            .run();
        assert_eq!(out.exit_code(), Some(code), "{}", out.stderr());
        out
    };
    run(0);
    run(0);
    let third = run(1);
    let said = format!("{}{}", third.stdout(), third.stderr());
    assert!(
        said.contains("`budgets.task.tokens` (12000 tokens) is spent"),
        "{said}"
    );
    assert!(said.contains("over all its runs"), "{said}");
    assert_eq!(p.read("rounds").lines().count(), 2);
}

/// The seq of the first record named `event` in `records`.
fn seq_of(records: &[Value], event: &str) -> u64 {
    records
        .iter()
        .find(|r| r["event"] == event)
        .and_then(|r| r["seq"].as_u64())
        .unwrap()
}

fn task_usage(p: &Spur) -> Value {
    p.args(["task", "show", "0042"])
        .json()
        .run()
        .success()
        .stdout_json()["usage"]
        .clone()
}

const ONE_STEP: &str = r#"name: once
initialState: a
vars: { wbs: "" }
states:
  - id: a
    onEnter:
      - { kind: agent.run, options: { agent: codex, input: "fix ${vars.wbs}" } }
  - id: b
transitions: [{ from: a, to: b, terminalReason: paused-operator }]
"#;

#[test]
fn a_tasks_total_survives_several_runs_and_a_crash_without_counting_twice() {
    let p = Spur::new();
    stub(&p, "codex");
    p.file(".spur/config.yaml", "agents:\n  codex: { preset: codex }\n");
    let run = |kill_after: Option<u64>| {
        let cmd = p
            .pipeline(ONE_STEP)
            .var("wbs", "0042")
            .env("PATH", path(&p));
        match kill_after {
            // spur kills itself (SIGKILL): no deadline, which would take that for its own.
            Some(seq) => cmd
                .env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", seq.to_string())
                .run(),
            None => cmd.within(Duration::from_secs(120)).run(),
        }
    };
    run(None).success();
    run(None).success();
    let records = p.trace(&newest_run(&p));
    let usage = task_usage(&p);
    assert_eq!(usage["total"]["steps"], 2);
    assert_eq!(usage["runs"].as_array().unwrap().len(), 2);

    // Killed right after the step's finish was journaled: its spend is on record once, and
    // the resumed run does not count it again.
    let killed = run(Some(seq_of(&records, "action-finished")));
    assert_eq!(killed.exit_code(), None, "spur was not killed");
    assert_eq!(task_usage(&p)["total"]["steps"], 3);
    let crashed = newest_run(&p);
    p.args(["continue", &crashed])
        .env("PATH", path(&p))
        .run()
        .success();
    assert_eq!(task_usage(&p)["total"]["steps"], 3);

    // Killed while the agent's process was being recorded (before it ran): nothing was
    // spent; re-running the step spends once.
    let killed = run(Some(seq_of(&records, "action-process")));
    assert_eq!(killed.exit_code(), None, "spur was not killed");
    assert_eq!(task_usage(&p)["total"]["steps"], 3);
    let crashed = newest_run(&p);
    p.args(["continue", &crashed, "--rerun-ambiguous"])
        .env("PATH", path(&p))
        .run()
        .success();
    let usage = task_usage(&p);
    assert_eq!(usage["total"]["steps"], 4);
    assert_eq!(usage["total"]["inputTokens"], 4 * 7572);
    assert_eq!(usage["runs"].as_array().unwrap().len(), 4);
    assert_eq!(usage["error"], Value::Null);
    let shown = p.args(["task", "show", "0042"]).run().success();
    assert!(
        shown.stdout().contains(
            "spent: 30388 tokens (in 30288, cached 7168, out 100), unpriced in 4 steps over 4 runs"
        ),
        "{}",
        shown.stdout()
    );
}

#[test]
fn an_edited_usage_ledger_is_detected_and_no_budget_is_held_against_it() {
    let p = Spur::new();
    stub(&p, "codex");
    p.file(
        ".spur/config.yaml",
        "agents:\n  codex: { preset: codex }\nbudgets:\n  task: { tokens: 100000 }\n",
    );
    let run = || {
        p.pipeline(ONE_STEP)
            .var("wbs", "0042")
            .env("PATH", path(&p))
            .within(Duration::from_secs(120))
            .run()
    };
    run().success();
    run().success();
    // Someone lowers what the task spent, as a step could try.
    let ledger = task_usage(&p)["path"].as_str().unwrap().to_owned();
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert_eq!(text.matches("\"inputTokens\":7572").count(), 2);
    std::fs::write(
        &ledger,
        text.replacen("\"inputTokens\":7572", "\"inputTokens\":1", 1),
    )
    .unwrap();

    let usage = task_usage(&p);
    assert_eq!(usage["total"], Value::Null);
    assert!(
        usage["error"]
            .as_str()
            .unwrap()
            .contains("breaks at record 0"),
        "{usage}"
    );
    let refused = run();
    assert_eq!(refused.exit_code(), Some(1), "{}", refused.stderr());
    let said = format!("{}{}", refused.stdout(), refused.stderr());
    assert!(said.contains("spur::cost::ledger"), "{said}");
    assert!(said.contains("the task's budget cannot be held"), "{said}");
    // Dropping the first record is no better.
    let rest: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&ledger, rest).unwrap();
    assert!(task_usage(&p)["error"]
        .as_str()
        .unwrap()
        .contains("breaks at record 0"));
}

#[test]
fn a_command_reports_usage_on_stderr_and_a_hostile_report_is_refused() {
    let p = Spur::new();
    p.file(
        ".spur/config.yaml",
        "agents:\n  own: { command: \"./own-agent.sh\" }\n",
    );
    p.file(
        "own-agent.sh",
        "#!/bin/sh\necho 'the answer'\necho '{\"spurUsage\": {\"inputTokens\": 120, \"outputTokens\": 30, \"costUsd\": 0.002, \"model\": \"local-7b\"}}' >&2\n",
    );
    make_executable(&p.join("own-agent.sh"));
    let yaml = r#"name: reports
initialState: a
states:
  - id: a
    onEnter:
      - { kind: agent.run, options: { agent: own, input: hi, answerFile: answer.txt } }
      - { kind: shell, options: { command: "echo '{\"spurUsage\":{\"inputTokens\":5,\"outputTokens\":1}}' >&2" } }
  - id: b
transitions: [{ from: a, to: b }]
"#;
    p.pipeline(yaml).run().success();
    assert_eq!(p.read("answer.txt"), "the answer\n");
    let steps = finished(&p, &p.only_run_id());
    assert_eq!(steps[0]["usage"]["inputTokens"], 120);
    assert_eq!(steps[0]["usage"]["model"], "local-7b");
    assert_eq!(steps[0]["usage"]["costUsd"], 0.002);
    assert_eq!(steps[1]["usage"]["inputTokens"], 5);

    // A report of 8 MiB on one line, then one with a negative count and one with a field
    // spur does not know: each fails its step, and nothing of it is recorded.
    for (i, report) in [
        r#"head -c 8388608 /dev/zero | tr '\0' 'x' | sed 's/^/{"spurUsage":{"model":"/' >&2"#,
        r#"echo '{"spurUsage":{"inputTokens":-5}}' >&2"#,
        r#"echo '{"spurUsage":{"inputTokens":5,"refund":true}}' >&2"#,
    ]
    .iter()
    .enumerate()
    {
        let yaml = format!(
            "name: hostile\ninitialState: a\nstates:\n  - id: a\n    onEnter:\n      - {{ kind: shell, options: {{ command: {} }} }}\n  - id: b\ntransitions: [{{ from: a, to: b }}]\n",
            serde_json::to_string(report).unwrap()
        );
        let q = Spur::new();
        let out = q.pipeline(&yaml).within(Duration::from_secs(120)).run();
        assert_eq!(out.exit_code(), Some(1), "{i}: {}", out.stderr());
        let said = format!("{}{}", out.stdout(), out.stderr());
        assert!(said.contains("spur::cost::report-refused"), "{i}: {said}");
        let steps = finished(&q, &q.only_run_id());
        assert_eq!(steps[0]["usage"], Value::Null, "{i}");
    }
}

#[test]
fn check_reports_every_budget_and_price_error_with_its_place() {
    let p = Spur::new();
    p.file(
        ".spur/config.yaml",
        "agents: {}\nbudgets:\n  run: { tokens: lots }\n  tasks: { costUsd: 1 }\nprices:\n  m: { input: -1, output: 2 }\n",
    );
    let yaml = "name: x\ninitialState: a\nstates: [{id: a}]\ntransitions: []\n";
    p.file("x.yaml", yaml);
    let out = p.args(["check", "x.yaml"]).json().run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let found = out.stdout_json();
    let cost: Vec<&Value> = found
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "spur::cost::config")
        .collect();
    let mut lines: Vec<u64> = cost.iter().map(|d| d["line"].as_u64().unwrap()).collect();
    lines.sort_unstable();
    assert_eq!(lines, [3, 4, 6], "{found}");
    assert!(cost
        .iter()
        .all(|d| d["file"].as_str().unwrap().ends_with("config.yaml")));
    // And a run does not start on it.
    let run = p.pipeline(yaml).run();
    assert_eq!(run.exit_code(), Some(2), "{}", run.stderr());
    assert!(
        run.stderr().contains("spur::cost::config"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_step_that_fails_after_its_agent_ran_still_records_what_it_spent() {
    let p = Spur::new();
    stub(&p, "codex");
    p.file(".spur/config.yaml", "agents:\n  codex: { preset: codex }\n");
    // The stand-in changes nothing: requireDiff fails the step once the agent has run.
    let yaml = ONE_STEP.replace(
        "input: \"fix ${vars.wbs}\" }",
        "input: \"fix ${vars.wbs}\", requireDiff: true }",
    );
    let out = p
        .pipeline(&yaml)
        .var("wbs", "0042")
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let steps = finished(&p, &p.only_run_id());
    assert_eq!(steps[0]["ok"], false);
    assert!(steps[0]["error"].as_str().unwrap().contains("requireDiff"));
    assert_eq!(steps[0]["usage"]["inputTokens"], 7572);
    assert_eq!(task_usage(&p)["total"]["steps"], 1);
}

#[test]
fn a_cli_that_reports_only_at_the_end_fails_its_step_once_it_crossed_the_budget() {
    let p = Spur::new();
    stub(&p, "gemini");
    p.file(
        ".spur/config.yaml",
        "agents:\n  gemini: { preset: gemini }\nbudgets:\n  step: { tokens: 1000 }\n",
    );
    let yaml = ONE_STEP.replace("agent: codex", "agent: gemini").replace(
        "input: \"fix ${vars.wbs}\" }",
        "input: \"fix ${vars.wbs}\", answerFile: answer.txt }",
    );
    let out = p
        .pipeline(&yaml)
        .var("wbs", "0042")
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let said = format!("{}{}", out.stdout(), out.stderr());
    assert!(said.contains("agent \"gemini\" finished: the budget `budgets.step.tokens` (1000 tokens) is spent: the step has spent 25113 tokens in 1 step"), "{said}");
    // Its answer is written all the same, and what it spent is on record.
    assert_eq!(p.read("answer.txt"), "Fixed the typo in README.md.\n");
    assert_eq!(task_usage(&p)["total"]["inputTokens"], 24939);
}

/// A claude stand-in that reports one assistant message (the cited fixture's) and then
/// keeps working until it is stopped.
const WORKING_CLAUDE: &str = r#"#!/bin/sh
echo $$ > agent.pid
echo '{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5-20250929"}'
echo '{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Working on it."}],"usage":{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":10000,"output_tokens":50}},"session_id":"s"}'
sleep 600
touch not-stopped
"#;

#[test]
fn a_step_budget_stops_claude_as_its_messages_report_usage() {
    let p = Spur::new();
    p.file("bin/claude", WORKING_CLAUDE);
    make_executable(&p.join("bin/claude"));
    p.file(
        ".spur/config.yaml",
        "agents:\n  claude: { preset: claude }\nbudgets:\n  step: { tokens: 5000 }\n",
    );
    let yaml = ONE_STEP.replace("agent: codex", "agent: claude");
    let out = p
        .pipeline(&yaml)
        .var("wbs", "0042")
        .env("PATH", path(&p))
        .within(Duration::from_secs(120))
        .run();
    assert_eq!(out.exit_code(), Some(1), "{}", out.stderr());
    let said = format!("{}{}", out.stdout(), out.stderr());
    assert!(said.contains("agent \"claude\" was stopped: the budget `budgets.step.tokens` (5000 tokens) is spent: the step has spent 11253 tokens"), "{said}");
    assert!(!p.exists("not-stopped"));
    assert!(!process_is_running(p.read("agent.pid").trim()));
    let steps = finished(&p, &p.only_run_id());
    assert_eq!(steps[0]["usage"]["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(steps[0]["usage"]["cachedTokens"], 10000);
}
