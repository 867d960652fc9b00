//! `spur feature …`: features as the reference keeps them (`docs/features*/<id>_<slug>.md`).
//! `create`, `list` and `show` live here; `check` in `feature_check.rs`; `update` and
//! `sync`, which move a feature through its lifecycle, in `feature_status.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::feature::{self, canonical_feature_status, create_feature, locate_feature};
use spur_engine::store::state_dir::StateDir;
use spur_engine::task_file::TaskDocument;

use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: FeatureCommand,
    /// The state directory (default: the nearest .spur/ walking up, else ./.spur).
    #[arg(long, global = true, env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum FeatureCommand {
    /// Create a feature; allocates the next id (a group letter, or the parent and a digit).
    Create(CreateArgs),
    /// List features, optionally by status or priority.
    List(ListArgs),
    /// Show a feature (its file; `--json` with its frontmatter).
    #[command(alias = "get")]
    Show(ShowArgs),
    /// Check feature files for their status, or for the one they are to enter.
    Check(super::feature_check::Args),
    /// Move a feature through its lifecycle, set a frontmatter field, or replace a section.
    Update(super::feature_status::UpdateArgs),
    /// Align a feature's status with its tasks' (through its lifecycle).
    Sync(super::feature_status::SyncArgs),
}

#[derive(Debug, clap::Args)]
struct CreateArgs {
    /// The feature's name.
    name: String,
    /// The parent feature (the child gets the next free digit 1–9).
    #[arg(long, value_name = "ID")]
    parent: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Only features in this status.
    #[arg(long)]
    status: Option<String>,
    /// Only features of this priority (P0–P3).
    #[arg(long)]
    priority: Option<String>,
    /// Print one JSON array instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The feature id.
    id: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let cwd = std::env::current_dir().map_err(|e| Failure::usage(miette::miette!("{e}")))?;
    let state_dir = StateDir::resolve(args.state_dir.as_deref(), &cwd);
    // Lifecycle guards run sandboxed (ARCHITECTURE.md, *Sandbox*).
    spur_engine::sandbox::confine_steps(&state_dir);
    match args.command {
        FeatureCommand::Create(a) => create(a, &state_dir),
        FeatureCommand::List(a) => list(a, &state_dir),
        FeatureCommand::Show(a) => show(a, &state_dir),
        FeatureCommand::Check(a) => super::feature_check::run(a, &state_dir),
        FeatureCommand::Update(a) => super::feature_status::update(a, &state_dir),
        FeatureCommand::Sync(a) => super::feature_status::sync(a, &state_dir),
    }
}

/// The reference's reference to a feature file in its write results.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FeatureRef {
    kind: &'static str,
    id: String,
    file_path: String,
    folder: String,
}

impl FeatureRef {
    pub(super) fn new(id: &str, path: &std::path::Path) -> Self {
        Self {
            kind: "feature",
            id: id.to_owned(),
            file_path: path.display().to_string(),
            folder: path
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedJson {
    #[serde(rename = "ref")]
    entity: FeatureRef,
    event_name: &'static str,
    id: String,
    file_path: String,
    name: String,
    status: &'static str,
}

fn create(args: CreateArgs, state_dir: &StateDir) -> CliResult {
    if args.name.trim().is_empty() || args.name.contains('\n') {
        return Err(Failure::usage(miette::miette!(
            code = spur_engine::diagnostic::Code::FeatureInvalid,
            help = "give the feature a one-line name",
            "a feature name must be one non-empty line"
        )));
    }
    let created =
        create_feature(state_dir, &args.name, args.parent.as_deref()).map_err(Failure::usage)?;
    if args.json {
        let doc = CreatedJson {
            entity: FeatureRef::new(&created.id, &created.path),
            event_name: "feature.created",
            id: created.id.clone(),
            file_path: created.path.display().to_string(),
            name: args.name,
            status: "backlog",
        };
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        let shown = created
            .path
            .strip_prefix(state_dir.project_root())
            .unwrap_or(&created.path);
        outln!("Created feature {}: {}", created.id, shown.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// A feature as `list` and `show` print it (the reference's `FeatureSummary`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Summary {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) status: String,
    pub(super) priority: String,
    pub(super) file_path: String,
    pub(super) frontmatter: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) content: Option<String>,
}

pub(super) fn summary(id: &str, document: &TaskDocument) -> Summary {
    let front = document.frontmatter();
    let get = |k: &str| front.and_then(|f| f.scalar(k));
    Summary {
        id: id.to_owned(),
        name: get("name").unwrap_or_else(|| id.to_owned()),
        status: get("status")
            .map(|s| canonical_feature_status(&s).map(str::to_owned).unwrap_or(s))
            .unwrap_or_else(|| "backlog".to_owned()),
        priority: get("priority").unwrap_or_else(|| "P2".to_owned()),
        file_path: document.path().display().to_string(),
        frontmatter: front.map(|f| f.to_json()).unwrap_or_default(),
        content: None,
    }
}

fn list(args: ListArgs, state_dir: &StateDir) -> CliResult {
    let want = args
        .status
        .as_deref()
        .map(|s| canonical_feature_status(s).unwrap_or("?"));
    let mut rows = Vec::new();
    for file in feature::list_features(state_dir.project_root()) {
        let Ok(document) = TaskDocument::read(&file.path) else {
            continue;
        };
        let row = summary(&file.id, &document);
        if want.is_some_and(|w| w != row.status)
            || args.priority.as_deref().is_some_and(|p| p != row.priority)
        {
            continue;
        }
        rows.push(row);
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else if rows.is_empty() {
        outln!("(no features)");
    } else {
        for f in &rows {
            outln!("{:<4}  {:<9}  {}  {}", f.id, f.status, f.priority, f.name);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show(args: ShowArgs, state_dir: &StateDir) -> CliResult {
    let path = locate_feature(state_dir.project_root(), &args.id).map_err(Failure::usage)?;
    let document = TaskDocument::read(&path).map_err(Failure::usage)?;
    if args.json {
        let mut row = summary(&args.id, &document);
        row.content = Some(document.text().to_owned());
        outln!("{}", serde_json::to_string_pretty(&row).unwrap_or_default());
    } else {
        out!("{}", document.text());
    }
    Ok(ExitCode::SUCCESS)
}
