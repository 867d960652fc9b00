//! The `stub` preset's agent (`spur agent stub INPUT`): a stand-in that lets a pipeline run
//! end to end before a real agent is set up. It is not an agent and claims nothing it did
//! not check:
//!
//! - `/implement W` and `/fix W` append the line `hello from task W …` to `NOTES.md`
//!   (what the sample task `spur init` writes asks for, and a change for `requireDiff`);
//! - `/review W` says it reviewed nothing;
//! - `/verify W` runs the command each acceptance criterion of W's task file names and
//!   answers in the answer-file format: a criterion is MET only when its command exited 0,
//!   a requirement only when every core criterion is, the verdict PASS only when all are.
//!   A criterion that names no command is UNMET (N/A when advisory): the stub cannot judge it.
//!
//! Anything else is answered with a line saying what it got.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use spur_process::{ProcessSpec, ProcessStatus};

use super::slash_command::SlashCommand;
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::atomic_file::append_line_durable;
use crate::store::state_dir::StateDir;
use crate::task_file::{locate_task_file, read_task_file, TaskFile, TaskFileError};
use crate::wbs::Wbs;

/// The file the stub writes its greeting to, in the project root.
pub const NOTES_FILE: &str = "NOTES.md";
/// How long one criterion's command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Why the stub could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// `NOTES.md` cannot be written.
    #[error("the stub agent cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `/verify` without a task id.
    #[error("the stub agent verifies a task: `/verify WBS`, not `{input}`")]
    NoTask {
        /// What it was given.
        input: String,
    },
    /// The task file cannot be found or read.
    #[error(transparent)]
    TaskFile(#[from] TaskFileError),
}

coded_diagnostic! {
    StubError {
        forward { TaskFile }
        Self::Write { .. } => Code::AgentStub,
            help("the stub writes NOTES.md in the directory it runs in (the project root)");
        Self::NoTask { .. } => Code::AgentStub,
            help("give the task id after the command, as the shipped pipeline does: `/verify ${{vars.wbs}}`");
    }
}

/// Do what `input` asks, in `project_root`; the text to print on stdout.
pub fn respond(
    project_root: &Path,
    state_dir: &StateDir,
    input: &str,
) -> Result<String, StubError> {
    let Some(slash) = SlashCommand::parse(input) else {
        return Ok(format!("stub agent: nothing to do for {input:?}\n"));
    };
    let (name, wbs) = if slash.namespace == Some("sp") {
        reference_command(slash.name, slash.args, project_root, state_dir)
    } else {
        let wbs = slash
            .args
            .split_whitespace()
            .next()
            .and_then(|w| Wbs::parse(w).ok());
        (slash.name, wbs)
    };
    match name {
        "implement" | "fix" => greet(project_root, wbs.as_ref(), input),
        "review" => Ok(match &wbs {
            Some(w) => format!(
                "Stub review of task {w}: the stub agent reads no code and has no findings.\n"
            ),
            None => "Stub review: the stub agent reads no code and has no findings.\n".to_owned(),
        }),
        "verify" => {
            let wbs = wbs.ok_or_else(|| StubError::NoTask {
                input: input.to_owned(),
            })?;
            let path = locate_task_file(&wbs, None, project_root, state_dir)?;
            let task = read_task_file(&path)?;
            Ok(answer(project_root, &task))
        }
        _ => Ok(format!("stub agent: nothing to do for {input:?}\n")),
    }
}

/// The reference's own commands (`/sp:dev-run --mode implement W --auto`, `/sp:dev-fixall
/// …`, `/sp:dev-review W`, `/sp:dev-verify W …`), as the corpus pipelines send them: what
/// the stub does for each, and the task — the first argument that names a task file.
fn reference_command<'a>(
    name: &'a str,
    args: &str,
    project_root: &Path,
    state_dir: &StateDir,
) -> (&'a str, Option<Wbs>) {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mode = words
        .windows(2)
        .find(|w| w.first() == Some(&"--mode"))
        .and_then(|w| w.get(1).copied());
    let stub_name = match (name, mode) {
        ("dev-run", Some("fix")) | ("dev-fixall" | "dev-fix", _) => "fix",
        ("dev-run", Some("review")) | ("dev-review", _) => "review",
        ("dev-run", Some("verify")) | ("dev-verify", _) => "verify",
        ("dev-run" | "dev-implement", _) => "implement",
        _ => name,
    };
    let wbs = words
        .iter()
        .filter(|w| !w.starts_with('-'))
        .filter_map(|w| Wbs::parse(w.trim_matches('"')).ok())
        .find(|w| locate_task_file(w, None, project_root, state_dir).is_ok());
    (stub_name, wbs)
}

