//! The jq command line behind `spur jq` (and `jq` through the PATH shim): filters a stream
//! of JSON texts, printing outputs as they come. It evaluates inline with no deadline —
//! like jq, a user interrupts it with Ctrl-C. Inputs and outputs nested deeper than
//! [`MAX_JSON_DEPTH`] are refused before jaq's recursive parser or printer sees them; the
//! binary also runs this in a child process, so a filter that recurses without end ends
//! with an error rather than an abort.

use std::io::{self, Write};

use jaq_core::data::HasLut;
use jaq_core::native::run;
use jaq_core::{Ctx, DataT, Lut, Vars};
use jaq_json::write::Pp;
use jaq_json::{Map, Val};
use jaq_std::input::{HasInputs, Inputs, RcIter};

use super::json_depth::{too_deep_text, too_deep_value, MAX_JSON_DEPTH};
use super::program::{compile_filter, exception, JqCompileError, JqEvalError};

/// Output and input switches, named after jq's flags.
#[derive(Debug, Clone, Default)]
pub struct JqOptions {
    /// `-r`: strings printed without quotes.
    pub raw_output: bool,
    /// `-j`: like `-r`, and no newline after each output.
    pub join_output: bool,
    /// `-c`: one line per output.
    pub compact: bool,
    /// `--tab`: indent with tabs.
    pub tab: bool,
    /// `--indent n` (default 2).
    pub indent: Option<usize>,
    /// `-S`: object keys sorted.
    pub sort_keys: bool,
    /// `-n`: run once with `null` as input (`input`/`inputs` still read the inputs).
    pub null_input: bool,
    /// `-s`: read all inputs into one array.
    pub slurp: bool,
}

/// One input text and the name used in error messages (a file name or `<stdin>`).
#[derive(Debug, Clone)]
pub struct JqInput {
    /// The name used in error messages (a file name or `<stdin>`).
    pub name: String,
    /// The input's bytes: zero or more JSON texts.
    pub bytes: Vec<u8>,
}

/// A variable bound with `--arg` (a string) or `--argjson` (JSON text).
#[derive(Debug, Clone)]
pub enum JqArg {
    /// `--arg NAME VALUE`: bound as a string.
    String(String),
    /// `--argjson NAME TEXT`: the JSON text, parsed when bound.
    Json(String),
}

/// Why a `spur jq` run stopped.
#[derive(Debug)]
pub enum JqRunError {
    /// The expression does not compile.
    Compile(JqCompileError),
    /// `--argjson NAME TEXT` with invalid JSON.
    BadArgJson {
        /// The variable's name.
        name: String,
        /// The JSON parser's message.
        message: String,
    },
    /// An input that is not valid JSON.
    Input {
        /// The input's name.
        name: String,
        /// The JSON parser's message.
        message: String,
    },
    /// A jq runtime error.
    Runtime(String),
    /// The filter called `halt` / `halt_error` with this exit code.
    Halted(i32),
    /// Writing the output failed (other than a closed pipe).
    Output(io::Error),
}

/// What the run produced, for `-e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JqRunSummary {
    /// `None` when there was no output; else whether the last one was truthy
    /// (anything but `false` and `null`).
    pub last_truthy: Option<bool>,
}

struct CliData;

impl DataT for CliData {
    type V<'a> = Val;
    type Data<'a> = CliCtx<'a>;
}

#[derive(Clone)]
struct CliCtx<'a> {
    lut: &'a Lut<CliData>,
    inputs: Inputs<'a, Val>,
}

impl<'a> HasLut<'a, CliData> for CliCtx<'a> {
    fn lut(&self) -> &'a Lut<CliData> {
        self.lut
    }
}

impl<'a> HasInputs<'a, Val> for CliCtx<'a> {
    fn inputs(&self) -> Inputs<'a, Val> {
        self.inputs
    }
}

