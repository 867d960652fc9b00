//! `spur jq FILTER [FILE…]`: the embedded jq, also reached as `jq` through the PATH shim
//! (argv[0] = `jq`). Exit codes follow jq: 0 ok; 1 with `-e` when the last output is
//! `false` or `null`; 2 bad usage or unreadable/invalid input; 3 the filter does not
//! compile; 4 with `-e` when there was no output; 5 a runtime error or a crash;
//! `halt_error` exits with its own code.
//!
//! The arguments are checked here; the filter then runs in a child (`spur __jq`, the same
//! arguments) on a large stack, and this process relays its stderr and exit code. A filter
//! that recurses until the stack overflows ends the child, and `spur jq` says so and exits 5.

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use clap::Parser;
use miette::{LabeledSpan, MietteDiagnostic, NamedSource, Report};
use spur_engine::diagnostic::Code;
use spur_engine::store::bounded_read::read_capped;
use spur_guards::jq::stream::{run_jq, JqArg, JqInput, JqOptions, JqRunError};
use spur_guards::jq::JqSandbox;

use super::{CliResult, Failure};

pub mod exit {
    pub const FALSY: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const COMPILE: u8 = 3;
    pub const NO_OUTPUT: u8 = 4;
    pub const RUNTIME: u8 = 5;
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print strings without quotes.
    #[arg(short = 'r', long = "raw-output")]
    raw_output: bool,
    /// Like -r, and no newline after each output.
    #[arg(short = 'j', long = "join-output")]
    join_output: bool,
    /// One line per output.
    #[arg(short = 'c', long = "compact-output")]
    compact: bool,
    /// Use `null` as the single input (read inputs with `input`/`inputs`).
    #[arg(short = 'n', long = "null-input")]
    null_input: bool,
    /// Read all inputs into one array.
    #[arg(short = 's', long = "slurp")]
    slurp: bool,
    /// Exit 1 if the last output is false or null, 4 if there was none.
    #[arg(short = 'e', long = "exit-status")]
    exit_status: bool,
    /// Sort object keys.
    #[arg(short = 'S', long = "sort-keys")]
    sort_keys: bool,
    /// Indent with tabs.
    #[arg(long)]
    tab: bool,
    /// Indent with N spaces (default 2).
    #[arg(long, value_name = "N")]
    indent: Option<usize>,
    /// Accepted for compatibility; output is never coloured.
    #[arg(short = 'M', long = "monochrome-output")]
    monochrome: bool,
    /// Bind $NAME to the string VALUE.
    #[arg(long = "arg", num_args = 2, value_names = ["NAME", "VALUE"])]
    arg: Vec<String>,
    /// Bind $NAME to the JSON value TEXT.
    #[arg(long = "argjson", num_args = 2, value_names = ["NAME", "TEXT"])]
    argjson: Vec<String>,
    /// The jq filter.
    #[arg(allow_hyphen_values = true)]
    filter: String,
    /// JSON files to read (standard input when none).
    files: Vec<PathBuf>,
}

/// `jq …` through the shim: the same flags, with the program named `jq`.
#[derive(Debug, Parser)]
#[command(name = "jq", version, about = "jq, embedded in spur")]
struct ShimCli {
    #[command(flatten)]
    args: Args,
}

/// `spur jq …` as the child sees it.
#[derive(Debug, Parser)]
#[command(name = "spur jq")]
struct SpurJqCli {
    #[command(flatten)]
    args: Args,
}

/// `spur __jq AS ARGS…`: `spur jq` (AS = `spur`) or the shim (AS = `jq`), in the child.
#[derive(Debug, clap::Args)]
pub struct Contained {
    /// How jq was called: `spur` (`spur jq`) or `jq` (the shim).
    called_as: String,
    /// The arguments as given after `spur jq` (or `jq`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<OsString>,
}

/// Entry point when spur was started as `jq`.
pub fn shim_main() -> ExitCode {
    super::failure::install_miette_hook();
    // Usage errors, --help and --version are answered here, without a child.
    let _ = ShimCli::parse();
    super::failure::finish(relay("jq", std::env::args_os().skip(1)))
}

