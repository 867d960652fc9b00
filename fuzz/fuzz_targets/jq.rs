//! `spur jq` argument handling: `--arg`/`--argjson` names and values, the input stream
//! (several texts, `-s`, `-n`) and every output switch reach `run_jq`, which must return a
//! value or an error — never panic. Any filter text is compiled; a filter is run only when
//! it cannot loop forever by construction (no `def`, recursion or generator builtins),
//! because `spur jq`, like jq, has no deadline (guards do: `JqLimits`).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use spur_guards::jq::stream::{run_jq, JqArg, JqInput, JqOptions};
use spur_guards::jq::JqProgram;

#[derive(Debug, Arbitrary)]
struct Invocation {
    filter: String,
    args: Vec<(String, Arg)>,
    inputs: Vec<Vec<u8>>,
    raw_output: bool,
    join_output: bool,
    compact: bool,
    tab: bool,
    indent: Option<u8>,
    sort_keys: bool,
    null_input: bool,
    slurp: bool,
}

#[derive(Debug, Arbitrary)]
enum Arg {
    String(String),
    Json(String),
}

/// Words with which a short filter can run without end or grow without bound: recursion
/// (`def`, `recurse`, `..`, `walk`), generators and loops, and `*` (string repetition).
const UNBOUNDED: &[&str] = &[
    "def", "recurse", "repeat", "range", "while", "until", "..", "walk", "combinations",
    "*", "limit", "foreach", "reduce",
];

fuzz_target!(|call: Invocation| {
    let names: Vec<&str> = call.args.iter().map(|(n, _)| n.as_str()).collect();
    let _ = JqProgram::compile(&call.filter, &names);
    if call.filter.len() > 64 || UNBOUNDED.iter().any(|w| call.filter.contains(w)) {
        return;
    }
    let args: Vec<(String, JqArg)> = call
        .args
        .into_iter()
        .take(8)
        .map(|(name, arg)| {
            let arg = match arg {
                Arg::String(s) => JqArg::String(s),
                Arg::Json(text) => JqArg::Json(text),
            };
            (name, arg)
        })
        .collect();
    let inputs: Vec<JqInput> = call
        .inputs
        .into_iter()
        .take(4)
        .enumerate()
        .map(|(i, bytes)| JqInput {
            name: format!("input-{i}.json"),
            bytes,
        })
        .collect();
    let options = JqOptions {
        raw_output: call.raw_output,
        join_output: call.join_output,
        compact: call.compact,
        tab: call.tab,
        indent: call.indent.map(usize::from),
        sort_keys: call.sort_keys,
        null_input: call.null_input,
        slurp: call.slurp,
    };
    let mut out = Vec::new();
    let _ = run_jq(&call.filter, &args, &inputs, &options, &mut out);
});
