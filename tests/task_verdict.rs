//! `spur task verdict WBS --from-answer FILE`: golden runs over `examples/answers/*.md`,
//! interrupted writes, hostile answers and usage errors.

use std::fs;

use crate::common::Spur;

/// A project holding the example sources the answers cite, with both example task files
/// under `docs/tasks/`.
fn example_project() -> Spur {
    Spur::new()
        .fixture("examples/answers/project", ".")
        .fixture("examples/answers/task", "docs/tasks")
}

/// Copy `examples/answers/<example>` into the project; its path there.
fn with_answer(project: &Spur, example: &str) -> String {
    let rel = format!("answers/{example}");
    project.fixture(&format!("examples/answers/{example}"), &rel);
    rel
}

/// `spur task verdict WBS --from-answer ANSWER`, more arguments to follow.
fn task_verdict(project: &Spur, wbs: &str, answer: &str) -> Spur {
    project.args(["task", "verdict", wbs, "--from-answer", answer])
}

/// The rows of each example task, in order: requirements, then acceptance criteria.
fn task_rows(wbs: &str) -> &'static [&'static str] {
    match wbs {
        "0804" => &[
            "R1",
            "R2",
            "R3",
            "AC-1: The parser reads both tables",
            "AC-2: Lint errors name their row",
            "`atomic-write`: An interrupted write keeps the previous artifact",
            "Scenario: Quiet mode",
            "[advisory] The book documents the answer format",
        ],
        "0805" => &[
            "R1",
            "AC-1: Errors are reported",
            "[docs-only] Errors are reported",
        ],
        other => panic!("no example task {other}"),
    }
}

/// How `--json` names the task file.
fn task_file(wbs: &str) -> &'static str {
    match wbs {
        "0804" => "docs/tasks/0804_answer-files.md",
        "0805" => "docs/tasks/0805_ambiguous.md",
        other => panic!("no example task {other}"),
    }
}

fn text(value: &serde_json::Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

/// An object's field names, sorted.
fn keys(value: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

/// The human form of the `--json` diagnostics: what stderr must say, line for line.
fn rendered(answer: &str, diagnostics: &serde_json::Value) -> String {
    let mut out = String::new();
    for d in diagnostics.as_array().unwrap() {
        let at = match d["line"].as_u64() {
            Some(line) => format!("{answer}:{line}"),
            None => answer.to_owned(),
        };
        out += &format!(
            "{}[{}]: {at}: {}\n",
            text(&d["severity"]),
            text(&d["code"]),
            text(&d["message"])
        );
        if let Some(row) = d["row"].as_str() {
            out += &format!("    row: {row}\n");
        }
        if let Some(help) = d["help"].as_str() {
            out += &format!("    help: {help}\n");
        }
    }
    out
}

/// The artifact written for an answer that fails the lint: every row UNMET and not
/// certified, and one blocker check listing the lint errors.
fn assert_lint_failure_artifact(
    answer: &str,
    artifact: &serde_json::Value,
    json: &serde_json::Value,
) {
    let not_certified =
        format!("not certified: {answer} failed the answer lint (see check answer-lint)");
    assert_eq!(artifact["verdict"], "FAIL");
    for row in artifact["requirements"].as_array().unwrap() {
        assert_eq!(
            (text(&row["status"]), text(&row["evidence"])),
            ("UNMET", not_certified.as_str()),
            "{row}"
        );
    }
    for row in artifact["acceptanceCriteria"].as_array().unwrap() {
        assert_eq!(
            (
                text(&row["status"]),
                text(&row["evidenceType"]),
                text(&row["evidence"])
            ),
            ("UNMET", "n/a", not_certified.as_str()),
            "{row}"
        );
    }
    let errors: Vec<String> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            format!(
                "line {}: {} {}",
                d["line"],
                text(&d["code"]),
                text(&d["message"])
            )
        })
        .collect();
    let plural = if errors.len() == 1 { "" } else { "s" };
    assert_eq!(
        artifact["checks"],
        serde_json::json!([{
            "name": "answer-lint",
            "status": "fail",
            "evidence": format!("{answer}: {} lint error{plural}: {}", errors.len(), errors.join("; ")),
            "severity": "blocker",
        }])
    );
}