/// `spur jq ARGS…` (already parsed, so usage errors are answered here): run them in a child.
pub fn supervise(_args: Args) -> CliResult {
    relay("spur", std::env::args_os().skip(2))
}

/// The stack of the thread the child evaluates on: deep enough for inputs and outputs at
/// the nesting limit; reserved, not committed, until used.
const CHILD_STACK: usize = 512 << 20;

/// The child's side: parse the arguments again and run on a large stack.
pub fn run_contained(contained: Contained) -> CliResult {
    spur_guards::jq::worker::disable_core_dumps();
    let parsed = if contained.called_as == "jq" {
        ShimCli::try_parse_from(std::iter::once(OsString::from("jq")).chain(contained.rest))
            .map(|c| c.args)
    } else {
        SpurJqCli::try_parse_from(std::iter::once(OsString::from("spur jq")).chain(contained.rest))
            .map(|c| c.args)
    };
    let args = parsed.map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let worker = std::thread::Builder::new()
        .name("spur-jq".into())
        .stack_size(CHILD_STACK)
        .spawn(move || super::failure::finish(run(args)));
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => Ok(code),
        _ => Err(crashed("the evaluation thread failed")),
    }
}

/// Run `spur __jq CALLED_AS ARGS…` with our stdin and stdout, relay its stderr (minus the
/// runtime's own words when it crashes) and exit as it did.
fn relay(called_as: &str, args: impl Iterator<Item = OsString>) -> CliResult {
    let exe = std::env::current_exe().map_err(|e| {
        Failure::usage(miette::miette!(
            "cannot find spur's executable to run jq: {e}"
        ))
    })?;
    let mut child = Command::new(exe)
        .arg("__jq")
        .arg(called_as)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| crashed(&format!("cannot start: {e}")))?;
    let mut overflowed = false;
    let mut out_of_memory = false;
    if let Some(stderr) = child.stderr.take() {
        let mut reader = std::io::BufReader::new(stderr);
        let mut line = Vec::new();
        let mut err = std::io::stderr();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            if text.contains("has overflowed its stack") {
                overflowed = true;
            } else if text.starts_with("memory allocation of") {
                out_of_memory = true;
            } else if !(text.starts_with("fatal runtime error:") && (overflowed || out_of_memory)) {
                let _ = err.write_all(&line);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| crashed(&format!("cannot wait for it: {e}")))?;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(exit::RUNTIME))),
        _ if overflowed => Err(crashed(
            "stack overflow: the filter recursed, or a value it built nests, too deeply",
        )),
        _ if out_of_memory => Err(crashed("out of memory")),
        (None, Some(signal)) => Err(crashed(&format!("killed by signal {signal}"))),
        (None, None) => Err(crashed(&format!("{status}"))),
    }
}

fn crashed(why: &str) -> Failure {
    Failure::with_code(
        MietteDiagnostic::new(format!("jq crashed: {why}"))
            .with_code(Code::JqCrashed)
            .with_help("nothing after the outputs printed so far was computed"),
        exit::RUNTIME,
    )
}

/// Where a run evaluates its jq guards: a worker process that is this executable.
pub fn sandbox() -> JqSandbox {
    match std::env::current_exe() {
        Ok(exe) => JqSandbox::worker(exe, [OsString::from("__jq-worker")]),
        Err(e) => JqSandbox::unavailable(format!("cannot find spur's executable: {e}")),
    }
}

