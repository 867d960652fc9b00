//! `spur state show [--json]` and `spur state adopt`: where the project's protected state
//! lives (outside the project, so that steps cannot write it), and moving the protected
//! state an older spur kept in `.spur/` there.

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::store::legacy_state::{self, Adopted};
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: StateCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum StateCommand {
    /// Say where the project's protected state lives ($XDG_STATE_HOME/spur/projects/…).
    Show {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Move the ledgers, journals, audit log and policy snapshots an older spur kept in
    /// .spur/ to the protected place (what is there already is kept).
    Adopt,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    match args.command {
        StateCommand::Show { json } => {
            let protected = state_dir.protected_dir().display().to_string();
            let legacy = legacy_state::legacy_present(&state_dir);
            if json {
                let document = serde_json::json!({
                    "stateDir": state_dir.root().display().to_string(),
                    "protectedDir": protected,
                    "legacyInStateDir": legacy,
                });
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
            } else {
                outln!("state directory: {}", state_dir.root().display());
                outln!("protected state: {protected}");
                if legacy {
                    outln!(
                        "the state directory still holds protected state of an older spur: \
                         `spur state adopt` moves it"
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        StateCommand::Adopt => {
            let done = legacy_state::adopt(&state_dir)
                .map_err(|e| Failure::usage(miette::miette!("{e}")))?;
            if done.is_empty() {
                outln!("nothing to adopt in {}", state_dir.root().display());
            }
            let mut kept = false;
            for item in done {
                match item {
                    Adopted::Moved { from, to } => {
                        outln!("moved {} to {}", from.display(), to.display())
                    }
                    Adopted::Kept { from, existing } => {
                        kept = true;
                        outln!(
                            "kept {}: {} exists already (move or remove one yourself)",
                            from.display(),
                            existing.display()
                        )
                    }
                }
            }
            Ok(match kept {
                true => ExitCode::from(1),
                false => ExitCode::SUCCESS,
            })
        }
    }
}
