//! `spur graph RUN_OR_PIPELINE [--format dot|mermaid|json|svg | --json] [--paths]`: draw the
//! transition graph, or list the simple paths from the initial state to each terminal state.
//! Given a run (its id, a unique start of it, or `latest`) instead of a file, the run's
//! pipeline is drawn with the path it took and the state it is in highlighted (svg, dot).

use std::path::PathBuf;
use std::process::ExitCode;

use spur_engine::diagnostic::Code;
use spur_engine::graph::{
    to_dot_with_path, to_mermaid, to_svg, GraphDocument, PathsDocument, RunPath, SimplePaths,
    TransitionGraph,
};
use spur_engine::pipeline::{self, Pipeline};
use spur_engine::run::runs_list::{run_path, trace};
use spur_engine::store::state_dir::StateDir;

use super::{CliResult, Failure};

/// Most paths `--paths` lists unless `--max-paths` says otherwise.
const DEFAULT_MAX_PATHS: usize = 100;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pipeline file (YAML), or a run (its id, a unique start of it, or `latest`): its
    /// pipeline, with the run's path highlighted.
    #[arg(value_name = "RUN_OR_PIPELINE")]
    pipeline: PathBuf,
    /// Output format (default: dot; with --paths, a plain list unless json).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// List the simple paths from the initial state to each terminal state (with
    /// `--format json`: add them to the document under "paths").
    #[arg(long)]
    paths: bool,
    /// The graph as one JSON document (same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Stop listing paths after this many.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PATHS, requires = "paths")]
    max_paths: usize,
    /// The state directory a run is looked up in (default: the nearest `.spur/` up from here).
    #[arg(long, value_name = "D", env = "SPUR_STATE_DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Graphviz DOT (`dot -Tsvg`).
    Dot,
    /// A mermaid stateDiagram-v2.
    Mermaid,
    /// The graph and its analysis as one JSON document.
    Json,
    /// An SVG drawing, laid out by spur (no Graphviz needed).
    Svg,
}

pub fn run(mut args: Args) -> CliResult {
    if args.json {
        args.format = Some(Format::Json);
    }
    if args.paths
        && matches!(
            args.format,
            Some(Format::Dot | Format::Mermaid | Format::Svg)
        )
    {
        return Err(Failure::usage(miette::miette!(
            code = Code::GraphPathsFormat,
            help = "use `--paths` alone for a list, or `--paths --format json`",
            "--paths lists paths as text or JSON; it cannot be drawn as {}",
            match args.format {
                Some(Format::Dot) => "dot",
                Some(Format::Svg) => "svg",
                _ => "mermaid",
            }
        )));
    }
    let (pipeline_path, path) = pipeline_or_run(&args.pipeline, args.state_dir.as_deref())?;
    let pipeline = load(&pipeline_path)?;
    let graph = TransitionGraph::new(&pipeline);
    note_undrawn_transitions(&pipeline, &graph);

    let output = match (args.format, args.paths) {
        (Some(Format::Json), paths) => {
            let mut document = GraphDocument::new(&pipeline, &graph);
            if paths {
                let found = graph.simple_paths(args.max_paths);
                note_truncation(&found, args.max_paths);
                document.paths = Some(PathsDocument::new(&pipeline, &found, args.max_paths));
            }
            let mut json = serde_json::to_string_pretty(&document).map_err(|e| {
                Failure::usage(miette::miette!(
                    code = Code::GraphJson,
                    "cannot encode the graph as JSON: {e}"
                ))
            })?;
            json.push('\n');
            json
        }
        (_, true) => {
            let found = graph.simple_paths(args.max_paths);
            note_truncation(&found, args.max_paths);
            paths_text(&pipeline, &graph, &found, args.max_paths)
        }
        (Some(Format::Mermaid), false) => to_mermaid(&pipeline, &graph),
        (Some(Format::Svg), false) => to_svg(&pipeline, &graph, path.as_ref()),
        (Some(Format::Dot) | None, false) => to_dot_with_path(&pipeline, &graph, path.as_ref()),
    };
    out!("{output}");
    Ok(ExitCode::SUCCESS)
}