fn greet(project_root: &Path, wbs: Option<&Wbs>, input: &str) -> Result<String, StubError> {
    let line = match wbs {
        Some(w) => format!("hello from task {w} (written by spur's stub agent for `{input}`)"),
        None => format!("hello from spur's stub agent (for `{input}`)"),
    };
    let path = project_root.join(NOTES_FILE);
    append_line_durable(&path, &line).map_err(|source| StubError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(format!(
        "stub agent: appended to {NOTES_FILE}: {line}\nNothing else was implemented: the stub is a stand-in for an agent.\n"
    ))
}

/// How one criterion's command went.
struct Checked {
    met: bool,
    evidence: String,
    kind: &'static str,
    status: &'static str,
}

fn answer(project_root: &Path, task: &TaskFile) -> String {
    let file = task
        .path
        .strip_prefix(project_root)
        .unwrap_or(&task.path)
        .display()
        .to_string();
    let checked: Vec<(String, bool, Checked)> = task
        .acceptance
        .iter()
        .map(|ac| {
            let exempt = ac.parts.is_exempt();
            let anchor = format!("`{file}:{}`", ac.line);
            let checked = match &ac.command {
                Some(command) => {
                    let status = run(project_root, command);
                    let met = status.success();
                    Checked {
                        met,
                        evidence: if met {
                            format!("its command exited 0, run by the stub agent ({anchor})")
                        } else {
                            format!("its command {status} ({anchor})")
                        },
                        kind: "command",
                        status: if met { "MET" } else { "UNMET" },
                    }
                }
                None if exempt => Checked {
                    met: true,
                    evidence: format!("names no command, and is advisory ({anchor})"),
                    kind: "n/a",
                    status: "N/A",
                },
                None => Checked {
                    met: false,
                    evidence: format!(
                        "names no command; the stub agent judges only commands ({anchor})"
                    ),
                    kind: "n/a",
                    status: "UNMET",
                },
            };
            let name = ac
                .parts
                .aliases
                .first()
                .cloned()
                .unwrap_or_else(|| ac.label.clone());
            (name, exempt, checked)
        })
        .collect();
    let core: Vec<&Checked> = checked
        .iter()
        .filter(|(_, e, _)| !e)
        .map(|(_, _, c)| c)
        .collect();
    let core_met = !core.is_empty() && core.iter().all(|c| c.met);
    let all_met = core_met && checked.iter().all(|(_, _, c)| c.met);
    let mut out = String::new();
    let _ = writeln!(out, "Verdict: {}\n", if all_met { "PASS" } else { "FAIL" });
    let _ = writeln!(
        out,
        "The stub agent ran the command each acceptance criterion names; it reads no code.\n"
    );
    let _ = writeln!(out, "## Requirements\n");
    let _ = writeln!(out, "| Req | Status | Evidence |");
    let _ = writeln!(out, "|-----|--------|----------|");
    for req in &task.requirements {
        let anchor = format!("`{file}:{}`", req.line);
        let (status, evidence) = if core_met {
            (
                "MET",
                format!("every core acceptance criterion's command passed ({anchor})"),
            )
        } else if core.is_empty() {
            (
                "UNMET",
                format!("the task names no core criterion the stub agent can check ({anchor})"),
            )
        } else {
            (
                "UNMET",
                format!("not every core acceptance criterion passed ({anchor})"),
            )
        };
        let _ = writeln!(out, "| {} | {status} | {evidence} |", req.id);
    }
    let _ = writeln!(out, "\n## Acceptance Criteria\n");
    let _ = writeln!(out, "| AC | Status | Evidence Type | Evidence |");
    let _ = writeln!(out, "|----|--------|---------------|----------|");
    for (name, _, c) in &checked {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} |",
            c.status, c.kind, c.evidence
        );
    }
    out
}

/// Run a criterion's command as `spur verify` does: `sh -c`, in the project root.
fn run(project_root: &Path, command: &str) -> ProcessStatus {
    ProcessSpec::shell(command)
        .cwd(project_root)
        .timeout(COMMAND_TIMEOUT)
        .capture_limit(0)
        .run()
        .status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_references_sp_commands_are_the_stubs_verbs_for_the_task_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs/tasks")).unwrap();
        std::fs::write(root.join("docs/tasks/0592_x.md"), "# x\n").unwrap();
        let state_dir = StateDir::at(root.join(".spur"));
        let said = respond(root, &state_dir, "/sp:dev-run --mode implement 0592 --auto").unwrap();
        assert!(said.contains("appended"), "{said}");
        let notes = std::fs::read_to_string(root.join(NOTES_FILE)).unwrap();
        assert!(notes.starts_with("hello from task 0592 "), "{notes}");
        let said = respond(root, &state_dir, "/sp:dev-review 0592 --auto").unwrap();
        assert!(said.starts_with("Stub review of task 0592"), "{said}");
        // A number that names no task file is not the task; an unknown sp: command is
        // answered, not run.
        let said = respond(root, &state_dir, "/sp:dev-fixall \"true\" --findings 1234").unwrap();
        assert!(said.contains("hello from spur's stub agent"), "{said}");
        let said = respond(root, &state_dir, "/sp:dev-brainstorm --feature A").unwrap();
        assert!(said.starts_with("stub agent: nothing to do"), "{said}");
    }
}
