//! A jq filter compiled once (at pipeline load) and evaluated many times under limits.
//! Evaluating here runs on the calling thread: only the jq worker process does that with a
//! filter it does not trust (`super::sandbox`).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jaq_core::data::JustLut;
use jaq_core::load::{lex, parse, Arena, File, Loader};
use jaq_core::native::Fun;
use jaq_core::{Compiler, Ctx, DataT, Vars};
use jaq_json::Val;
use serde_json::Value;

use super::json_depth::too_deep_value;
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JqEvalError {
    /// The input is larger than [`JqLimits::max_input_bytes`].
    InputTooLarge {
        /// The input's size in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The evaluation ran past [`JqLimits::timeout`]; the worker was killed.
    DeadlineExceeded(Duration),
    /// The evaluation needed more memory than the worker may have.
    OutOfMemory {
        /// The worker's address-space limit, in MiB.
        limit_mib: u64,
    },
    /// An output nests deeper than [`JqLimits::max_output_depth`].
    OutputTooDeep(usize),
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
    /// The evaluation crashed (a stack overflow, a panic in a builtin): why.
    Crashed(String),
    /// No jq worker could be started or spoken to: why.
    WorkerUnavailable(String),
}

impl fmt::Display for JqEvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JqEvalError::InputTooLarge { size, limit } => {
                write!(f, "input is {size} bytes, over the {limit}-byte limit")
            }
            JqEvalError::DeadlineExceeded(t) => write!(
                f,
                "timeout: the evaluation did not finish within {} ms (the jq worker was stopped)",
                t.as_millis()
            ),
            JqEvalError::OutOfMemory { limit_mib } => write!(
                f,
                "out of memory: the evaluation needed more than the jq worker's {limit_mib} MiB"
            ),
            JqEvalError::TooManyOutputs(n) => write!(f, "more than {n} outputs"),
            JqEvalError::OutputTooDeep(n) => write!(f, "an output nests deeper than {n} levels"),
            JqEvalError::Runtime(message) => write!(f, "jq error: {message}"),
            JqEvalError::Halted(code) => write!(f, "filter halted with code {code}"),
            JqEvalError::VarCount { expected, got } => {
                write!(f, "expected {expected} variable values, got {got}")
            }
            JqEvalError::Crashed(why) => write!(f, "crashed: {why}"),
            JqEvalError::WorkerUnavailable(why) => write!(f, "the jq worker is unavailable: {why}"),
        }
    }
}

impl std::error::Error for JqEvalError {}

/// Bounds on one evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JqLimits {
    /// The worker is stopped (and the evaluation fails) after this long. Evaluating in
    /// process only checks it between outputs.
    pub timeout: Duration,
    /// The largest input, in bytes, that is evaluated.
    pub max_input_bytes: usize,
    /// The most outputs an evaluation may produce.
    pub max_outputs: usize,
    /// The deepest an output may nest (what spur reads back from the worker).
    pub max_output_depth: usize,
}

/// How long a jq guard may evaluate unless it sets `timeoutMs`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

impl Default for JqLimits {
    /// 1 s, 16 MiB of input, 10 000 outputs nested at most 100 levels.
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_input_bytes: 16 << 20,
            max_outputs: 10_000,
            max_output_depth: 100,
        }
    }
}

