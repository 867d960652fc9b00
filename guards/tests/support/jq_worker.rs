//! A jq worker for the tests and benches of spur-guards: what `spur __jq-worker` runs.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    spur_guards::jq::worker::serve()
}
