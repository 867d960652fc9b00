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
    cli::main()
}