/// The pipeline file `given` names and, when it names a run instead (no such file, and a
/// run of the state directory by that id, start of one, or `latest`), the run's path.
fn pipeline_or_run(
    given: &std::path::Path,
    state_dir: Option<&std::path::Path>,
) -> Result<(PathBuf, Option<RunPath>), Failure> {
    if given.exists() {
        return Ok((given.to_path_buf(), None));
    }
    let Some(reference) = given.to_str() else {
        return Ok((given.to_path_buf(), None));
    };
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(miette::miette!("cannot read the current directory: {e}")))?;
    let state_dir = StateDir::resolve(state_dir, &cwd);
    // Not a file and not a run: say the file is missing, as before runs were drawn.
    let Ok(run_id) = spur_engine::run::runs_list::resolve_ref(&state_dir, reference) else {
        return Ok((given.to_path_buf(), None));
    };
    let pipeline = spur_engine::run::recorded_pipeline(&state_dir, &run_id)
        .map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let records = trace(&state_dir, &run_id).map_err(|e| Failure::usage(miette::Report::new(e)))?;
    Ok((pipeline, run_path(&records)))
}

/// Read and load the pipeline; a file the loader finds errors in is not drawn (exit 2),
/// since a drawing of a misread pipeline would mislead.
fn load(path: &std::path::Path) -> Result<Pipeline, Failure> {
    let source = pipeline::read_source(path).map_err(Failure::usage)?;
    let loaded = pipeline::load(&source).map_err(Failure::usage)?;
    let errors: Vec<_> = loaded
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    if errors.is_empty() {
        return Ok(loaded.pipeline);
    }
    let count = errors.len();
    for error in errors {
        eprintln!("{:?}", miette::Report::new(error));
    }
    Err(Failure::usage(miette::miette!(
        code = Code::GraphInvalidPipeline,
        help = "fix the errors above (`spur check` lists every finding)",
        "{} cannot be drawn: it has {count} error{}",
        path.display(),
        if count == 1 { "" } else { "s" }
    )))
}

/// Transitions to or from a state that does not exist are not edges; say so on stderr so the
/// drawing is not mistaken for the whole pipeline.
fn note_undrawn_transitions(pipeline: &Pipeline, graph: &TransitionGraph) {
    for (i, t) in pipeline.transitions.iter().enumerate() {
        let missing = [&t.from.value, &t.to.value]
            .into_iter()
            .find(|id| graph.state_index(id).is_none());
        if let Some(id) = missing {
            eprintln!(
                "note: transition {i} ({} → {}) is not drawn: there is no state `{id}` (see `spur check`)",
                t.from.value, t.to.value
            );
        }
    }
}

fn note_truncation(found: &SimplePaths, limit: usize) {
    if found.truncated {
        eprintln!("note: {}", why_stopped(found, limit));
    }
}

/// Why the path search stopped early: the limit, or (on huge graphs) the search bound.
fn why_stopped(found: &SimplePaths, limit: usize) -> String {
    if found.paths.len() >= limit {
        let paths = if limit == 1 { "path" } else { "paths" };
        format!("stopped after {limit} {paths}; more may exist (raise --max-paths to see more)")
    } else {
        "stopped at the search bound; more paths may exist".to_owned()
    }
}

/// The paths grouped by the terminal state they end in, terminals in declaration order.
fn paths_text(
    pipeline: &Pipeline,
    graph: &TransitionGraph,
    found: &SimplePaths,
    limit: usize,
) -> String {
    let (paths, truncated) = (&found.paths, found.truncated);
    let id = |i: usize| pipeline.states.get(i).map_or("?", |s| s.id.value.as_str());
    let mut out = String::new();
    let Some(initial) = graph.initial() else {
        out.push_str(&format!(
            "{}: no paths: the initial state `{}` does not exist\n",
            pipeline.name.value, pipeline.initial_state.value
        ));
        return out;
    };
    out.push_str(&format!(
        "{}: {} simple path{} from {}{}\n",
        pipeline.name.value,
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        id(initial),
        if truncated { " (stopped early)" } else { "" }
    ));
    for terminal in (0..pipeline.states.len()).filter(|&s| graph.is_terminal(s)) {
        let ending: Vec<&Vec<usize>> = paths
            .iter()
            .filter(|p| p.last() == Some(&terminal))
            .collect();
        let kind = if graph.is_failure(terminal) {
            "failure"
        } else {
            "success"
        };
        out.push_str(&format!("\nto {} ({kind}): ", id(terminal)));
        if ending.is_empty() {
            out.push_str(if truncated {
                "none found\n"
            } else {
                "no path\n"
            });
            continue;
        }
        out.push_str(&format!(
            "{} path{}\n",
            ending.len(),
            if ending.len() == 1 { "" } else { "s" }
        ));
        for path in ending {
            let names: Vec<&str> = path.iter().map(|&s| id(s)).collect();
            out.push_str(&format!("  {}\n", names.join(" → ")));
        }
    }
    if truncated {
        out.push_str(&format!("\nThe search {}.\n", why_stopped(found, limit)));
    }
    out
}
