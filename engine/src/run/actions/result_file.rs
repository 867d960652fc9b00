//! `resultFile` of `command.gate` and `doctor.probe`: the file a step writes `PASS` or
//! `FAIL` to for the transitions to read. It must resolve under the state directory's
//! `run/`, with no `..` and no symlink on the way, so that a var cannot point a step's
//! write at the journal, a ledger or a file outside the project.

use std::path::{Component, Path, PathBuf};

use super::ActionContext;

/// `rel` resolved against the project root; an error (naming the action's kind) when it
/// does not lie under `<state>/run/`, checked before anything is created.
pub(crate) fn result_path(ctx: &ActionContext<'_>, rel: &str) -> Result<PathBuf, String> {
    let refuse = |why: &str| format!("{}: resultFile {rel:?} {why}", ctx.kind());
    let path = Path::new(rel);
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(refuse("must not contain `..`"));
    }
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        ctx.project_root.join(path)
    };
    let run_dir = ctx.state_dir.run_dir();
    let Ok(inside) = full.strip_prefix(&run_dir) else {
        return Err(refuse(&format!("must be under {}", run_dir.display())));
    };
    if inside.as_os_str().is_empty() {
        return Err(refuse("names the run directory itself"));
    }
    // Walk from the state dir down: no component may be a symlink (no escape).
    let mut at = ctx.state_dir.root().to_path_buf();
    for component in Path::new("run").join(inside).components() {
        at.push(component);
        if let Ok(meta) = std::fs::symlink_metadata(&at) {
            if meta.file_type().is_symlink() {
                return Err(refuse("goes through a symlink"));
            }
        }
    }
    Ok(full)
}
