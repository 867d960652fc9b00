//! `spur init`: the files a new project needs so that the next `spur run` works —
//! `.spur/config.yaml` (the agent with its preset, a placeholder verify gate, step
//! defaults), the standard task pipeline, and a sample task in the reference's task-file
//! format. Nothing that exists is overwritten: when any of the files is there, nothing is
//! written and the error lists them all.

mod project_config;
mod sample_task;

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use crate::agent::preset::Preset;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::write_new_atomic;

/// Where the task pipeline goes, relative to the project root.
pub const PIPELINE_PATH: &str = "pipelines/task-pipeline.yaml";
/// The sample task's id.
pub const SAMPLE_WBS: &str = "0001";

/// One file to write: where (relative to the project root) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaffoldFile {
    /// Relative to the project root.
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
}

/// What `spur init` writes for `preset`, and the command to run next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaffold {
    /// The agent preset the config names.
    pub preset: Preset,
    /// The files, in the order they are written.
    pub files: Vec<ScaffoldFile>,
    /// The `spur run …` command that runs the sample task through the pipeline.
    pub next: String,
}

impl Scaffold {
    /// The files for `preset`: `pipeline` is the task pipeline's text (the one spur ships),
    /// `today` the sample task's `created_at`.
    pub fn new(preset: Preset, pipeline: &str, today: &str) -> Self {
        let files = vec![
            ScaffoldFile {
                path: PathBuf::from(".spur/config.yaml"),
                text: project_config::text(preset),
            },
            ScaffoldFile {
                path: PathBuf::from(PIPELINE_PATH),
                text: pipeline.to_owned(),
            },
            ScaffoldFile {
                path: PathBuf::from(format!("docs/tasks/{SAMPLE_WBS}_say-hello.md")),
                text: sample_task::text(today),
            },
        ];
        Self {
            preset,
            files,
            next: next_command(preset, &agent_vars(pipeline)),
        }
    }

    /// Write every file under `root`; when any exists, write none.
    pub fn write(&self, root: &Path) -> Result<(), InitError> {
        let existing: Vec<String> = self
            .files
            .iter()
            .filter(|f| root.join(&f.path).symlink_metadata().is_ok())
            .map(|f| f.path.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(InitError::Exists { paths: existing });
        }
        let mut written: Vec<PathBuf> = Vec::new();
        for file in &self.files {
            let path = root.join(&file.path);
            if let Err(source) = write_new_atomic(&path, file.text.as_bytes()) {
                // All or nothing, as far as spur can: take back what this call wrote.
                for done in &written {
                    let _ = std::fs::remove_file(done);
                }
                return Err(InitError::Write { path, source });
            }
            written.push(path);
        }
        Ok(())
    }
}

/// The agent `spur init` picks without `--agent`: the first preset CLI found on `path`
/// (this process's PATH when `None`), else the stub. Also where it was found.
pub fn detect_preset(path: Option<&OsStr>) -> (Preset, Option<PathBuf>) {
    Preset::ALL
        .into_iter()
        .find_map(|p| {
            let program = p.program()?;
            spur_guards::find_executable(program, path).map(|found| (p, Some(found)))
        })
        .unwrap_or((Preset::Stub, None))
}

/// The run of the sample task: each var that names the agent of an `agent.run` or
/// `doctor.probe` step and defaults to another agent is set to the preset's name; the stub
/// skips the approval pause (there is no one to approve a stand-in's work).
fn next_command(preset: Preset, agent_vars: &[(String, String)]) -> String {
    let mut command = format!("spur run {PIPELINE_PATH} --var wbs={SAMPLE_WBS}");
    for (var, default) in agent_vars {
        if default != preset.name() {
            command.push_str(&format!(" --var {var}={preset}"));
        }
    }
    if preset == Preset::Stub {
        command.push_str(" --var profile=auto");
    }
    command
}

