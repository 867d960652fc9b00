//! The promise of shell templates, as a search: over random shell text built from a grammar
//! of quoting constructs, substitutions, here-documents, `case`, arithmetic, backslashes,
//! comments and commands that run their arguments, with templates (holes) anywhere in it,
//! and random hostile values, either `render` refuses the text, or running what it renders
//! under dash and under bash as `sh` never creates the marker file, and every statement
//! that prints the value prints it literally.
//!
//! `PROPTEST_CASES=N` runs N scripts (each under both shells; default 300, a few seconds).
//! The shells must be installed (`apt-get install bash dash`): the test fails otherwise.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{TestCaseError, TestRunner};
use spur_guards::shell_template::render;
use spur_process::{ProcessSpec, ProcessStatus};

/// Stands for a template in generated text; never part of the shell text itself.
const HOLE: char = '\u{1}';
const VAR: &str = "SPUR_VAR_x";

/// A statement of a generated script: its text (with `HOLE`s) and, when it prints the
/// value, the line it must print.
#[derive(Debug, Clone)]
struct Statement {
    text: String,
    prints: Option<Printed>,
}

/// What a statement prints.
#[derive(Debug, Clone)]
enum Printed {
    /// `[{pre}{value}{post}]\n`, `times` times, with the value's trailing newlines dropped
    /// when it went through `$(…)` (the shell does that, not spur).
    Value {
        pre: &'static str,
        post: &'static str,
        trimmed: bool,
        times: usize,
    },
    /// A line that does not depend on the value (a `case` that must match it literally).
    Fixed(&'static str),
}

impl Printed {
    fn expected(&self, value: &str) -> String {
        match self {
            Printed::Value {
                pre,
                post,
                trimmed,
                times,
            } => {
                let v = if *trimmed {
                    value.trim_end_matches('\n')
                } else {
                    value
                };
                format!("[{pre}{v}{post}]\n").repeat(*times)
            }
            Printed::Fixed(line) => (*line).to_owned(),
        }
    }
}

fn h(text: &str) -> String {
    text.replace('@', &HOLE.to_string())
}

/// Statements that print the value in a known place.
fn printing() -> impl Strategy<Value = Statement> {
    let p = |text: &str, pre, post, trimmed| Statement {
        text: h(text),
        prints: Some(Printed::Value {
            pre,
            post,
            trimmed,
            times: 1,
        }),
    };
    let fixed = |text: &str, line| Statement {
        text: h(text),
        prints: Some(Printed::Fixed(line)),
    };
    let twice = |text: &str| Statement {
        text: h(text),
        prints: Some(Printed::Value {
            pre: "",
            post: "",
            trimmed: false,
            times: 2,
        }),
    };
    select(vec![
        p("printf '[%s]\\n' @", "", "", false),
        p("printf '[%s]\\n' a@b", "a", "b", false),
        p("printf '[%s]\\n' \"a @ b\"", "a ", " b", false),
        p("printf '[%s]\\n' \"it's @\"", "it's ", "", false),
        p("printf '[%s]\\n' 'a @ b'", "a ", " b", false),
        p("printf '[%s]\\n' 'say \"@\"'", "say \"", "\"", false),
        p("printf '[%s]\\n' \\\"@\\'", "\"", "'", false),
        p("printf '[%s]\\n' \"$(printf '%s' @)\"", "", "", true),
        p("printf '[%s]\\n' \"$(printf '%s' \"@\")\"", "", "", true),
        p("printf '[%s]\\n' \"$(printf '%s' '@')\"", "", "", true),
        p(
            "printf '[%s]\\n' \"$(case a in a) printf '%s' @;; esac)\"",
            "",
            "",
            true,
        ),
        p(
            "printf '[%s]\\n' \"$(case a in (a) printf '%s' \"@\";; esac)\"",
            "",
            "",
            true,
        ),
        p(
            "printf '[%s]\\n' \"$(echo \")\" >/dev/null; printf '%s' @)\"",
            "",
            "",
            true,
        ),
        p("y=@; printf '[%s]\\n' \"$y\"", "", "", false),
        p("export Y=\"@\"; printf '[%s]\\n' \"$Y\"", "", "", false),
        fixed("case @ in @) echo yes;; *) echo no;; esac", "yes\n"),
        fixed("case x@ in x@|y) echo yes;; *) echo no;; esac", "yes\n"),
        p("cat <<EOF\n[@]\nEOF", "", "", false),
        p("cat <<-EOF\n\t[@]\n\tEOF", "", "", false),
        p("cat <<EOF\n['\"@\"']\nEOF", "'\"", "\"'", false),
        twice("cat <<EOF; printf '[%s]\\n' '@'\n[@]\nEOF"),
        p("printf '[%s]\\n' \\\n  @", "", "", false),
        p("printf '[%s]\\n' @ # it's \"@\" `@`", "", "", false),
        p("printf '[%s]\\n' \"$(printf '%s' @ # )\n)\"", "", "", true),
    ])
}

/// Statements that shape the quoting around them, print nothing to stdout, and may hold
/// holes in places spur must refuse (or place safely).
fn shaping() -> impl Strategy<Value = Statement> {
    let s = |text: &str| Statement {
        text: h(text),
        prints: None,
    };
    select(vec![
        s(": 'a\"b' \"c'd\" \\\" \\' \\\\"),
        s(": # a comment with ' and \" and $( and `"),
        s(": \"$(echo \")\")\" >/dev/null"),
        s(": <<'EOF'\n' \" $( ` \\\nEOF"),
        s(": <<EOF\n' \"\nEOF"),
        s("case x in (x) : ;; esac"),
        s(": $((1 + 2)) $# $$ $?"),
        s("f() { :; }; f"),
        s(": $'abc'"),
        s("x='multi\nline'"),
        s(": \\\n  continued"),
        s("if true; then :; fi"),
        s("for i in 1 2; do :; done"),
        s("true && : || :"),
        s(": \"@\""),
        s(": '@' @"),
        s("true # @"),
        // Positions spur must refuse.
        s(": \\@"),
        s(": \"\\@\""),
        s(": $@"),
        s(": $'@'"),
        s(": $\"@\""),
        s(": `printf %s @`"),
        s(": \"`printf %s @`\""),
        s(": $((@))"),
        s(": $[@]"),
        s("((@))"),
        s("[[ @ -eq 1 ]] 2>/dev/null"),
        s("cat <<'EOF' >/dev/null\n@\nEOF"),
        s("cat <<E@ >/dev/null\nx\nE"),
        s("a[@]=1 2>/dev/null"),
        s("eval \": @\""),
        s("trap ': @' EXIT"),
        s("sh -c \": @\""),
        s("read @ </dev/null"),
        s("test -v @"),
        s("alias e=eval; e : @"),
        s(": $'a\\'b'"),
        s("cat <<EOF >/dev/null\n$(echo\nEOF\n)\nEOF"),
    ])
}

/// Wrap a statement in a construct that does not change what it prints.
fn wrapped() -> impl Strategy<Value = Statement> {
    let statement = prop_oneof![3 => printing(), 2 => shaping()];
    (
        statement,
        select(vec![
            "{}",
            "( {}\n)",
            "{ {}\n}",
            "if true; then {}\nfi",
            "for i in 1; do {}\ndone",
            "case a in a) {}\n;; esac",
            "while false; do :; done; {}",
        ]),
    )
        .prop_map(|(s, wrapper)| Statement {
            text: wrapper.replace("{}", &s.text),
            prints: s.prints,
        })
}

/// A value a var could hold (no NUL: an environment variable cannot carry one), drawn
/// heavily from shell syntax and payloads that create the marker.
fn value() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        2 => any::<char>().prop_filter("no NUL", |c| *c != '\0').prop_map(String::from),
        5 => select(vec![
            "'", "\"", "\\", "$", "`", "(", ")", "{", "}", ";", "&", "|", "<", ">", "\n",
            "\t", " ", "#", "*", "?", "[", "]", "~", "!", "=", "-n", "EOF", "\nEOF\n",
            "$(touch pwned)", "`touch pwned`", "; touch pwned", "'; touch pwned #",
            "\"; touch pwned #", "a[$(touch pwned)]", "$((1+1))", "${IFS}", "\\'", "\\\"",
            ")", ";;", "esac", "\ttouch pwned\n", "\n)\n",
        ])
        .prop_map(str::to_owned),
    ];
    prop_oneof![
        3 => proptest::collection::vec(token, 0..8).prop_map(|t| t.concat()),
        // Whole payloads, which only work unbroken (bash's arithmetic needs a clean `a[…]`).
        2 => select(vec![
            "a[$(touch pwned)]", "$(touch pwned)", "x; touch pwned", "'; touch pwned #",
            "\"; touch pwned #", "a\nEOF\ntouch pwned\nEOF", "x)\ntouch pwned\n(",
        ])
        .prop_map(str::to_owned),
    ]
}

