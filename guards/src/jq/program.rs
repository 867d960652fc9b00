//! A jq filter compiled once (at pipeline load) and evaluated many times under limits.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jaq_core::data::JustLut;
use jaq_core::load::{lex, parse, Arena, File, Loader};
use jaq_core::native::Fun;
use jaq_core::{Compiler, Ctx, DataT, Vars};
use jaq_json::Val;
use serde_json::Value;

use super::deadline::{self, Overrun};
use super::value::{approx_size, from_val, to_val};

pub(crate) type GuardData = JustLut<Val>;
type GuardFilter = jaq_core::Filter<GuardData>;

/// A compile error, located inside the expression (byte offset and length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JqCompileError {
    /// What is wrong, in jaq's words.
    pub message: String,
    /// Byte offset of the offending text inside the expression.
    pub offset: usize,
    /// Its length in bytes (0 at end of input).
    pub len: usize,
}

impl fmt::Display for JqCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for JqCompileError {}

/// Why an evaluation produced no result. Every variant fails a guard closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JqEvalError {
    /// The input is larger than [`JqLimits::max_input_bytes`].
    InputTooLarge {
        /// The input's size in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The evaluation ran past [`JqLimits::timeout`].
    DeadlineExceeded(Duration),
    /// More than [`JqLimits::max_outputs`] outputs.
    TooManyOutputs(usize),
    /// A jq runtime error (`error("…")`, `.a` on a number, …).
    Runtime(String),
    /// The filter called `halt` / `halt_error`.
    Halted(i32),
    /// A different number of var values than var names given at compile time.
    VarCount {
        /// The number of var names.
        expected: usize,
        /// The number of values given.
        got: usize,
    },
    /// The evaluation thread crashed (a bug in a jq builtin) or could not start.
    Crashed,
}

impl fmt::Display for JqEvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JqEvalError::InputTooLarge { size, limit } => {
                write!(f, "input is {size} bytes, over the {limit}-byte limit")
            }
            JqEvalError::DeadlineExceeded(t) => {
                write!(f, "evaluation did not finish within {} ms", t.as_millis())
            }
            JqEvalError::TooManyOutputs(n) => write!(f, "more than {n} outputs"),
            JqEvalError::Runtime(message) => write!(f, "jq error: {message}"),
            JqEvalError::Halted(code) => write!(f, "filter halted with code {code}"),
            JqEvalError::VarCount { expected, got } => {
                write!(f, "expected {expected} variable values, got {got}")
            }
            JqEvalError::Crashed => write!(f, "evaluation crashed"),
        }
    }
}

impl std::error::Error for JqEvalError {}

/// Bounds on one evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JqLimits {
    /// `Some`: evaluate on a worker thread and give up after this long (fail closed).
    /// `None`: evaluate inline on the calling thread with no deadline (`spur jq`).
    pub timeout: Option<Duration>,
    /// The largest input, in bytes, that is evaluated.
    pub max_input_bytes: usize,
    /// The most outputs an evaluation may produce.
    pub max_outputs: usize,
}

impl Default for JqLimits {
    /// 1 s, 16 MiB of input, 10 000 outputs.
    fn default() -> Self {
        Self {
            timeout: Some(Duration::from_secs(1)),
            max_input_bytes: 16 << 20,
            max_outputs: 10_000,
        }
    }
}

/// A compiled jq filter. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct JqProgram {
    source: Arc<str>,
    var_names: Arc<[String]>,
    filter: Arc<GuardFilter>,
}

impl fmt::Debug for JqProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JqProgram")
            .field("source", &self.source)
            .field("var_names", &self.var_names)
            .finish_non_exhaustive()
    }
}

impl JqProgram {
    /// Compile `expr` with the jq standard library, binding `var_names` (with or without a
    /// leading `$`) as global variables, in this order.
    pub fn compile(expr: &str, var_names: &[&str]) -> Result<Self, JqCompileError> {
        let var_names: Vec<String> = var_names
            .iter()
            .map(|n| n.trim_start_matches('$').to_owned())
            .collect();
        let filter = compile_filter::<GuardData>(expr, &var_names, [])?;
        Ok(Self {
            source: expr.into(),
            var_names: var_names.into(),
            filter: Arc::new(filter),
        })
    }

    /// The expression as compiled.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variable names bound at compile time (without `$`).
    pub fn var_names(&self) -> &[String] {
        &self.var_names
    }