/// A compiled jq filter. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct JqProgram {
    source: Arc<str>,
    var_names: Arc<[String]>,
    filter: Arc<GuardFilter>,
    /// In the bounded fragment (`super::bounded`): evaluated in process, not in the worker.
    bounded: bool,
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
        let tokens = super::nesting::check(expr).map_err(|e| too_deep(expr, e))?;
        let filter = if tokens <= INLINE_COMPILE_TOKENS {
            compile_filter::<GuardData>(expr, &var_names, [])?
        } else {
            // jaq recurses once per level of the syntax tree, several KiB per level in a
            // debug build: a large expression compiles on a stack sized for the bound.
            std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .name("spur-jq-compile".into())
                    .stack_size(COMPILE_STACK)
                    .spawn_scoped(scope, || compile_filter::<GuardData>(expr, &var_names, []))
                    .map_err(|e| located(expr, "", format!("cannot compile: {e}")))?
                    .join()
                    .map_err(|_| located(expr, "", "the compiler crashed".to_owned()))?
            })?
        };
        let bounded = super::bounded::is_bounded(expr, &var_names);
        Ok(Self {
            source: expr.into(),
            var_names: var_names.into(),
            filter: Arc::new(filter),
            bounded,
        })
    }

    /// Whether evaluating it through a [`super::JqSandbox`] needs the worker process: false
    /// for a filter in the bounded fragment (comparisons of paths and literals, …; see the
    /// book's jq chapter), which cannot run long, allocate much or recurse deeply and is
    /// evaluated in spur's own process.
    pub fn needs_worker(&self) -> bool {
        !self.bounded
    }

    /// The expression as compiled.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variable names bound at compile time (without `$`).
    pub fn var_names(&self) -> &[String] {
        &self.var_names
    }

    /// All outputs for `input`, with `var_values` in the order of the compiled names,
    /// evaluated on the calling thread. A hostile filter can overflow this thread's stack
    /// (which aborts the process) or run past `limits.timeout` (checked only between
    /// outputs): evaluate untrusted filters through a [`super::JqSandbox`].
    pub fn eval_in_process(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Vec<Value>, JqEvalError> {
        self.evaluate(input, var_values, limits, usize::MAX)
    }

    /// The first output only (`None` if there is none), on the calling thread, as
    /// [`JqProgram::eval_in_process`]; evaluation stops there.
    pub fn first_in_process(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<Option<Value>, JqEvalError> {
        Ok(self.evaluate(input, var_values, limits, 1)?.pop())
    }

    /// The checks made before an evaluation starts, wherever it runs.
    pub(crate) fn precheck(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
    ) -> Result<(), JqEvalError> {
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
        Ok(())
    }

    /// Up to `take` outputs, on the calling thread.
    pub(crate) fn evaluate(
        &self,
        input: &Value,
        var_values: &[Value],
        limits: &JqLimits,
        take: usize,
    ) -> Result<Vec<Value>, JqEvalError> {
        self.precheck(input, var_values, limits)?;
        let deadline = Instant::now() + limits.timeout;
        run_filter(&self.filter, input, var_values, deadline, limits, take)
    }
}

fn run_filter(
    filter: &GuardFilter,
    input: &Value,
    var_values: &[Value],
    deadline: Instant,
    limits: &JqLimits,
    take: usize,
) -> Result<Vec<Value>, JqEvalError> {
    let max_outputs = limits.max_outputs;
    let ctx = Ctx::<GuardData>::new(&filter.lut, Vars::new(var_values.iter().map(to_val)));
    let mut outputs = Vec::new();
    for output in filter.id.run((ctx, to_val(input))) {
        // jaq cannot be interrupted inside one output; between outputs we can stop.
        if Instant::now() > deadline {
            return Err(JqEvalError::DeadlineExceeded(limits.timeout));
        }
        if outputs.len() >= max_outputs {
            return Err(JqEvalError::TooManyOutputs(max_outputs));
        }
        let output = output.map_err(exception)?;
        if too_deep_value(&output, limits.max_output_depth) {
            // Dropping it recurses as deep as it nests: the worker that built it is retired
            // with it (`JqEvalError::OutputTooDeep`).
            std::mem::forget(output);
            return Err(JqEvalError::OutputTooDeep(limits.max_output_depth));
        }
        outputs.push(from_val(&output));
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
            Err(_) => JqEvalError::Crashed("an unknown jq exception".to_owned()),
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
    super::nesting::check(expr).map_err(|e| too_deep(expr, e))?;
    let arena = Arena::default();
    let modules = Loader::new(super::std_library::definitions_for(expr))
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

fn too_deep(expr: &str, e: super::nesting::TooDeep) -> JqCompileError {
    JqCompileError {
        message: e.message,
        offset: e.offset.min(expr.len()),
        len: usize::from(e.offset < expr.len()),
    }
}

/// Expressions with at most this many nesting tokens compile on the calling thread (a
/// 2 MiB thread has room for them even in a debug build).
const INLINE_COMPILE_TOKENS: usize = 100;

/// The stack larger expressions compile on: room for [`super::MAX_NESTING_TOKENS`] levels.
const COMPILE_STACK: usize = 256 << 20;

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
    use super::super::MAX_NESTING_TOKENS;
    use super::*;
    use serde_json::json;

    fn unlimited() -> JqLimits {
        JqLimits::default()
    }

    #[test]
    fn evaluates_with_the_standard_library_and_vars() {
        let program =
            JqProgram::compile("[.xs | map(. * $k) | add, $name]", &["k", "$name"]).unwrap();
        let out = program
            .eval_in_process(
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
        assert_eq!(
            program
                .eval_in_process(&input, &[], &unlimited())
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            program.first_in_process(&input, &[], &unlimited()).unwrap(),
            Some(json!(1))
        );
        assert_eq!(
            program
                .first_in_process(&json!([]), &[], &unlimited())
                .unwrap(),
            None
        );
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
            program.eval_in_process(&json!(null), &[], &JqLimits::default()),
            Err(JqEvalError::Runtime("boom".into()))
        );
        let program = JqProgram::compile("halt", &[]).unwrap();
        assert_eq!(
            program.eval_in_process(&json!(null), &[], &JqLimits::default()),
            Err(JqEvalError::Halted(0))
        );
    }

    #[test]
    fn hostile_nesting_is_a_compile_error_not_a_crash() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let err = JqProgram::compile(&deep, &[]).unwrap_err();
        assert!(err.message.contains("nests more than"), "{err:?}");
        let chain = vec!["."; 100_000].join(" | ");
        assert!(JqProgram::compile(&chain, &[]).is_err());
        // Just under the bounds compiles, on this (small) test thread's stack.
        let nested = format!("{}1{}", "(".repeat(256), ")".repeat(256));
        assert!(JqProgram::compile(&nested, &[]).is_ok());
        let long = vec!["."; 1_999].join("|");
        assert!(JqProgram::compile(&long, &[]).is_ok());
    }

    #[test]
    fn every_kind_of_nesting_at_the_bound_compiles_without_overflow() {
        let n = MAX_NESTING_TOKENS;
        let at_the_bound = [
            format!("{}1", "-".repeat(n)),
            format!("{}1", "try ".repeat(n)),
            vec!["1"; n].join("+"),
            vec!["1"; n].join(","),
            format!("{} .", ". as $x | ".repeat(n / 2)),
            format!("{}1{}", "[(".repeat(128), ")]".repeat(128)),
            format!("{}1{}", "\"\\(".repeat(256), ")\"".repeat(256)),
            format!(
                "{}1{}",
                "if true then ".repeat(n / 2),
                " else 0 end".repeat(n / 2)
            ),
        ];
        for expr in &at_the_bound {
            let compiled = JqProgram::compile(expr, &[]);
            assert!(compiled.is_ok(), "{}…: {compiled:?}", &expr[..20]);
        }
    }

    #[test]
    fn the_standard_library_is_parsed_once_and_shared() {
        let a = JqProgram::compile("map(. + 1) | add", &[]).unwrap();
        let b = JqProgram::compile("[.[] | tostring] | join(\",\")", &[]).unwrap();
        let input = json!([1, 2]);
        assert_eq!(
            a.first_in_process(&input, &[], &unlimited()).unwrap(),
            Some(json!(5))
        );
        assert_eq!(
            b.first_in_process(&input, &[], &unlimited()).unwrap(),
            Some(json!("1,2"))
        );
    }

    #[test]
    fn endless_output_is_cut_off() {
        let program = JqProgram::compile("repeat(1)", &[]).unwrap();
        let limits = JqLimits {
            max_outputs: 100,
            ..JqLimits::default()
        };
        assert_eq!(
            program.eval_in_process(&json!(null), &[], &limits),
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
            program.eval_in_process(&json!("a long string value"), &[], &limits),
            Err(JqEvalError::InputTooLarge { limit: 10, .. })
        ));
    }

    #[test]
    fn wrong_number_of_var_values_is_an_error() {
        let program = JqProgram::compile("$a", &["a"]).unwrap();
        assert_eq!(
            program.eval_in_process(&json!(null), &[], &JqLimits::default()),
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
