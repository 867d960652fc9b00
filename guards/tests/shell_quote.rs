//! Injection tests: a var value substituted into shell text is one literal
//! string in every quoting context — nothing in it is executed, and the exact value arrives.
//! Each case really runs `sh -c` (and `bash -c` for the named nasty values).

use std::path::Path;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{TestCaseError, TestRunner};
use spur_guards::process::{ProcessSpec, ProcessStatus};
use spur_guards::shell_quote::{render_shell, ShellEscapeError};

const PLACEHOLDER: &str = "${vars.x}";

/// Values that would run code or split words if pasted raw.
const NASTY: &[&str] = &[
    "$(touch pwned)",
    "`touch pwned`",
    "`id`",
    "'; touch pwned; '",
    "\"; touch pwned; \"",
    "\"",
    "'",
    "\\",
    "\\'",
    "\\\"",
    "a\nb",
    "\n",
    "line1\ntouch pwned\n",
    "x\n# comment\ntouch pwned",
    "$HOME",
    "${HOME}",
    "$((1+1))",
    "*",
    "~",
    "a b  c",
    "\ttab",
    "-n",
    "%s%d",
    "; touch pwned",
    "&& touch pwned",
    "| touch pwned",
    "> pwned",
    "$(touch pwned)`touch pwned`'\"\\$",
    "héllo wörld ✓ 日本",
    "EOF",
    "",
    "}",
    "${x:-$(touch pwned)}",
    "!!",
];

struct Position {
    name: &'static str,
    /// Shell text with `${vars.x}` in it; it prints something to stdout.
    template: &'static str,
    /// Expected stdout for a value.
    expect: fn(&str) -> String,
    multiline_ok: bool,
}

fn literal(v: &str) -> String {
    v.to_owned()
}

fn command_substituted(v: &str) -> String {
    // `$( … )` and backticks strip trailing newlines: that is sh, not us.
    v.trim_end_matches('\n').to_owned()
}

const POSITIONS: &[Position] = &[
    Position {
        name: "unquoted",
        template: "printf '%s' ${vars.x}",
        expect: literal,
        multiline_ok: true,
    },
    Position {
        name: "unquoted-glued",
        template: "printf '%s' pre${vars.x}post",
        expect: |v| format!("pre{v}post"),
        multiline_ok: true,
    },
    Position {
        name: "double-quoted",
        template: r#"printf '%s' "${vars.x}""#,
        expect: literal,
        multiline_ok: true,
    },
    Position {
        name: "double-quoted-with-text",
        template: r#"printf '%s' "a ${vars.x} b""#,
        expect: |v| format!("a {v} b"),
        multiline_ok: true,
    },
    Position {
        name: "single-quoted",
        template: "printf '%s' '${vars.x}'",
        expect: literal,
        multiline_ok: true,
    },
    Position {
        name: "single-quoted-with-text",
        template: "printf '%s' 'a ${vars.x} b'",
        expect: |v| format!("a {v} b"),
        multiline_ok: true,
    },
    Position {
        name: "command-substitution-in-double-quotes",
        template: r#"printf '%s' "$(printf '%s' ${vars.x})""#,
        expect: command_substituted,
        multiline_ok: true,
    },
    Position {
        name: "backticks",
        template: "printf '%s' \"`printf '%s' ${vars.x}`\"",
        expect: command_substituted,
        multiline_ok: true,
    },
    Position {
        name: "comment",
        template: "printf ok # ${vars.x}",
        expect: |_| "ok".to_owned(),
        multiline_ok: true,
    },
    Position {
        name: "here-document",
        template: "cat <<EOF\n${vars.x}\nEOF",
        expect: |v| format!("{v}\n"),
        multiline_ok: false,
    },
    Position {
        name: "quoted-here-document",
        template: "cat <<'EOF'\n${vars.x}\nEOF",
        expect: |v| format!("{v}\n"),
        multiline_ok: false,
    },
];

fn render(template: &str, value: &str) -> Result<String, ShellEscapeError> {
    let subs: Vec<_> = template
        .match_indices(PLACEHOLDER)
        .map(|(at, _)| (at..at + PLACEHOLDER.len(), value.to_owned()))
        .collect();
    render_shell(template, &subs)
}