/// The artifact's rows and checks, one line each (for answers that pass the lint).
fn artifact_lines(artifact: &serde_json::Value) -> String {
    let mut out = format!("verdict {}\n", text(&artifact["verdict"]));
    for row in artifact["requirements"].as_array().unwrap() {
        out += &format!(
            "{}: {} — {}\n",
            text(&row["id"]),
            text(&row["status"]),
            text(&row["evidence"])
        );
    }
    for row in artifact["acceptanceCriteria"].as_array().unwrap() {
        out += &format!(
            "{}: {} ({}) — {}\n",
            text(&row["id"]),
            text(&row["status"]),
            text(&row["evidenceType"]),
            text(&row["evidence"])
        );
    }
    for check in artifact["checks"].as_array().unwrap() {
        out += &format!(
            "check {}: {} ({}) — {}\n",
            text(&check["name"]),
            text(&check["status"]),
            text(&check["severity"]),
            text(&check["evidence"])
        );
    }
    out
}

/// What a golden test snapshots: everything, or the lines that are its point.
enum Shown {
    Everything,
    ThePoint,
}

/// Run the human and the `--json` form on one example, check that they agree with each
/// other and with the artifact, and render what the test snapshots.
fn golden(wbs: &str, example: &str, shown: Shown) -> (i32, String) {
    let project = example_project();
    let answer = with_answer(&project, example);
    let human = task_verdict(&project, wbs, &answer).run();
    let artifact_path = format!(".spur/run/{wbs}-verdict.json");
    let artifact_text = project.read(&artifact_path);
    let artifact: serde_json::Value = serde_json::from_str(&artifact_text).unwrap();
    let json = task_verdict(&project, wbs, &answer).json().run();
    assert_eq!(human.exit_code(), json.exit_code(), "both forms end alike");
    assert_eq!(json.stderr(), "", "--json keeps stderr quiet");
    let doc = json.stdout_json();
    assert_eq!(doc["wbs"], wbs);
    assert_eq!(artifact["wbs"], wbs);
    assert_eq!(artifact["source"], "spur task verdict");
    assert_eq!(
        doc["verdict"], artifact["verdict"],
        "--json names the verdict written"
    );
    assert_eq!(doc["artifact"], artifact_path.as_str());
    assert_eq!(doc["task"], task_file(wbs));
    assert_eq!(
        human.stderr(),
        rendered(&answer, &doc["diagnostics"]),
        "stderr is the --json diagnostics"
    );
    // Nothing the snapshot leaves out goes unchecked: these are all the fields there are.
    assert_eq!(
        keys(&doc),
        [
            "artifact",
            "diagnostics",
            "lintFailed",
            "task",
            "verdict",
            "wbs"
        ]
    );
    for d in doc["diagnostics"].as_array().unwrap() {
        let known = ["code", "help", "line", "message", "row", "severity"];
        assert!(keys(d).iter().all(|k| known.contains(&k.as_str())), "{d}");
    }
    assert_eq!(
        keys(&artifact),
        [
            "acceptanceCriteria",
            "checks",
            "requirements",
            "source",
            "verdict",
            "wbs"
        ]
    );
    for (table, fields) in [
        ("requirements", &["evidence", "id", "status"][..]),
        (
            "acceptanceCriteria",
            &["evidence", "evidenceType", "id", "status"],
        ),
        ("checks", &["evidence", "name", "severity", "status"]),
    ] {
        for row in artifact[table].as_array().unwrap() {
            assert_eq!(keys(row), fields, "{row}");
        }
    }
    let ids: Vec<&str> = ["requirements", "acceptanceCriteria"]
        .iter()
        .flat_map(|table| artifact[table].as_array().unwrap())
        .map(|row| text(&row["id"]))
        .collect();
    assert_eq!(
        ids,
        task_rows(wbs),
        "one artifact row per task row, in order"
    );
    let lint_failed = doc["lintFailed"].as_bool().unwrap();
    let lint_check = &artifact["checks"][0];
    assert_eq!(lint_check["name"], "answer-lint");
    assert_eq!(
        lint_check["status"],
        if lint_failed { "fail" } else { "pass" }
    );
    if lint_failed {
        assert_lint_failure_artifact(&answer, &artifact, &doc);
    }

    let code = human.exit_code().expect("exited");
    let text = match shown {
        Shown::Everything => format!(
            "exit: {code}\n--- stdout\n{}--- stderr\n{}--- {artifact_path}\n{artifact_text}--- --json\n{}",
            human.stdout(),
            human.stderr(),
            json.stdout(),
        ),
        Shown::ThePoint => format!(
            "exit: {code}\n--- stdout\n{}--- stderr\n{}--- {artifact_path}\n{}--- --json\nverdict {}, lintFailed {lint_failed}, {} as on stderr\n",
            human.stdout(),
            human.stderr(),
            if lint_failed {
                "verdict FAIL, every row UNMET (not certified), check answer-lint fails listing the errors above\n".to_owned()
            } else {
                artifact_lines(&artifact)
            },
            doc["verdict"].as_str().unwrap(),
            match doc["diagnostics"].as_array().unwrap().len() {
                1 => "1 diagnostic".to_owned(),
                n => format!("{n} diagnostics"),
            },
        ),
    };
    (code, project.redact(&text))
}