/// The vars (with their defaults) that make up the whole `agent` of the pipeline's
/// `agent.run` steps and the agents of its `doctor.probe` steps, in first-use order.
fn agent_vars(pipeline: &str) -> Vec<(String, String)> {
    let Ok(loaded) = crate::pipeline::load(&crate::source::SourceFile::new(
        PIPELINE_PATH,
        pipeline.to_owned(),
    )) else {
        return Vec::new();
    };
    let pipeline = loaded.pipeline;
    let mut out: Vec<(String, String)> = Vec::new();
    let actions = pipeline
        .states
        .iter()
        .flat_map(|s| s.on_enter.iter().chain(&s.on_exit));
    for action in actions {
        let options = match &action.kind.value {
            crate::pipeline::ActionKind::AgentRun(o) => vec![o.agent.as_ref()],
            crate::pipeline::ActionKind::DoctorProbe(o) => {
                vec![o.agent.as_ref(), o.implement_agent.as_ref()]
            }
            _ => continue,
        };
        for written in options
            .into_iter()
            .flatten()
            .filter_map(|o| o.written_str())
        {
            let Ok(template) = crate::template::Template::parse(written) else {
                continue;
            };
            let [crate::template::Segment::Var(var)] = template.segments.as_slice() else {
                continue;
            };
            let Some(decl) = pipeline.vars.iter().find(|d| d.name.value == var.value) else {
                continue;
            };
            if !out.iter().any(|(name, _)| *name == var.value) {
                out.push((var.value.clone(), decl.default.value.clone()));
            }
        }
    }
    out
}

/// Why `spur init` wrote nothing (or took back what it wrote).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// Files it would write exist.
    #[error("spur init writes nothing over existing files, and these exist: {}", paths.join(", "))]
    Exists {
        /// The files, relative to the project root.
        paths: Vec<String>,
    },
    /// A file could not be written.
    #[error("spur init cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

coded_diagnostic! {
    InitError {
        Self::Exists { .. } => Code::InitExists,
            help("move them away (or merge the book's examples into them by hand) and run spur init again");
        Self::Write { .. } => Code::InitWrite,
            help("check the directory's permissions; nothing spur init wrote was kept");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_when_any_file_exists_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pipelines")).unwrap();
        std::fs::write(dir.path().join(PIPELINE_PATH), "mine").unwrap();
        let scaffold = Scaffold::new(Preset::Stub, "pipeline", "2026-01-01");
        let err = scaffold.write(dir.path()).unwrap_err();
        assert!(matches!(&err, InitError::Exists { paths, .. } if paths == &[PIPELINE_PATH]));
        assert!(!dir.path().join(".spur/config.yaml").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(PIPELINE_PATH)).unwrap(),
            "mine"
        );
    }

    #[test]
    fn the_next_command_sets_the_vars_that_name_agents_to_the_preset() {
        let pipeline = "name: p\ninitialState: a\nvars: {who: claude, other: codex, n: x}\n\
            states:\n  - id: a\n    onEnter:\n      - {kind: agent.run, options: {agent: '${vars.who}'}}\n\
            \x20     - {kind: agent.run, options: {agent: 'pre-${vars.n}'}}\n\
            \x20     - {kind: doctor.probe, options: {agent: '${vars.who}', implementAgent: '${vars.other}'}}\n\
            transitions: []\n";
        let vars = agent_vars(pipeline);
        assert_eq!(
            vars,
            [
                ("who".into(), "claude".into()),
                ("other".into(), "codex".into())
            ]
        );
        assert_eq!(
            next_command(Preset::Claude, &vars),
            "spur run pipelines/task-pipeline.yaml --var wbs=0001 --var other=claude"
        );
        assert_eq!(
            next_command(Preset::Stub, &vars),
            "spur run pipelines/task-pipeline.yaml --var wbs=0001 --var who=stub --var other=stub \
             --var profile=auto"
        );
    }
}
