//! `file.read.into-var`: read a file (trailing newlines dropped) into a var. The file must
//! be inside the project root, symbolic links resolved (unless `allowOutside: true`), and
//! its bytes UTF-8: a var is text, and a value spur silently changed is not what was read.

use std::path::{Path, PathBuf};

use super::{coded, project_path, read_failure, ActionContext, ActionResult};
use crate::diagnostic::Code;
use crate::pipeline::{FileReadOptions, FileReadTextOptions};
use crate::run::vars::is_var_name;
use crate::store::bounded_read::{read_bounded, ReadError};

/// Files larger than this are refused: a var is a value, not a document.
const MAX_BYTES: u64 = 1 << 20;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &FileReadOptions) -> ActionResult {
    let (path, var) = match (ctx.required(&options.path), ctx.required(&options.var)) {
        (Ok(p), Ok(v)) => (p, v),
        (Err(e), _) | (_, Err(e)) => return ActionResult::failed(e),
    };
    if !is_var_name(&var) {
        return ActionResult::failed(format!(
            "file.read.into-var: {var:?} is not a valid var name"
        ));
    }
    let allow_outside = match ctx.flag(options.allow_outside.as_ref()) {
        Ok(a) => a,
        Err(e) => return ActionResult::failed(e),
    };
    match read_text(ctx, &path, allow_outside, MAX_BYTES) {
        Ok(text) => {
            let value = text.trim_end_matches(['\n', '\r']).to_owned();
            let mut result = ActionResult::ok();
            result.set_vars.insert(var, value);
            result
        }
        Err(e) => ActionResult::failed(e),
    }
}

/// `file.read`: the reference's file check and read (`maxSize`, refused before reading),
/// with spur's rules for what it reads (inside the project unless `allowOutside`, UTF-8,
/// at most 1 MiB); the text goes into `var` when the step names one.
pub(crate) fn run_text(ctx: &ActionContext<'_>, options: &FileReadTextOptions) -> ActionResult {
    let resolved = (|| {
        let path = ctx.required(&options.path)?;
        let var = ctx.optional(options.var.as_ref())?;
        if let Some(var) = var.as_ref().filter(|v| !is_var_name(v)) {
            return Err(format!("file.read: {var:?} is not a valid var name"));
        }
        let max = ctx
            .optional(options.max_size.as_ref())?
            .map_or(MAX_BYTES, |m| m.min(MAX_BYTES));
        let allow_outside = ctx.flag(options.allow_outside.as_ref())?;
        Ok::<_, String>((path, var, max, allow_outside))
    })();
    let (path, var, max, allow_outside) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    match read_text(ctx, &path, allow_outside, max) {
        Ok(text) => {
            let mut result = ActionResult::ok();
            result.message = Some(format!("{path}: {} bytes", text.len()));
            if let Some(var) = var {
                result.set_vars.insert(var, text);
            }
            result
        }
        Err(e) => ActionResult::failed(e.replacen("file.read.into-var", "file.read", 1)),
    }
}

/// The UTF-8 text of `path` (relative to the project root), at most `max` bytes, inside
/// the project unless `allow_outside`; the error names the kind and the path.
fn read_text(
    ctx: &ActionContext<'_>,
    path: &str,
    allow_outside: bool,
    max: u64,
) -> Result<String, String> {
    let mut target = project_path(ctx, path);
    if !allow_outside {
        target = inside_project(ctx.project_root, &target)
            .map_err(|e| format!("file.read.into-var: {path}: {e}"))?;
    }
    match read_bounded(&target, max) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|e| {
            let offset = e.utf8_error().valid_up_to();
            format!(
                "file.read.into-var: {}",
                coded(
                    Code::RunReadNotUtf8,
                    format!("{path} is not UTF-8: the byte at offset {offset} starts no valid character"),
                    "a var holds text; convert the file to UTF-8 (e.g. `iconv -t UTF-8`) or pass binary data by its path",
                )
            )
        }),
        Err(ReadError::TooLarge { .. }) => Err(format!(
            "file.read.into-var: {path} is larger than {max} bytes"
        )),
        Err(e) => Err(format!(
            "file.read.into-var: cannot read {path}: {}",
            read_failure(e)
        )),
    }
}

/// `target` with every symbolic link resolved, when that is inside the project root. The
/// resolved path is what is read, so a link is followed once, here, where it is checked.
fn inside_project(root: &Path, target: &Path) -> Result<PathBuf, String> {
    let resolved = std::fs::canonicalize(target).map_err(|e| format!("cannot read it: {e}"))?;
    let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(coded(
            Code::RunReadOutsideProject,
            format!(
                "resolves to {}, outside the project root {}",
                resolved.display(),
                root.display()
            ),
            "read files inside the project, or set `allowOutside: true` on this action if reading outside it is intended",
        ))
    }
}