/// `golden!(test, WBS, "answer.md", exit N)` snapshots the lines that are the point of the
/// test; `…, exit N, everything)` the whole output of both forms and the artifact.
macro_rules! golden {
    ($test:ident, $wbs:literal, $example:literal, exit $code:literal) => {
        golden!($test, $wbs, $example, exit $code, Shown::ThePoint);
    };
    ($test:ident, $wbs:literal, $example:literal, exit $code:literal, everything) => {
        golden!($test, $wbs, $example, exit $code, Shown::Everything);
    };
    ($test:ident, $wbs:literal, $example:literal, exit $code:literal, $shown:expr) => {
        #[test]
        fn $test() {
            let (code, text) = golden($wbs, $example, $shown);
            assert_eq!(code, $code, "{text}");
            insta::assert_snapshot!(stringify!($test), text);
        }
    };
}

golden!(clean_answer_derives_pass, "0804", "pass.md", exit 0, everything);
golden!(padding_escaped_pipes_inline_code_and_trailing_spaces_are_tolerated, "0804", "tolerant-formatting.md", exit 0);
golden!(missing_requirement_fails_the_lint, "0804", "missing-requirement.md", exit 1);
golden!(duplicate_requirement_fails_the_lint, "0804", "duplicate-requirement.md", exit 1);
golden!(unknown_requirement_fails_the_lint, "0804", "unknown-requirement.md", exit 1);
golden!(invalid_status_fails_the_lint, "0804", "invalid-status.md", exit 1);
golden!(invalid_evidence_type_fails_the_lint, "0804", "invalid-evidence-type.md", exit 1);
golden!(empty_evidence_fails_the_lint, "0804", "empty-evidence.md", exit 1);
golden!(met_row_without_anchor_fails_the_lint, "0804", "missing-anchor.md", exit 1);
golden!(paraphrased_ac_id_resolves_to_nothing, "0804", "paraphrased-ac.md", exit 1);
golden!(ac_title_shared_by_two_criteria_is_ambiguous, "0805", "ambiguous-ac.md", exit 1);
golden!(missing_ac_fails_the_lint, "0804", "missing-ac.md", exit 1);
golden!(duplicate_ac_fails_the_lint, "0804", "duplicate-ac.md", exit 1);
golden!(answer_cannot_add_an_exempting_tag, "0804", "undeclared-tag.md", exit 1);
golden!(glob_is_not_an_anchor, "0804", "glob-anchor.md", exit 1);
golden!(directory_is_not_an_anchor, "0804", "directory-anchor.md", exit 1);
golden!(anchor_into_a_missing_file_fails_the_lint, "0804", "anchor-file-missing.md", exit 1);
golden!(anchor_past_the_end_of_its_file_fails_the_lint, "0804", "anchor-past-end.md", exit 1);
golden!(met_behaviour_ac_with_only_static_ref_is_downgraded_to_partial, "0804", "static-ref-downgrade.md", exit 1, everything);
golden!(advisory_ac_is_exempt_from_the_evidence_rule, "0804", "advisory-exempt.md", exit 0);
golden!(rows_win_over_a_softer_verdict_line, "0804", "verdict-line-disagrees.md", exit 1);
golden!(a_harsher_verdict_line_is_kept, "0804", "verdict-line-harsher.md", exit 1);
golden!(missing_verdict_line_fails_the_lint, "0804", "missing-verdict-line.md", exit 1);
golden!(cut_off_row_fails_the_lint, "0804", "incomplete-row.md", exit 1);
golden!(row_with_an_extra_cell_fails_the_lint, "0804", "wrong-column-count.md", exit 1);