/// Compile `filter` with `args` bound (plus `$ENV` and `$ARGS`), run it over `inputs`, and
/// write each output to `out`.
pub fn run_jq(
    filter: &str,
    args: &[(String, JqArg)],
    inputs: &[JqInput],
    options: &JqOptions,
    out: &mut dyn Write,
) -> Result<JqRunSummary, JqRunError> {
    let mut names: Vec<String> = vec!["ENV".into(), "ARGS".into()];
    let mut values = vec![env_object(), Val::Null];
    let mut named = Map::default();
    for input in inputs {
        if let Some(at) = too_deep_text(&input.bytes, MAX_JSON_DEPTH) {
            return Err(JqRunError::Input {
                name: input.name.clone(),
                message: format!("nests deeper than {MAX_JSON_DEPTH} levels (at byte {at})"),
            });
        }
    }
    for (name, arg) in args {
        if let JqArg::Json(text) = arg {
            if too_deep_text(text.as_bytes(), MAX_JSON_DEPTH).is_some() {
                return Err(JqRunError::BadArgJson {
                    name: name.clone(),
                    message: format!("nests deeper than {MAX_JSON_DEPTH} levels"),
                });
            }
        }
        let value = match arg {
            JqArg::String(s) => Val::utf8_str(s.clone().into_bytes()),
            JqArg::Json(text) => jaq_json::read::parse_single(text.as_bytes()).map_err(|e| {
                JqRunError::BadArgJson {
                    name: name.clone(),
                    message: e.to_string(),
                }
            })?,
        };
        named.insert(Val::utf8_str(name.clone().into_bytes()), value.clone());
        names.push(name.clone());
        values.push(value);
    }
    values[1] = Val::obj(Map::from_iter([
        (
            Val::utf8_str("positional"),
            Val::Arr(jaq_json::Rc::new(Vec::new())),
        ),
        (Val::utf8_str("named"), Val::obj(named)),
    ]));

    let extra = jaq_std::input::funs::<CliData>()
        .into_vec()
        .into_iter()
        .map(run::<CliData>);
    let compiled = compile_filter::<CliData>(filter, &names, extra).map_err(JqRunError::Compile)?;

    let texts = inputs.iter().flat_map(|input| {
        jaq_json::read::parse_many(&input.bytes)
            .map(move |r| r.map_err(|e| format!("{}: {e}", input.name)))
    });
    let texts: Box<dyn Iterator<Item = Result<Val, String>>> = if options.slurp {
        let all: Result<Vec<Val>, String> = texts.collect();
        Box::new(std::iter::once(all.map(|v| Val::Arr(jaq_json::Rc::new(v)))))
    } else {
        Box::new(texts)
    };
    let texts = RcIter::new(texts);
    let null: Box<dyn Iterator<Item = Result<Val, String>>> =
        Box::new(std::iter::once(Ok(Val::Null)));
    let null = RcIter::new(null);
    let ctx = Ctx::<CliData>::new(
        CliCtx {
            lut: &compiled.lut,
            inputs: &texts,
        },
        Vars::new(values),
    );
    let pp = printer(options);
    let mut summary = JqRunSummary { last_truthy: None };
    let main_inputs: &RcIter<dyn Iterator<Item = Result<Val, String>>> =
        if options.null_input { &null } else { &texts };
    for item in main_inputs {
        let input = item.map_err(|message| {
            let (name, message) = split_input_error(&message);
            JqRunError::Input { name, message }
        })?;
        for output in compiled.id.run((ctx.clone(), input)) {
            let value = output.map_err(|e| match exception(e) {
                JqEvalError::Halted(code) => JqRunError::Halted(code),
                other => JqRunError::Runtime(match other {
                    JqEvalError::Runtime(message) => message,
                    other => other.to_string(),
                }),
            })?;
            if too_deep_value(&value, MAX_JSON_DEPTH) {
                // Dropping it recurses as deep as it nests: leave it to the process's end.
                std::mem::forget(value);
                return Err(JqRunError::Runtime(format!(
                    "an output nests deeper than {MAX_JSON_DEPTH} levels"
                )));
            }
            summary.last_truthy = Some(!matches!(value, Val::Null | Val::Bool(false)));
            match write_value(out, &pp, options, &value) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(summary),
                Err(e) => return Err(JqRunError::Output(e)),
            }
        }
    }
    Ok(summary)
}

