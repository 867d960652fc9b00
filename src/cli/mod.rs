//! Command-line surface. One file per subcommand; each parses its arguments,
//! calls the engine and renders. No domain logic lives here.

/// `print!` to standard output, except that a reader that has gone away (`spur trace | head`)
/// is not an error: the rest of the output is dropped and the command goes on and exits as it
/// would have. Any other write error is said on standard error, once per write.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` through [`out!`].
macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod output;

mod agent;
mod agent_doctor;
mod agent_stub;
mod audit;
mod check;
mod completions;
mod config_errors;
mod continue_run;
mod engine;
mod engine_run;
mod failure;
mod feature;
mod feature_check;
mod feature_status;
mod graph;
mod init;
mod interrupt_notice;
mod jq;
mod key;
mod lifecycle;
mod nested_call;
mod policy;
mod retry;
mod run;
mod run_failure;
mod run_policy;
mod run_progress;
mod run_ref;
mod runs;
mod schema;
mod state;
mod task;
mod task_certify;
mod task_check;
mod task_create;
mod task_field;
mod task_lifecycle;
mod task_list;
mod task_path;
mod task_record;
mod task_section;
mod task_status_change;
mod task_verdict;
mod task_verify_certs;
mod task_why;
mod trace;
mod ui;
mod verdict;
mod verify;
mod worker;
mod workflow;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use failure::{CliResult, Failure};

/// spur — a workflow state-machine engine driven by YAML pipelines.
#[derive(Debug, Parser)]
#[command(name = "spur", version, about, propagate_version = true)]
pub struct Cli {
    /// The state directory for the subcommand (before it; as SPUR_STATE_DIR). The
    /// subcommand's own --state-dir wins.
    #[arg(long = "state-dir", value_name = "D")]
    state_dir: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// `spur --state-dir D SUBCOMMAND …`: the value of a `--state-dir` before the subcommand.
/// Said as SPUR_STATE_DIR before the arguments are parsed, so that every subcommand that
/// takes the state directory from there (all of them, below their own `--state-dir`) has it.
fn state_dir_before_subcommand(args: &[std::ffi::OsString]) -> Option<std::ffi::OsString> {
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy();
        if text == "--state-dir" {
            return rest.next().cloned();
        }
        if let Some(value) = text.strip_prefix("--state-dir=") {
            return Some(value.into());
        }
        if !text.starts_with('-') {
            return None;
        }
    }
    None
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Scaffold a project: .spur/config.yaml, the task pipeline and a sample task.
    Init(init::Args),
    /// Statically check pipelines: every finding with its place in the file.
    Check(check::Args),
    /// Print the JSON Schema of the pipeline format.
    Schema(schema::Args),
    /// Commands under the TypeScript spur's names (`workflow validate`).
    Workflow(workflow::Args),
    /// Print shell completions.
    Completions(completions::Args),
    /// Run a pipeline to a terminal state or a pause.
    Run(run::Args),
    /// Resume a paused or interrupted run.
    Continue(continue_run::Args),
    /// Go on with a failed run from where it failed (its onEnter runs again).
    Retry(retry::Args),
    /// List the runs of the state directory, newest first.
    Runs(runs::Args),
    /// Show a run's history from its journal.
    Trace(trace::Args),
    /// Draw the transition graph (dot, mermaid, json) or list its simple paths.
    Graph(graph::Args),
    /// Run the verify gates (or `verify history` to show the verdict ledger).
    Verify(verify::Args),
    /// Check and inspect verdict artifacts.
    Verdict(verdict::Args),
    /// Tasks: create, list, show, check, update, record (done only through the done gate).
    Task(task::Args),
    /// Features: create, list, show, check, update (through their lifecycle), sync.
    Feature(feature::Args),
    /// The agents of .spur/config.yaml: check them (doctor); the stub preset's agent.
    Agent(agent::Args),
    /// Lifecycles driven from outside: ask an entity's instance to move, show it.
    Lifecycle(lifecycle::Args),
    /// The audit log of forced done overrides.
    Audit(audit::Args),
    /// Serve the runs, tasks and audit log as a local web app; answer paused runs there.
    Ui(ui::Args),
    /// The gate's policy (verify, doneGate of .spur/config.yaml): approve it, show it.
    Policy(policy::Args),
    /// The key that seals task ledgers, the audit log and run journals.
    Key(key::Args),
    /// Where the project's protected state lives; adopting an older spur's from .spur/.
    State(state::Args),
    /// Serve runs of a Restate server: this process is one worker of a fleet.
    Worker(worker::Args),
    /// The Restate server runs go to: register a worker with it.
    Engine(engine::Args),
    /// The embedded jq (also reached as `jq` through the PATH shim).
    Jq(jq::Args),
    /// `spur jq` itself, in the child process `spur jq` supervises.
    #[command(name = "__jq", hide = true)]
    JqContained(jq::Contained),
}

pub fn main() -> ExitCode {
    failure::install_miette_hook();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = nested_call::forward_to_run(&args) {
        return code;
    }
    if let Some(dir) = state_dir_before_subcommand(&args) {
        // Before any thread starts; every subcommand reads it through clap's `env`.
        std::env::set_var("SPUR_STATE_DIR", dir);
    }
    let cli = Cli::parse_from(args);
    let _ = &cli.state_dir;
    let result = match cli.command {
        Command::Completions(args) => completions::run(args),
        Command::Init(args) => init::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Run(args) => run::run(args),
        Command::Continue(args) => continue_run::run(args),
        Command::Retry(args) => retry::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Graph(args) => graph::run(args),
        Command::Check(args) => check::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Workflow(args) => workflow::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Verdict(args) => verdict::run(args),
        Command::Task(args) => task::run(args),
        Command::Feature(args) => feature::run(args),
        Command::Lifecycle(args) => lifecycle::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Ui(args) => ui::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Key(args) => key::run(args),
        Command::State(args) => state::run(args),
        Command::Worker(args) => worker::run(args),
        Command::Engine(args) => engine::run(args),
        Command::Jq(args) => jq::supervise(args),
        Command::JqContained(contained) => jq::run_contained(contained),
    };
    failure::finish(result)
}

/// Entry point when the binary runs as `jq` (the PATH shim).
pub fn jq_shim_main() -> ExitCode {
    jq::shim_main()
}

/// The clap command, for completions.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