fn verdict_of(project: &Spur, wbs: &str) -> String {
    let text = project.read(&format!(".spur/run/{wbs}-verdict.json"));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["verdict"].as_str().unwrap().to_owned()
}

#[test]
fn a_crash_before_the_rename_leaves_the_previous_artifact_intact() {
    let project = example_project();
    let pass = with_answer(&project, "pass.md");
    let bad = with_answer(&project, "anchor-past-end.md");
    task_verdict(&project, "0804", &pass).run().success();
    let before = project.read(".spur/run/0804-verdict.json");

    // Killed by a signal mid-derivation.
    task_verdict(&project, "0804", &bad)
        .env("SPUR_TEST_CRASH_BEFORE_RENAME", "1")
        .run()
        .killed();
    assert_eq!(
        project.read(".spur/run/0804-verdict.json"),
        before,
        "the previous artifact is intact, byte for byte"
    );
    assert_eq!(verdict_of(&project, "0804"), "PASS");

    task_verdict(&project, "0804", &bad).run().code(1);
    assert_eq!(verdict_of(&project, "0804"), "FAIL");
    let leftovers: Vec<String> = fs::read_dir(project.join(".spur/run"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        leftovers,
        ["0804-verdict.json"],
        "the next derivation clears what the crash left staged"
    );
}

#[test]
fn lint_only_prints_diagnostics_and_writes_nothing() {
    let project = example_project();
    let good = with_answer(&project, "pass.md");
    let bad = with_answer(&project, "glob-anchor.md");
    task_verdict(&project, "0804", &good)
        .arg("--lint-only")
        .run()
        .success()
        .stdout_contains("would derive PASS");
    let doc = task_verdict(&project, "0804", &bad)
        .arg("--lint-only")
        .json()
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(doc["artifact"], serde_json::Value::Null);
    assert_eq!(doc["diagnostics"][0]["code"], "spur::answer::glob-anchor");
    assert_eq!(doc["diagnostics"][0]["line"], 11);
    assert!(!project.join(".spur/run").exists());
}

#[test]
fn an_explicit_task_file_is_used() {
    let project = example_project();
    let answer = with_answer(&project, "pass.md");
    fs::rename(
        project.join("docs/tasks/0804_answer-files.md"),
        project.join("elsewhere.md"),
    )
    .unwrap();
    task_verdict(&project, "0804", &answer).run().code(2);
    task_verdict(&project, "0804", &answer)
        .args(["--task", "elsewhere.md"])
        .run()
        .success();
}

#[test]
fn usage_errors_exit_2_and_write_nothing() {
    let project = example_project();
    let answer = with_answer(&project, "pass.md");
    for args in [
        vec!["task", "verdict", "../x", "--from-answer", answer.as_str()],
        vec![
            "task",
            "verdict",
            "0804",
            "--from-answer",
            "answers/none.md",
        ],
        vec!["task", "verdict", "0804", "--from-answer", "answers"],
        vec!["task", "verdict", "0999", "--from-answer", answer.as_str()],
        vec!["task", "verdict", "0804"],
    ] {
        let out = project.args(&args).run().code(2);
        assert!(!out.stderr().is_empty(), "{args:?} explains itself");
    }
    assert!(!project.join(".spur/run").exists());
    let out = task_verdict(&project, "0999", &answer).run();
    insta::assert_snapshot!("no_task_file", out.stderr_redacted());
}

/// Hostile answers: each gives exit 1, a FAIL artifact, a named diagnostic, no panic.
fn hostile(bytes: &[u8]) -> serde_json::Value {
    let project = example_project();
    project.file("answers/hostile.md", bytes);
    let out = task_verdict(&project, "0804", "answers/hostile.md")
        .json()
        .run()
        .code(1);
    assert!(!out.stderr().contains("panicked"));
    assert_eq!(verdict_of(&project, "0804"), "FAIL");
    out.stdout_json()
}

fn codes(doc: &serde_json::Value) -> Vec<String> {
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_50_mb_answer_is_refused_unread() {
    let mut bytes = b"Verdict: PASS\n".to_vec();
    bytes.resize(50 * 1024 * 1024, b'a');
    let doc = hostile(&bytes);
    assert_eq!(codes(&doc), ["spur::answer::too-large"]);
}

#[test]
fn a_table_with_10000_columns_is_a_row_diagnostic() {
    let header = format!("|{}\n", " Req |".repeat(10_000));
    let delimiter = format!("|{}\n", "---|".repeat(10_000));
    let row = format!("| R1 |{}\n", " MET |".repeat(9_999));
    let text = format!(
        "Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n{row}\n{header}{delimiter}{row}"
    );
    let doc = hostile(text.as_bytes());
    let codes = codes(&doc);
    assert!(
        codes.contains(&"spur::answer::wrong-column-count".to_owned()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"spur::answer::table-header-mismatch".to_owned()),
        "{codes:?}"
    );
    let rows = doc["diagnostics"].as_array().unwrap();
    assert!(rows
        .iter()
        .all(|d| d["row"].as_str().map_or(0, |r| r.chars().count()) <= 201));
}

#[test]
fn binary_bytes_are_not_an_answer() {
    let mut bytes = b"Verdict: PASS\n| Req | Status | Evidence |\n".to_vec();
    bytes.extend((0..=255u8).cycle().take(4096));
    let doc = hostile(&bytes);
    assert_eq!(codes(&doc), ["spur::answer::not-utf8"]);
    // the byte run 0..=255 holds one newline (byte 10) before the first invalid byte (128)
    assert_eq!(doc["diagnostics"][0]["line"], 4);
}

#[test]
fn unterminated_code_spans_are_literal_text() {
    let text = "Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | MET | `src/answer_parser.rs:1 |\n| R2 | ``MET | ``` |\n| R3 | MET | see `the writer |\n| R3 | MET | ```````````````````````` `` ` |\n";
    let doc = hostile(text.as_bytes());
    let codes = codes(&doc);
    assert!(
        codes.contains(&"spur::answer::invalid-status".to_owned()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"spur::answer::missing-anchor".to_owned()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"spur::answer::empty-evidence".to_owned()),
        "{codes:?}"
    );
    assert!(
        !codes.contains(&"spur::answer::wrong-column-count".to_owned()),
        "an unclosed backtick does not swallow the pipes: {codes:?}"
    );
}

/// The derived artifact is what the done gate reads: a lint failure replaces an earlier
/// PASS with an explicit FAIL, so the task cannot be marked done on stale evidence.
#[test]
fn the_done_gate_reads_the_derived_artifact_and_a_lint_failure_denies() {
    let project = example_project();
    let pass = with_answer(&project, "pass.md");
    let bad = with_answer(&project, "paraphrased-ac.md");
    let done = |project: &Spur| {
        project
            .args(["task", "update", "0804", "done", "--json"])
            .run()
    };
    task_verdict(&project, "0804", &pass).run().success();
    task_verdict(&project, "0804", &bad).run().code(1);
    let doc = done(&project).code(1).stdout_json();
    assert!(
        doc.to_string().contains("FAIL"),
        "the denial names the FAIL verdict: {doc}"
    );

    task_verdict(&project, "0804", &pass).run().success();
    done(&project).success();
}

#[test]
fn thousands_of_bad_rows_each_get_their_diagnostic() {
    let mut text = String::from("Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n");
    for i in 0..5_000 {
        text.push_str(&format!("| R{i}x | DONE | src/missing_{i}.rs:{i} |\n"));
    }
    text.push_str("\n| AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n");
    for i in 0..5_000 {
        text.push_str(&format!(
            "| The parser reads {i} tables | MET | test | src/answer_parser.rs:{i} |\n"
        ));
    }
    let doc = hostile(text.as_bytes());
    let codes = codes(&doc);
    let count = |code: &str| codes.iter().filter(|c| c.as_str() == code).count();
    assert_eq!(count("spur::answer::unknown-requirement"), 5_000);
    assert_eq!(count("spur::answer::unresolved-ac"), 5_000);
    assert_eq!(count("spur::answer::anchor-file-missing"), 5_000);
    assert_eq!(count("spur::answer::missing-requirement"), 3);
}
