//! A shell guard `test "$(jq -r EXPR FILE)" = VALUE` spawns a shell and a jq process to
//! compare one JSON field; a native `jq` guard does the same in the run's jq worker (tens of
//! µs instead of milliseconds) and is checked at load time. This finding (info) shows the
//! rewrite.

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::guard_kind::GuardKind;

/// The parts of `test "$(jq -r EXPR FILE [2>/dev/null])" = VALUE`.
#[derive(Debug, PartialEq, Eq)]
struct ShellJq {
    expr: String,
    file: String,
    value: String,
}

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for t in &p.transitions {
        let Some(GuardKind::Shell(options)) = t.guard.as_ref().map(|g| &g.kind.value) else {
            continue;
        };
        let Some(command) = options.command.written_str() else {
            continue;
        };
        let Some(found) = parse(&command.value) else {
            continue;
        };
        let file = shell_vars_to_templates(&found.file, &cx.vars);
        let expr = format!(
            "{} == {}",
            found.expr,
            serde_json::Value::String(found.value.clone())
        );
        let d = Diagnostic::info(
            Code::CheckShellJqGuard,
            &p.source,
            command.span,
            "this shell guard only compares one JSON value: it can be a native `jq` guard",
        )
        .label("spawns a shell and jq at every evaluation")
        .help(format!(
            "rewrite it as:\n    guard:\n      kind: jq\n      options:\n        file: {file}\n        expr: '{}'",
            expr.replace('\'', "''")
        ));
        cx.push(d);
    }
}

fn parse(command: &str) -> Option<ShellJq> {
    let s = command.trim().strip_prefix("test")?;
    let s = s.strip_prefix(char::is_whitespace)?.trim_start();
    let s = s.strip_prefix("\"$(")?.trim_start();
    let s = s.strip_prefix("jq")?;
    let s = s.strip_prefix(char::is_whitespace)?.trim_start();
    let s = s.strip_prefix("-r")?;
    let s = s.strip_prefix(char::is_whitespace)?.trim_start();
    let (expr, s) = word(s)?;
    let (file, s) = word(s.trim_start())?;
    let s = s.trim_start();
    let s = s.strip_prefix("2>/dev/null").unwrap_or(s).trim_start();
    let s = s.strip_prefix(")\"")?.trim_start();
    let s = s.strip_prefix('=')?;
    let s = s.strip_prefix('=').unwrap_or(s).trim_start();
    let (value, rest) = word(s)?;
    if !rest.trim().is_empty() || value.contains('$') || expr.contains('$') {
        return None;
    }
    Some(ShellJq { expr, file, value })
}

/// One shell word: '…', "…" (backslash escapes) or bare text up to whitespace or `)`.
fn word(s: &str) -> Option<(String, &str)> {
    if let Some(rest) = s.strip_prefix('\'') {
        let end = rest.find('\'')?;
        return Some((rest.get(..end)?.to_owned(), rest.get(end + 1..)?));
    }
    if let Some(rest) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((out, rest.get(i + 1..)?)),
                '\\' => out.push(chars.next()?.1),
                '`' => return None,
                c => out.push(c),
            }
        }
        return None;
    }
    let end = s
        .find(|c: char| {
            c.is_whitespace()
                || c == ')'
                || c == '"'
                || c == '\''
                || c == ';'
                || c == '&'
                || c == '|'
        })
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((s.get(..end)?.to_owned(), s.get(end..)?))
}

/// `$wbs` / `${wbs}` → `${vars.wbs}` for known vars (shell steps see vars as env vars).
fn shell_vars_to_templates(text: &str, vars: &[&str]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i + 1..).unwrap_or("");
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (braced.get(..end).unwrap_or(""), end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (after.get(..end).unwrap_or(""), end)
        };
        if !name.is_empty() && vars.contains(&name) {
            out.push_str(&format!("${{vars.{name}}}"));
            rest = after.get(consumed..).unwrap_or("");
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_corpus_verdict_guard() {
        let found =
            parse(r#"test "$(jq -r .verdict .spur/run/$wbs-verdict.json 2>/dev/null)" = PASS"#)
                .unwrap();
        assert_eq!(
            found,
            ShellJq {
                expr: ".verdict".into(),
                file: ".spur/run/$wbs-verdict.json".into(),
                value: "PASS".into()
            }
        );
        assert_eq!(
            shell_vars_to_templates(&found.file, &["wbs"]),
            ".spur/run/${vars.wbs}-verdict.json"
        );
    }

    #[test]
    fn accepts_quoted_words() {
        let found = parse(r#"test "$(jq -r '.a.b' "f.json")" == "x y""#).unwrap();
        assert_eq!(
            (
                found.expr.as_str(),
                found.file.as_str(),
                found.value.as_str()
            ),
            (".a.b", "f.json", "x y")
        );
    }

    #[test]
    fn ignores_compound_commands_and_inequality() {
        assert_eq!(parse(r#"test "$(jq -r .a f)" = A && true"#), None);
        assert_eq!(parse(r#"test "$(jq -r .a f)" != A"#), None);
        assert_eq!(parse(r#"test "$(cat f)" = A"#), None);
    }
}
