//! `spur task update WBS --section NAME --from-file FILE`: replace one section of the task
//! file (or add it where the reference's order puts it), by span, atomically, under the
//! task's data lock. Everything else in the file stays as it was.

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;
use spur_engine::store::audit::current_user;
use spur_engine::store::bounded_read::read_bounded;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::ChangeContext;
use spur_engine::task::file_status::reconcile;
use spur_engine::task_file::{canonical_section, locate_task_file, TaskDocument};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_path::EntityRef;
use super::{CliResult, Failure};

/// The largest section body read from `--from-file`.
const SECTION_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// The `--json` document (the reference's write result, with the section named).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SectionJson<'a> {
    #[serde(rename = "ref")]
    entity: EntityRef,
    event_name: &'static str,
    wbs: &'a str,
    file_path: String,
    section: &'a str,
    warnings: Vec<String>,
}

pub fn run(
    state_dir: &StateDir,
    wbs: &Wbs,
    section: &str,
    from_file: &Path,
    json: bool,
) -> CliResult {
    let name = canonical_section(section).ok_or_else(|| {
        Failure::usage(spur_engine::task_file::EditError::UnknownSection {
            name: section.to_owned(),
            known: spur_engine::task_file::CANONICAL_SECTIONS.join(", "),
        })
    })?;
    let bytes = read_bounded(from_file, SECTION_FILE_LIMIT).map_err(|e| {
        Failure::usage(miette::miette!(
            code = spur_engine::diagnostic::Code::TaskFileUnreadable,
            "cannot read the section body {}: {e}",
            from_file.display()
        ))
    })?;
    let body = String::from_utf8(bytes).map_err(|e| {
        Failure::usage(miette::miette!(
            code = spur_engine::diagnostic::Code::TaskFileUnreadable,
            "the section body {} is not UTF-8 (invalid byte at offset {})",
            from_file.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let path =
        locate_task_file(wbs, None, state_dir.project_root(), state_dir).map_err(Failure::usage)?;
    let lock =
        DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let document = TaskDocument::read(&path).map_err(Failure::usage)?;
    if document.status_text().is_some() {
        let user = current_user();
        let context = ChangeContext {
            user: &user,
            run_id: None,
            time: spur_engine::store::timestamp::now(),
        };
        if let Err(e) = reconcile(&lock, state_dir, &document, &context) {
            eprintln!("warning: {e}");
        }
    }
    let write = document
        .replace_section(name, &body)
        .map_err(Failure::usage)?;
    let written = stamp_updated_at(write.document).map_err(Failure::usage)?;
    written
        .write()
        .map_err(|e| Failure::with_code(e, exit::FAILED))?;
    drop(lock);
    let warnings: Vec<String> = write
        .stripped
        .iter()
        .map(|line| {
            format!("took the heading line {line:?} out of the {name} section: it would have started a section of its own (use a list, a table or **bold** for structure inside a section)")
        })
        .collect();
    if json {
        let document = SectionJson {
            entity: EntityRef::task(wbs, &path),
            event_name: "task.updated",
            wbs: wbs.as_str(),
            file_path: path.display().to_string(),
            section: name,
            warnings,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        for warning in &warnings {
            eprintln!("warning: {warning}");
        }
        outln!("Updated section '{name}' in task {wbs}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `document` with `updated_at:` set to now, when its frontmatter has the key.
pub(super) fn stamp_updated_at(
    document: TaskDocument,
) -> Result<TaskDocument, spur_engine::task_file::EditError> {
    if document
        .frontmatter()
        .is_some_and(|f| f.get("updated_at").is_some())
    {
        let now = spur_engine::store::timestamp::now();
        return Ok(document.set_field("updated_at", &now)?.0);
    }
    Ok(document)
}
