//! `jq` guard expressions are compiled at check time (jaq), so a syntax error or an
//! undefined filter or variable is reported by `spur check` with a span inside the
//! expression, not discovered mid-run. `$vars` and every known var as `$name` are bound,
//! as the runtime binds them.

use crate::diagnostic::Diagnostic;
use crate::pipeline::scalar_span::ScalarSpan;
use crate::source::{Located, SourceFile};

/// A jq compile error: message and byte range inside the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JqError {
    pub message: String,
    pub start: usize,
    pub end: usize,
}

/// Compile `expr` with jaq (core + std + json definitions), with `$vars` and `$name` for
/// each of `vars` as global variables. Returns every error found.
pub fn compile(expr: &str, vars: &[&str]) -> Result<(), Vec<JqError>> {
    use jaq_core::load::{Arena, File, Loader};
    let offset_of = |slice: &str| -> (usize, usize) {
        let base = expr.as_ptr() as usize;
        let at = slice.as_ptr() as usize;
        match at.checked_sub(base) {
            Some(start) if start + slice.len() <= expr.len() => (start, start + slice.len()),
            _ => (0, expr.len()),
        }
    };
    let arena = Arena::default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let loader = Loader::new(defs);
    let modules = match loader.load(
        &arena,
        File {
            code: expr,
            path: (),
        },
    ) {
        Ok(modules) => modules,
        Err(errors) => {
            let mut out = Vec::new();
            for (_, error) in errors {
                match error {
                    jaq_core::load::Error::Io(items) => {
                        for (path, message) in items {
                            let (start, end) = offset_of(path);
                            out.push(JqError {
                                message: format!("cannot import `{path}`: {message}"),
                                start,
                                end,
                            });
                        }
                    }
                    jaq_core::load::Error::Lex(items) => {
                        for (expect, found) in items {
                            let (start, end) = offset_of(found);
                            out.push(JqError {
                                message: format!("expected {}", lex_expect(&expect)),
                                start,
                                end: end.max(start + 1).min(expr.len().max(start)),
                            });
                        }
                    }
                    jaq_core::load::Error::Parse(items) => {
                        for (expect, found) in items {
                            let (start, end) = offset_of(found);
                            let found_text = if found.is_empty() {
                                "end of expression".to_owned()
                            } else {
                                format!("`{found}`")
                            };
                            out.push(JqError {
                                message: format!(
                                    "expected {}, found {found_text}",
                                    expect.as_str()
                                ),
                                start,
                                end,
                            });
                        }
                    }
                }
            }
            return Err(out);
        }
    };
    let globals: Vec<String> = std::iter::once("$vars".to_owned())
        .chain(vars.iter().map(|v| format!("${v}")))
        .collect();
    type Data = jaq_core::data::JustLut<jaq_json::Val>;
    let compiler = jaq_core::Compiler::default()
        .with_funs(
            jaq_core::funs::<Data>()
                .chain(jaq_std::funs::<Data>())
                .chain(jaq_json::funs::<Data>()),
        )
        .with_global_vars(globals.iter().map(String::as_str));
    match compiler.compile(modules) {
        Ok(_) => Ok(()),
        Err(errors) => Err(errors
            .into_iter()
            .flat_map(|(_, errs)| errs)
            .map(|(name, undefined)| {
                let (start, end) = offset_of(name);
                let what = match undefined {
                    jaq_core::compile::Undefined::Filter(arity) => {
                        format!("undefined filter `{name}/{arity}`")
                    }
                    other => format!("undefined {} `{name}`", other.as_str()),
                };
                JqError {
                    message: what,
                    start,
                    end,
                }
            })
            .collect()),
    }
}

fn lex_expect(expect: &jaq_core::load::lex::Expect<&str>) -> &'static str {
    use jaq_core::load::lex::Expect;
    match expect {
        Expect::Digit => "a digit",
        Expect::Ident => "an identifier",
        Expect::Delim("(") => "a closing parenthesis",
        Expect::Delim("[") => "a closing bracket",
        Expect::Delim("{") => "a closing brace",
        Expect::Delim("\"") => "a closing quote",
        Expect::Delim(_) => "a closing delimiter",
        Expect::Escape => "a string escape sequence",
        Expect::Unicode => "a 4-digit hexadecimal code point",
        Expect::Token => "a token",
        _ => "a different token",
    }
}

/// Diagnostics for a jq expression option, pointing inside the expression.
pub fn check_expr(
    source: &SourceFile,
    expr: &Located<String>,
    vars: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    let Err(errors) = compile(&expr.value, vars) else {
        return;
    };
    let map = ScalarSpan::new(expr, Some(source));
    for error in errors {
        let mut d = Diagnostic::error(
            "spur::check::jq-compile",
            source,
            map.range(error.start, error.end.max(error.start)),
            format!("the jq expression does not compile: {}", error.message),
        )
        .label(error.message.clone());
        d = if error.message.starts_with("undefined variable") {
            d.help("jq guards bind `$vars` and each declared var as `$name`; declare the var under `vars:`")
        } else {
            d.help("fix the expression; try it with `spur jq` on a sample input")
        };
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_std_filters_and_bound_vars() {
        assert_eq!(
            compile(".verdict == \"PASS\" and ($vars.wbs | length) > 0", &[]),
            Ok(())
        );
        assert_eq!(compile("$wbs | test(\"^[0-9]+$\")", &["wbs"]), Ok(()));
    }

    #[test]
    fn reports_syntax_errors_inside_the_expression() {
        let errors = compile(".a ==", &[]).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.starts_with("expected term"), "{errors:?}");
        let errors = compile(".a | (.b", &[]).unwrap_err();
        assert_eq!(errors[0].start, 5, "{errors:?}");
    }

    #[test]
    fn reports_undefined_filters_and_vars_with_their_place() {
        let errors = compile(".a | nosuch", &[]).unwrap_err();
        assert_eq!((errors[0].start, errors[0].end), (5, 11), "{errors:?}");
        assert!(errors[0].message.contains("nosuch"));
        let errors = compile("$missing", &["wbs"]).unwrap_err();
        assert_eq!(errors[0].message, "undefined variable `$missing`");
    }
}
