//! The `spur` binary: parses arguments, calls the engine, renders results.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
