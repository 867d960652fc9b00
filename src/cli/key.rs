//! `spur key show [--json]` and `spur key init [--json]`: where the key that seals task ledgers, the
//! audit log and run journals lives, and making one by hand (spur makes it at the first
//! keyed write when none exists and no sealed record is around; after a lost key, only
//! `init` makes a new one).

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::store::chain_key::first_sealed_record;
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: KeyCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum KeyCommand {
    /// Say where the key file is (SPUR_KEY_FILE, else $XDG_STATE_HOME/spur/key, else
    /// ~/.local/state/spur/key) and the id of the key in it.
    Show {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Make a new key where none is (mode 0600). Records sealed with another key stay
    /// unverifiable.
    Init {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ShowJson<'a> {
    path: Option<String>,
    described: &'a str,
    exists: bool,
    key_id: Option<&'a str>,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    let file = state_dir.key_file();
    let described = file.describe();
    match args.command {
        KeyCommand::Show { json } => {
            let key = file.load().map_err(Failure::usage)?;
            if json {
                let document = ShowJson {
                    path: file.path().map(|p| p.display().to_string()),
                    described: &described,
                    exists: key.is_some(),
                    key_id: key.as_ref().map(|k| k.id()),
                };
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
                return Ok(ExitCode::SUCCESS);
            }
            outln!("key file: {described}");
            match &key {
                Some(key) => outln!("key: {}", key.id()),
                None => outln!(
                    "no key there yet: spur makes one at its first sealed record, unless records \
                     sealed with a key exist (then restore it, or run `spur key init`)"
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        KeyCommand::Init { json } => {
            if file.load().map_err(Failure::usage)?.is_some() {
                return Err(Failure::usage(miette::miette!(
                    code = Code::KeyExists,
                    help = "spur never replaces a key: records sealed with it would become \
                            unverifiable. Move it away yourself if you mean to",
                    "the key file {described} already holds a key"
                )));
            }
            let key = file.create().map_err(Failure::usage)?;
            let other = first_sealed_record(&state_dir).filter(|(_, id)| id != key.id());
            if json {
                let document = serde_json::json!({
                    "path": file.path().map(|p| p.display().to_string()),
                    "described": described,
                    "keyId": key.id(),
                    "unverifiableRecord": other.as_ref().map(|(record, id)| {
                        serde_json::json!({ "record": record.to_string(), "keyId": id })
                    }),
                });
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
                return Ok(ExitCode::SUCCESS);
            }
            outln!("made key {} in {described}", key.id());
            outln!("back it up: without it, no record it seals can be verified (book: Keys)");
            if let Some((record, key_id)) = other {
                eprintln!(
                    "warning: {record} is sealed with key {key_id}: records of that key stay \
                     unverifiable"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
