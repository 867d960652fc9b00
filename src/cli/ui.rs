//! `spur ui [--listen ADDR] [--token] [--engine restate --ingress URL]`: serve the state
//! directory as a local web app (the runs, a run's graph and journal, the tasks, the audit
//! log; a paused run answered from the page). With a Restate engine (configured, or
//! `--engine restate`) the runs shown and answered are the server's, as `spur runs` and
//! `spur trace` show them. The server is `spur-ui`; this file binds it and says where it is.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::store::state_dir::StateDir;
use spur_ui::{Engine, Ui, UiConfig};

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The address to listen on. Loopback unless --token is given.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// Require a token: spur prints a one-time URL that sets it as a cookie in the browser
    /// that opens it; every other request without it is refused. Needed off loopback.
    #[arg(long)]
    token: bool,
    /// The state directory (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
    #[command(flatten)]
    engine: super::engine::ReadEngineArgs,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let engine = match args.engine.ingress(&state_dir)? {
        Some(ingress) => Engine::Restate { ingress },
        None => Engine::Local,
    };
    let spur_exe = std::env::current_exe().map_err(|e| {
        Failure::usage(miette::miette!(
            "cannot find the spur binary to answer runs with: {e}"
        ))
    })?;
    let root = match &engine {
        Engine::Local => state_dir.root().display().to_string(),
        Engine::Restate { ingress } => format!(
            "runs of the engine {ingress}, tasks and audit of {}",
            state_dir.root().display()
        ),
    };
    let ui = Ui::bind(UiConfig {
        listen: args.listen,
        state_dir,
        engine,
        spur_exe,
        token: args.token,
    })
    .map_err(|e| {
        Failure::usage(miette::miette!(
            code = Code::UiCannotServe,
            help = "a loopback address (127.0.0.1:PORT) needs no token; another needs --token",
            "{e}"
        ))
    })?;
    match ui.login_url() {
        Some(url) => outln!(
            "spur ui: {root} at http://{}/ — open this URL once to log in: {url}",
            ui.address()
        ),
        None => outln!("spur ui: {root} at http://{}/", ui.address()),
    }
    ui.run();
    Ok(ExitCode::SUCCESS)
}
