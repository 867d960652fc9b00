//! `jq` guard expressions are compiled at check time, with the same compiler the guard
//! uses at run time (`spur_guards::jq`), so a syntax error or an
//! undefined filter or variable is reported by `spur check` with a span inside the
//! expression, not discovered mid-run. `$vars` and every known var as `$name` are bound,
//! as the runtime binds them.

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::scalar_span::ScalarSpan;
use crate::source::{Located, SourceFile};

/// A jq compile error: message and byte range inside the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JqError {
    pub(crate) message: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Compile `expr` as a jq guard does at run time (`spur_guards::jq::JqProgram`), with
/// `$vars` and `$name` for each of `vars` bound.
pub(crate) fn compile(expr: &str, vars: &[&str]) -> Result<(), Vec<JqError>> {
    let names: Vec<&str> = std::iter::once("vars")
        .chain(vars.iter().copied())
        .collect();
    match spur_guards::jq::JqProgram::compile(expr, &names) {
        Ok(_) => Ok(()),
        Err(e) => Err(vec![JqError {
            message: e.message,
            start: e.offset.min(expr.len()),
            end: (e.offset + e.len).min(expr.len()),
        }]),
    }
}

/// Diagnostics for a jq expression option, pointing inside the expression.
pub(crate) fn check_expr(
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
            Code::CheckJqCompile,
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
        assert_eq!(errors[0].message, "unclosed delimiter `(`");
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