    /// All outputs for `input`, with `var_values` in the order of the compiled names.
    pub fn eval(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Vec<Value>, JqEvalError> {
        self.evaluate(input, var_values, limits, usize::MAX)
    }

    /// The first output only (`None` if there is none); evaluation stops there.
    pub fn first(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Option<Value>, JqEvalError> {
        Ok(self.evaluate(input, var_values, limits, 1)?.pop())
    }

    fn evaluate(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
        take: usize,
    ) -> Result<Vec<Value>, JqEvalError> {
        if var_values.len() != self.var_names.len() {
            return Err(JqEvalError::VarCount {
                expected: self.var_names.len(),
                got: var_values.len(),
            });
        }
        let size = approx_size(input, limits.max_input_bytes);
        if size > limits.max_input_bytes {
            return Err(JqEvalError::InputTooLarge {
                size,
                limit: limits.max_input_bytes,
            });
        }
        let max_outputs = limits.max_outputs;
        let Some(timeout) = limits.timeout else {
            return run_filter(&self.filter, input, var_values, None, max_outputs, take);
        };
        let deadline = Instant::now() + timeout;
        let filter = Arc::clone(&self.filter);
        let input = input.clone();
        let var_values = var_values.to_vec();
        let job = move || {
            run_filter(
                &filter,
                &input,
                &var_values,
                Some(deadline),
                max_outputs,
                take,
            )
        };
        match deadline::run(timeout, job) {
            Ok(result) => result,
            Err(Overrun::DeadlineExceeded) => Err(JqEvalError::DeadlineExceeded(timeout)),
            Err(Overrun::Crashed) => Err(JqEvalError::Crashed),
        }
    }
}

fn run_filter(
    filter: &GuardFilter,
    input: &Value,
    var_values: &[Value],
    deadline: Option<Instant>,
    max_outputs: usize,
    take: usize,
) -> Result<Vec<Value>, JqEvalError> {
    let ctx = Ctx::<GuardData>::new(&filter.lut, Vars::new(var_values.iter().map(to_val)));
    let mut outputs = Vec::new();
    for output in filter.id.run((ctx, to_val(input))) {
        // jaq cannot be interrupted inside one output; between outputs we can stop.
        if deadline.is_some_and(|d| Instant::now() > d) {
            return Err(JqEvalError::DeadlineExceeded(Duration::ZERO));
        }
        if outputs.len() >= max_outputs {
            return Err(JqEvalError::TooManyOutputs(max_outputs));
        }
        outputs.push(from_val(&output.map_err(exception)?));
        if outputs.len() >= take {
            break;
        }
    }
    Ok(outputs)
}

pub(crate) fn exception(exn: jaq_core::Exn<'_, Val>) -> JqEvalError {
    match exn.get_err() {
        // Like jq: a string error value is the message itself, anything else is shown as JSON.
        Ok(error) => JqEvalError::Runtime(match error.into_val() {
            Val::TStr(text) => String::from_utf8_lossy(&text).into_owned(),
            other => format!("{other} (not a string)"),
        }),
        Err(exn) => match exn.get_halt() {
            Ok(code) => JqEvalError::Halted(code),
            Err(_) => JqEvalError::Crashed,
        },
    }
}

/// Parse and compile `expr` with jq's standard library plus `extra` native filters.
pub(crate) fn compile_filter<D>(
    expr: &str,
    var_names: &[String],
    extra: impl IntoIterator<Item = Fun<D>>,
) -> Result<jaq_core::Filter<D>, JqCompileError>
where
    D: for<'a> DataT<V<'a> = Val>,
{
    let arena = Arena::default();
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let modules = Loader::new(defs)
        .load(
            &arena,
            File {
                code: expr,
                path: (),
            },
        )
        .map_err(|errors| load_error(expr, errors))?;
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .chain(extra);
    let globals: Vec<String> = var_names.iter().map(|n| format!("${n}")).collect();
    Compiler::default()
        .with_funs(funs)
        .with_global_vars(globals.iter().map(String::as_str))
        .compile(modules)
        .map_err(|errors| {
            let first = errors.into_iter().flat_map(|(_, errs)| errs).next();
            match first {
                Some((found, undefined)) => {
                    let kind = undefined.as_str();
                    located(expr, found, format!("undefined {kind} `{found}`"))
                }
                None => located(expr, "", "cannot compile the filter".to_owned()),
            }
        })
}

fn load_error(expr: &str, errors: jaq_core::load::Errors<&str, ()>) -> JqCompileError {
    use jaq_core::load::Error;
    for (_, error) in errors {
        match error {
            Error::Lex(errs) => {
                if let Some((expected, found)) = errs.into_iter().next() {
                    let first_char = found.chars().next().map_or(0, char::len_utf8);
                    let found = found.get(..first_char).unwrap_or(found);
                    let message = match expected {
                        lex::Expect::Delim(open) => {
                            return located(expr, open, format!("unclosed delimiter `{open}`"));
                        }
                        other => format!("expected {}", other.as_str()),
                    };
                    let message = if found.is_empty() {
                        format!("{message}, found end of input")
                    } else {
                        format!("{message}, found `{found}`")
                    };
                    return located(expr, found, message);
                }
            }
            Error::Parse(errs) => {
                if let Some((expected, found)) = errs.into_iter().next() {
                    let message = if found.is_empty() {
                        format!("expected {}, found end of input", parse_expect(&expected))
                    } else {
                        format!("expected {}, found `{found}`", parse_expect(&expected))
                    };
                    return located(expr, found, message);
                }
            }
            Error::Io(errs) => {
                if let Some((path, why)) = errs.into_iter().next() {
                    return located(expr, path, format!("cannot load module {path}: {why}"));
                }
            }
        }
    }
    located(expr, "", "cannot parse the filter".to_owned())
}

fn parse_expect(expected: &parse::Expect<&str>) -> String {
    expected.as_str().to_owned()
}

/// Locate `part` (a sub-slice of `expr` handed back by jaq) inside `expr`; text that is not
/// a sub-slice (it cannot happen for the main file) points at the end.
fn located(expr: &str, part: &str, message: String) -> JqCompileError {
    let base = expr.as_ptr() as usize;
    let at = part.as_ptr() as usize;
    let (offset, len) = if at >= base && at + part.len() <= base + expr.len() {
        (at - base, part.len())
    } else {
        (expr.len(), 0)
    };
    JqCompileError {
        message,
        offset,
        len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn unlimited() -> JqLimits {
        JqLimits {
            timeout: None,
            ..JqLimits::default()
        }
    }

    #[test]
    fn evaluates_with_the_standard_library_and_vars() {
        let program =
            JqProgram::compile("[.xs | map(. * $k) | add, $name]", &["k", "$name"]).unwrap();
        let out = program
            .eval(
                &json!({"xs": [1, 2, 3]}),
                &[json!(2), json!("n")],
                &JqLimits::default(),
            )
            .unwrap();
        assert_eq!(out, vec![json!([12, "n"])]);
        assert_eq!(program.var_names(), ["k", "name"]);
    }

    #[test]
    fn yields_every_output_or_only_the_first() {
        let program = JqProgram::compile(".[]", &[]).unwrap();
        let input = json!([1, 2, 3]);
        assert_eq!(program.eval(&input, &[], &unlimited()).unwrap().len(), 3);
        assert_eq!(
            program.first(&input, &[], &unlimited()).unwrap(),
            Some(json!(1))
        );
        assert_eq!(program.first(&json!([]), &[], &unlimited()).unwrap(), None);
    }

    #[test]
    fn compile_errors_point_inside_the_expression() {
        let err = JqProgram::compile(".a | frobnicate(1)", &[]).unwrap_err();
        assert_eq!((err.offset, err.len), (5, 10), "{err:?}");
        assert!(err.message.contains("undefined filter"), "{err:?}");

        let err = JqProgram::compile(".a == $missing", &[]).unwrap_err();
        assert_eq!(
            &".a == $missing"[err.offset..err.offset + err.len],
            "$missing"
        );

        let err = JqProgram::compile(".a | (", &[]).unwrap_err();
        assert_eq!(err.offset, 5, "{err:?}");

        let err = JqProgram::compile(".a ==", &[]).unwrap_err();
        assert_eq!(err.offset, 5, "{err:?}");
        assert!(err.message.contains("end of input"), "{err:?}");
    }

    #[test]
    fn runtime_errors_and_halt_are_errors_not_exits() {
        let program = JqProgram::compile(r#"error("boom")"#, &[]).unwrap();
        assert_eq!(
            program.eval(&json!(null), &[], &JqLimits::default()),
            Err(JqEvalError::Runtime("boom".into()))
        );
        let program = JqProgram::compile("halt", &[]).unwrap();
        assert_eq!(
            program.eval(&json!(null), &[], &JqLimits::default()),
            Err(JqEvalError::Halted(0))
        );
    }

    #[test]
    fn a_runaway_evaluation_fails_at_the_deadline() {
        let program = JqProgram::compile("last(range(1e18))", &[]).unwrap();
        let limits = JqLimits {
            timeout: Some(Duration::from_millis(50)),
            ..JqLimits::default()
        };
        assert_eq!(
            program.eval(&json!(null), &[], &limits),
            Err(JqEvalError::DeadlineExceeded(Duration::from_millis(50)))
        );
        // The pool recovers: the next evaluation gets a fresh worker.
        let ok = JqProgram::compile(".", &[]).unwrap();
        assert_eq!(ok.eval(&json!(1), &[], &limits), Ok(vec![json!(1)]));
    }

    #[test]
    fn endless_output_is_cut_off() {
        let program = JqProgram::compile("repeat(1)", &[]).unwrap();
        let limits = JqLimits {
            max_outputs: 100,
            ..JqLimits::default()
        };
        assert_eq!(
            program.eval(&json!(null), &[], &limits),
            Err(JqEvalError::TooManyOutputs(100))
        );
    }

    #[test]
    fn input_over_the_cap_is_refused_before_evaluation() {
        let program = JqProgram::compile(".", &[]).unwrap();
        let limits = JqLimits {
            max_input_bytes: 10,
            ..JqLimits::default()
        };
        assert!(matches!(
            program.eval(&json!("a long string value"), &[], &limits),
            Err(JqEvalError::InputTooLarge { limit: 10, .. })
        ));
    }

    #[test]
    fn wrong_number_of_var_values_is_an_error() {
        let program = JqProgram::compile("$a", &["a"]).unwrap();
        assert_eq!(
            program.eval(&json!(null), &[], &JqLimits::default()),
            Err(JqEvalError::VarCount {
                expected: 1,
                got: 0
            })
        );
    }

    #[test]
    fn programs_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<JqProgram>();
    }
}