/// jq's `debug` and `stderr` (`halt_error` too) report through the `log` crate; this
/// prints them the way jq does: `["DEBUG:",value]` lines and raw `stderr` text. Only the
/// command line installs it; inside the engine, guard filters stay silent.
pub fn install_stderr_logger() {
    struct JqLogger;
    impl log::Log for JqLogger {
        fn enabled(&self, _: &log::Metadata) -> bool {
            true
        }
        fn log(&self, record: &log::Record) {
            let mut err = io::stderr().lock();
            let _ = match record.level() {
                log::Level::Error => write!(err, "{}", record.args()),
                _ => writeln!(err, "[\"DEBUG:\",{}]", record.args()),
            };
        }
        fn flush(&self) {}
    }
    static LOGGER: JqLogger = JqLogger;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

fn split_input_error(message: &str) -> (String, String) {
    match message.split_once(": ") {
        Some((name, rest)) => (name.to_owned(), rest.to_owned()),
        None => ("<input>".to_owned(), message.to_owned()),
    }
}

fn env_object() -> Val {
    Val::obj(
        std::env::vars_os()
            .map(|(k, v)| {
                (
                    Val::utf8_str(k.to_string_lossy().into_owned().into_bytes()),
                    Val::utf8_str(v.to_string_lossy().into_owned().into_bytes()),
                )
            })
            .collect(),
    )
}

fn printer(options: &JqOptions) -> Pp {
    let indent = if options.compact {
        None
    } else if options.tab {
        Some("\t".to_owned())
    } else {
        Some(" ".repeat(options.indent.unwrap_or(2)))
    };
    let indent = indent.filter(|i| !i.is_empty());
    Pp {
        sep_space: indent.is_some(),
        indent,
        sort_keys: options.sort_keys,
        ..Pp::default()
    }
}

fn write_value(out: &mut dyn Write, pp: &Pp, options: &JqOptions, value: &Val) -> io::Result<()> {
    match value {
        Val::TStr(bytes) | Val::BStr(bytes) if options.raw_output || options.join_output => {
            out.write_all(bytes)?
        }
        _ => jaq_json::write::write(out, pp, 0, value)?,
    }
    if !options.join_output {
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jq(filter: &str, input: &str, options: &JqOptions) -> String {
        let mut out = Vec::new();
        let inputs = [JqInput {
            name: "<stdin>".into(),
            bytes: input.as_bytes().to_vec(),
        }];
        run_jq(filter, &[], &inputs, options, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn pretty_prints_like_jq_by_default() {
        assert_eq!(
            jq(".", r#"{"a":[1,2]}"#, &JqOptions::default()),
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"
        );
    }

    #[test]
    fn compact_raw_and_slurp() {
        let compact = JqOptions {
            compact: true,
            ..JqOptions::default()
        };
        assert_eq!(jq(".", r#"{"a": [1, 2]}"#, &compact), "{\"a\":[1,2]}\n");
        let raw = JqOptions {
            raw_output: true,
            ..JqOptions::default()
        };
        assert_eq!(jq(".[]", r#"["x", 1]"#, &raw), "x\n1\n");
        let slurp = JqOptions {
            slurp: true,
            compact: true,
            ..JqOptions::default()
        };
        assert_eq!(jq(".", "1 2 3", &slurp), "[1,2,3]\n");
    }

    #[test]
    fn input_and_inputs_read_the_stream() {
        let null = JqOptions {
            null_input: true,
            compact: true,
            ..JqOptions::default()
        };
        assert_eq!(jq("[inputs]", "1 2", &null), "[1,2]\n");
        assert_eq!(jq("input", "1 2", &JqOptions::default()), "2\n");
    }
}
