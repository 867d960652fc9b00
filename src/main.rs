//! The `spur` binary: parses arguments, calls the engine, renders results.

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    // Shell steps find `jq` through a shim directory whose `jq` links to this binary.
    let argv0 = std::env::args_os().next();
    let name = argv0
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_name);
    if name == Some(std::ffi::OsStr::new("jq")) {
        return cli::jq_shim_main();
    }
    // A run's jq worker (`spur_guards::jq::JqSandbox`) starts with nothing to parse: it
    // serves at once, without building the command line's parser.
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("__jq-worker")) {
        return spur_guards::jq::worker::serve();
    }
    cli::main()
}