pub fn run(args: Args) -> CliResult {
    spur_guards::jq::stream::install_stderr_logger();
    let mut named = Vec::new();
    for pair in args.arg.chunks(2) {
        if let [name, value] = pair {
            named.push((name.clone(), JqArg::String(value.clone())));
        }
    }
    for pair in args.argjson.chunks(2) {
        if let [name, text] = pair {
            named.push((name.clone(), JqArg::Json(text.clone())));
        }
    }
    let inputs = read_inputs(&args)?;
    let options = JqOptions {
        raw_output: args.raw_output,
        join_output: args.join_output,
        compact: args.compact,
        tab: args.tab,
        indent: args.indent,
        sort_keys: args.sort_keys,
        null_input: args.null_input,
        slurp: args.slurp,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = run_jq(&args.filter, &named, &inputs, &options, &mut out);
    let _ = out.flush();
    drop(out);
    let summary = match result {
        Ok(summary) => summary,
        // `halt` / `halt_error` already wrote what they had to; the code is the filter's.
        Err(JqRunError::Halted(code)) => {
            return Ok(ExitCode::from(u8::try_from(code).unwrap_or(exit::RUNTIME)))
        }
        Err(e) => return Err(failure(&args.filter, e)),
    };
    if !args.exit_status {
        return Ok(ExitCode::SUCCESS);
    }
    Ok(match summary.last_truthy {
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::from(exit::FALSY),
        None => ExitCode::from(exit::NO_OUTPUT),
    })
}

/// The most of one input that is read. Like jq, `spur jq` reads whatever it is given (a
/// pipe, `<(…)`, `/dev/stdin`), so a FIFO is waited on as jq would; the cap is what keeps
/// `/dev/zero` or a runaway producer from filling memory.
const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

fn read_inputs(args: &Args) -> Result<Vec<JqInput>, Failure> {
    if args.files.is_empty() {
        let stdin = std::io::stdin();
        // With -n, jq reads stdin only for `input`/`inputs`; never wait on a terminal.
        if args.null_input && stdin.is_terminal() {
            return Ok(Vec::new());
        }
        let bytes = read_capped(stdin.lock(), MAX_INPUT_BYTES).map_err(|e| {
            Failure::usage(
                MietteDiagnostic::new(format!("cannot read standard input: {e}"))
                    .with_code(Code::JqInput),
            )
        })?;
        return Ok(vec![JqInput {
            name: "<stdin>".into(),
            bytes,
        }]);
    }
    args.files
        .iter()
        .map(|path| {
            let unreadable = |reason: String| {
                Failure::usage(
                    MietteDiagnostic::new(format!("cannot read {}: {reason}", path.display()))
                        .with_code(Code::JqInput),
                )
            };
            let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
            let bytes =
                read_capped(file, MAX_INPUT_BYTES).map_err(|e| unreadable(e.to_string()))?;
            Ok(JqInput {
                name: path.display().to_string(),
                bytes,
            })
        })
        .collect()
}

fn failure(filter: &str, error: JqRunError) -> Failure {
    match error {
        JqRunError::Compile(e) => {
            // miette draws no label past the last character: point at the last one.
            let (offset, len) = match filter.char_indices().next_back() {
                Some((last, c)) if e.len == 0 && e.offset >= filter.len() => (last, c.len_utf8()),
                _ => (e.offset, e.len),
            };
            let diagnostic =
                MietteDiagnostic::new(format!("jq filter does not compile: {}", e.message))
                    .with_code(Code::JqCompile)
                    .with_label(LabeledSpan::at(offset..offset + len, e.message.clone()))
                    .with_help(
                        "see the jq manual for the filter language: https://jqlang.org/manual/",
                    );
            let report = Report::new(diagnostic)
                .with_source_code(NamedSource::new("filter", filter.to_owned()));
            Failure::with_code(report, exit::COMPILE)
        }
        JqRunError::BadArgJson { name, message } => Failure::usage(
            MietteDiagnostic::new(format!("--argjson {name}: not valid JSON: {message}"))
                .with_code(Code::JqArgjson),
        ),
        JqRunError::Input { name, message } => Failure::usage(
            MietteDiagnostic::new(format!("{name}: not valid JSON: {message}"))
                .with_code(Code::JqInput),
        ),
        JqRunError::Runtime(message) => Failure::with_code(
            MietteDiagnostic::new(format!("jq error: {message}")).with_code(Code::JqRuntime),
            exit::RUNTIME,
        ),
        JqRunError::Halted(code) => Failure::with_code(
            MietteDiagnostic::new(format!("the filter halted with code {code}"))
                .with_code(Code::JqHalt),
            exit::RUNTIME,
        ),
        JqRunError::Output(e) => Failure::with_code(
            MietteDiagnostic::new(format!("cannot write output: {e}")).with_code(Code::JqOutput),
            exit::USAGE,
        ),
    }
}