fn run_in(shell: &str, dir: &Path, command: &str) -> (ProcessStatus, Vec<u8>) {
    let out = ProcessSpec::new(shell, ["-c", command])
        .cwd(dir)
        .env("x", "env-value")
        .run();
    (out.status, out.stdout)
}

fn check(shell: &str, position: &Position, value: &str) {
    let dir = tempfile::tempdir().unwrap();
    let rendered = match render(position.template, value) {
        Ok(text) => text,
        Err(ShellEscapeError::NewlineInHereDoc) => {
            assert!(
                !position.multiline_ok && value.contains('\n'),
                "{} refused {value:?}",
                position.name
            );
            return;
        }
        Err(ShellEscapeError::DelimiterInHereDoc(delimiter)) => {
            assert!(
                !position.multiline_ok && value == delimiter,
                "{} refused {value:?}",
                position.name
            );
            return;
        }
        Err(e) => panic!("{}: {value:?}: {e}", position.name),
    };
    let (status, stdout) = run_in(shell, dir.path(), &rendered);
    let expected = (position.expect)(value);
    assert_eq!(
        status,
        ProcessStatus::Exited(0),
        "{shell} {}: {value:?} rendered as {rendered:?}",
        position.name
    );
    assert_eq!(
        String::from_utf8_lossy(&stdout),
        expected,
        "{shell} {}: {value:?} rendered as {rendered:?}",
        position.name
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "{shell} {}: {value:?} created files: {leftovers:?}",
        position.name
    );
}

fn has(shell: &str) -> bool {
    ProcessSpec::new(shell, ["-c", "true"]).run().success()
}

#[test]
fn nasty_values_arrive_literally_in_every_position_under_sh() {
    for position in POSITIONS {
        for value in NASTY {
            check("sh", position, value);
        }
    }
}

#[test]
fn nasty_values_arrive_literally_in_every_position_under_bash() {
    if !has("bash") {
        eprintln!("bash not installed; sh covered by the other test");
        return;
    }
    for position in POSITIONS {
        for value in NASTY {
            check("bash", position, value);
        }
    }
}

/// A value a var could hold: any text without NUL (a C string cannot carry one), drawn
/// heavily from shell metacharacters and payloads so that near-misses are likely.
fn var_value() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        3 => any::<char>().prop_filter("NUL cannot be in a var", |c| *c != '\0').prop_map(String::from),
        1 => "[\x01-\x1f\x7f]".prop_map(String::from),
        4 => select(vec![
            "'", "\"", "\\", "$", "`", "(", ")", "{", "}", ";", "&", "|", "<", ">", "\n",
            "\r", " ", "\t", "#", "*", "?", "[", "]", "~", "!", "=", "%", "-", "a", "é", "✓",
            "$(", "${", "$((", "'\\''", "\\'", "\\\"", "touch pwned", "; touch pwned",
            "`touch pwned`", "$(touch pwned)", "EOF", "$HOME", "$x", "${x}", "%s", "\\0",
        ])
        .prop_map(str::to_owned),
    ];
    proptest::collection::vec(token, 0..16).prop_map(|tokens| tokens.concat())
}