/// The shells, each as `sh` (a symlink, so bash runs in POSIX mode).
fn shells(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    ["dash", "bash"]
        .into_iter()
        .map(|shell| {
            let exe = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(shell))
                .find(|p| p.exists())
                .unwrap_or_else(|| {
                    panic!("this test runs under dash and bash as sh: apt-get install bash dash")
                });
            let link_dir = dir.join(shell);
            std::fs::create_dir_all(&link_dir).unwrap();
            let sh = link_dir.join("sh");
            if !sh.exists() {
                std::os::unix::fs::symlink(exe, &sh).unwrap();
            }
            (shell, sh)
        })
        .collect()
}

fn check(
    shells: &[(&str, PathBuf)],
    work: &Path,
    script: &[Statement],
    value: &str,
) -> Result<bool, TestCaseError> {
    let text_with_holes: String = script
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut text = String::new();
    let mut holes = Vec::new();
    for c in text_with_holes.chars() {
        if c == HOLE {
            holes.push(text.len());
        } else {
            text.push(c);
        }
    }
    let references: Vec<(usize, &str)> = holes.iter().map(|&h| (h, VAR)).collect();
    let Ok(rendered) = render(&text, &references) else {
        return Ok(false);
    };
    let expected: String = script
        .iter()
        .filter_map(|s| s.prints.as_ref())
        .map(|p| p.expected(value))
        .collect();
    for (name, sh) in shells {
        let dir = tempfile::tempdir_in(work).unwrap();
        let out = ProcessSpec::new(sh, ["-c", &rendered])
            .cwd(dir.path())
            .env(VAR, value)
            .run();
        let marker = dir.path().join("pwned").exists();
        prop_assert!(
            !marker,
            "{name} ran the value {value:?}\ntext: {text:?}\nrendered: {rendered:?}"
        );
        {
            prop_assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                expected.clone(),
                "{} printed the value {:?} wrongly\nrendered: {:?}\nstderr: {}",
                name,
                value,
                rendered,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        prop_assert!(
            !matches!(out.status, ProcessStatus::TimedOut),
            "{name} hung on {rendered:?}"
        );
    }
    Ok(true)
}

#[test]
fn generated_shell_text_never_runs_a_value_under_dash_or_bash() {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let work = tempfile::tempdir().unwrap();
    let shells = shells(work.path());
    let ran = std::cell::Cell::new(0u32);
    let refused = std::cell::Cell::new(0u32);
    let script = proptest::collection::vec(wrapped(), 1..5);
    let result = TestRunner::new(config).run(&(script, value()), |(script, value)| {
        if check(&shells, work.path(), &script, &value)? {
            ran.set(ran.get() + 1);
        } else {
            refused.set(refused.get() + 1);
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("counterexample: {error}");
    }
    eprintln!(
        "shell templates: {} scripts rendered and run under dash and bash, {} refused, 0 failures",
        ran.get(),
        refused.get()
    );
    // The grammar is weighted so that most scripts run: a lexer refusing everything would
    // pass the property vacuously.
    assert!(
        ran.get() * 4 >= cases,
        "only {} of {cases} scripts ran",
        ran.get()
    );
}
