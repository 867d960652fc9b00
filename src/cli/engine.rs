//! `spur engine register --admin URL ADDR`: tell a Restate server where a worker listens.
//! Also which engine a run goes to: `--engine local|restate` and `--ingress URL`, else
//! `engine:` of `.spur/config.yaml`, else this machine.

use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::run::engine_config::EngineConfig;
use spur_engine::run::fleet_tree::DEFAULT_REMOTE;
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Register the worker listening at ADDR (host:port, or a URL) with the server.
    Register {
        /// The server's admin API (default: `engine.admin` of .spur/config.yaml).
        #[arg(long, value_name = "URL")]
        admin: Option<String>,
        /// Where the worker listens, as the server reaches it.
        #[arg(value_name = "ADDR")]
        addr: String,
        /// The state directory whose config names the admin URL.
        #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
        state_dir: Option<std::path::PathBuf>,
    },
}

/// Which engine `spur run` and `spur continue` use.
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    /// Where the run runs: `local` (this machine, the default) or `restate` (the server
    /// named by --ingress or `engine:` of .spur/config.yaml).
    #[arg(long, value_name = "KIND", value_parser = ["local", "restate"])]
    pub engine: Option<String>,
    /// The Restate server's ingress URL (with --engine restate).
    #[arg(long, value_name = "URL", env = "SPUR_INGRESS")]
    pub ingress: Option<String>,
    /// Start the run on the engine and print its id at once, without waiting.
    #[arg(long)]
    pub detach: bool,
}

/// Which engine `spur runs` and `spur trace` read runs from.
#[derive(Debug, clap::Args)]
pub struct ReadEngineArgs {
    /// Read runs from `local` (this machine's .spur/, the default) or `restate` (the server
    /// named by --ingress or `engine:` of .spur/config.yaml).
    #[arg(long, value_name = "KIND", value_parser = ["local", "restate"])]
    pub engine: Option<String>,
    /// The Restate server's ingress URL (with --engine restate).
    #[arg(long, value_name = "URL", env = "SPUR_INGRESS")]
    pub ingress: Option<String>,
}

impl ReadEngineArgs {
    /// The engine's ingress, or `None` for this machine.
    pub fn ingress(&self, state_dir: &StateDir) -> Result<Option<String>, Failure> {
        let args = EngineArgs {
            engine: self.engine.clone(),
            ingress: self.ingress.clone(),
            detach: false,
        };
        Ok(match args.target(state_dir)? {
            Target::Local => None,
            Target::Restate { ingress, .. } => Some(ingress),
        })
    }
}

/// Where a run goes.
pub enum Target {
    Local,
    Restate {
        ingress: String,
        /// The git remote of a run's tree (`engine.remote`, else `origin`).
        remote: String,
    },
}

impl EngineArgs {
    pub fn target(&self, state_dir: &StateDir) -> Result<Target, Failure> {
        let configured = configured(state_dir)?;
        let kind = self.engine.as_deref();
        let (from_config, remote) = match &configured {
            EngineConfig::Restate {
                ingress, remote, ..
            } => (Some(ingress.clone()), remote.clone()),
            EngineConfig::Local => (None, None),
        };
        let remote = remote.unwrap_or_else(|| DEFAULT_REMOTE.to_owned());
        let target = match (kind, self.ingress.clone().or(from_config)) {
            (Some("local"), _) => Target::Local,
            (Some("restate"), None) => {
                return Err(Failure::usage(miette::miette!(
                    code = Code::UsageEngine,
                    help = "pass --ingress URL, or write `engine: {kind: restate, ingress: URL, admin: URL}` in .spur/config.yaml",
                    "--engine restate needs the server's ingress URL"
                )))
            }
            (Some("restate"), Some(ingress)) => Target::Restate { ingress, remote },
            (_, _) => match configured {
                EngineConfig::Restate { ingress, .. } => Target::Restate { ingress, remote },
                EngineConfig::Local => Target::Local,
            },
        };
        if self.detach && matches!(target, Target::Local) {
            return Err(Failure::usage(miette::miette!(
                code = Code::UsageEngine,
                help =
                    "a local run runs in this process; send it to a server with --engine restate",
                "--detach needs a run engine"
            )));
        }
        Ok(target)
    }
}

/// `engine:` of `.spur/config.yaml` (local when the file or the key is absent), read by
/// the engine's strict reader (an unknown key is an error pointing at it).
fn configured(state_dir: &StateDir) -> Result<EngineConfig, Failure> {
    EngineConfig::load(state_dir)
        .map_err(|e| super::config_errors::config_failure(state_dir, miette::Report::new(e)))
}

pub fn run(args: Args) -> CliResult {
    match args.command {
        Command::Register {
            admin,
            addr,
            state_dir,
        } => {
            let cwd = std::env::current_dir().map_err(|e| {
                Failure::usage(miette::miette!("cannot read the current directory: {e}"))
            })?;
            let state_dir = StateDir::resolve(state_dir.as_deref(), &cwd);
            let admin = match admin {
                Some(admin) => admin,
                None => match configured(&state_dir)? {
                    EngineConfig::Restate {
                        admin: Some(admin), ..
                    } => admin,
                    _ => {
                        return Err(Failure::usage(miette::miette!(
                            code = Code::UsageEngine,
                            help = "pass --admin URL, or write `engine.admin` in .spur/config.yaml",
                            "no admin URL of a Restate server"
                        )))
                    }
                },
            };
            let uri = if addr.contains("://") {
                addr
            } else {
                format!("http://{addr}")
            };
            spur_restate::client::register(&admin, &uri).map_err(|e| {
                Failure::with_code(
                    miette::miette!(
                        code = Code::RunEngine,
                        help = "is the server up, and the worker listening at that address?",
                        "cannot register {uri}: {e}"
                    ),
                    super::failure::exit::FAILED,
                )
            })?;
            outln!("registered {uri} with {admin}");
            Ok(ExitCode::SUCCESS)
        }
    }
}