/// Positions for the generated search: every context except here-documents, whose
/// refusals (a newline, a delimiter line) are pinned by the named tests below. Each
/// prints its word followed by a NUL, so one `sh` can check many values.
const BATCH_POSITIONS: &[Position] = &[
    batch("unquoted", "printf '%s\\0' ${vars.x}", literal),
    batch("unquoted-glued", "printf '%s\\0' pre${vars.x}post", |v| {
        format!("pre{v}post")
    }),
    batch("double-quoted", r#"printf '%s\0' "${vars.x}""#, literal),
    batch(
        "double-quoted-with-text",
        r#"printf '%s\0' "a ${vars.x} b""#,
        |v| format!("a {v} b"),
    ),
    batch("single-quoted", "printf '%s\\0' '${vars.x}'", literal),
    batch(
        "single-quoted-with-text",
        "printf '%s\\0' 'a ${vars.x} b'",
        |v| format!("a {v} b"),
    ),
    batch(
        "command-substitution-in-double-quotes",
        r#"printf '%s\0' "$(printf '%s' ${vars.x})""#,
        command_substituted,
    ),
    batch(
        "backticks",
        "printf '%s\\0' \"`printf '%s' ${vars.x}`\"",
        command_substituted,
    ),
    batch("comment", "printf '%s\\0' ok # ${vars.x}", |_| {
        "ok".to_owned()
    }),
];

const fn batch(name: &'static str, template: &'static str, expect: fn(&str) -> String) -> Position {
    Position {
        name,
        template,
        expect,
        multiline_ok: true,
    }
}

/// Values checked per `sh` invocation; a failing batch shrinks to its failing value.
const BATCH: usize = 10;

/// Render every value in every batch position as one script (one line each, so the scan
/// also crosses many earlier substitutions), run it once, and compare word by word.
fn check_batch(dir: &Path, values: &[String]) -> Result<(), TestCaseError> {
    let mut script = String::new();
    let mut subs = Vec::new();
    let mut expected = Vec::new();
    for value in values {
        for position in BATCH_POSITIONS {
            let at = script.len() + position.template.find(PLACEHOLDER).unwrap();
            subs.push((at..at + PLACEHOLDER.len(), value.clone()));
            script.push_str(position.template);
            script.push('\n');
            expected.push((position.expect)(value));
        }
    }
    let rendered = render_shell(&script, &subs)
        .map_err(|e| TestCaseError::fail(format!("{values:?} refused: {e}")))?;
    let out = ProcessSpec::new("sh", ["-c", &rendered])
        .cwd(dir)
        .env("x", "env-value")
        .run();
    prop_assert_eq!(
        &out.status,
        &ProcessStatus::Exited(0),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    prop_assert!(
        out.stderr.is_empty(),
        "stderr: {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    // Every word ends with a NUL, so the split leaves one empty tail.
    prop_assert_eq!(
        words.len(),
        expected.len() + 1,
        "word count; rendered {:?}",
        rendered
    );
    for (i, (word, want)) in words.iter().zip(&expected).enumerate() {
        let value = &values[i / BATCH_POSITIONS.len()];
        let position = BATCH_POSITIONS[i % BATCH_POSITIONS.len()].name;
        prop_assert_eq!(word, want, "{} {:?}", position, value);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    prop_assert!(
        leftovers.is_empty(),
        "{values:?} created files: {leftovers:?}"
    );
    Ok(())
}

/// Shell safety as a search: for generated values (at least 10,000: `PROPTEST_CASES`
/// batches of ten, default 1,000), `sh -c` prints exactly the literal value in every
/// position, exits 0, writes nothing to stderr, and creates no file.
#[test]
fn generated_values_arrive_literally_in_every_position() {
    let batches: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let config = ProptestConfig {
        cases: batches,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let checked = AtomicUsize::new(0);
    let result =
        TestRunner::new(config).run(&proptest::collection::vec(var_value(), BATCH), |values| {
            checked.fetch_add(values.len(), Ordering::Relaxed);
            check_batch(dir.path(), &values)
        });
    if let Err(error) = result {
        panic!("counterexample: {error}");
    }
    let checked = checked.load(Ordering::Relaxed);
    assert!(checked >= batches as usize * BATCH);
    eprintln!(
        "property shell escaping: {checked} values × {} positions, {batches} sh runs, 0 failures",
        BATCH_POSITIONS.len()
    );
}

#[test]
fn a_multi_line_value_in_a_here_document_is_refused_not_run() {
    assert_eq!(
        render("cat <<EOF\n${vars.x}\nEOF", "a\nEOF\ntouch pwned"),
        Err(ShellEscapeError::NewlineInHereDoc)
    );
}

#[test]
fn a_value_that_would_end_a_here_document_is_refused_not_run() {
    assert_eq!(
        render("cat <<-EOF\n\t${vars.x}\nEOF\ntouch pwned", "EOF"),
        Err(ShellEscapeError::DelimiterInHereDoc("EOF".to_owned()))
    );
}

#[test]
fn vars_as_environment_variables_are_never_re_parsed() {
    // The other safe path: the corpus writes `$x`, which sh expands once.
    let dir = tempfile::tempdir().unwrap();
    let out = ProcessSpec::shell(r#"printf '%s' "$x""#)
        .cwd(dir.path())
        .env("x", "$(touch pwned)`touch pwned`")
        .run();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "$(touch pwned)`touch pwned`"
    );
    assert!(!dir.path().join("pwned").exists());
}
