//! `spur task update WBS --feature ID` / `--priority P`: set one frontmatter value of the
//! task file (the reference's allowed fields), by span, atomically, under the task's data
//! lock. The status is not one of them: it moves through `spur task update WBS STATUS`.

use std::process::ExitCode;

use serde::Serialize;
use spur_engine::diagnostic::Code;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::task_file::{locate_task_file, TaskDocument};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_path::EntityRef;
use super::task_section::stamp_updated_at;
use super::{CliResult, Failure};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FieldJson<'a> {
    #[serde(rename = "ref")]
    entity: EntityRef,
    event_name: &'static str,
    wbs: &'a str,
    field: &'a str,
    value: &'a str,
}

pub fn run(state_dir: &StateDir, wbs: &Wbs, key: &str, value: &str, json: bool) -> CliResult {
    let valid = match key {
        "priority" => matches!(value, "P0" | "P1" | "P2" | "P3"),
        _ => {
            let mut chars = value.chars();
            chars.next().is_some_and(|c| c.is_ascii_uppercase())
                && chars.all(|c| ('1'..='9').contains(&c))
        }
    };
    if !valid {
        return Err(Failure::usage(miette::miette!(
            code = Code::TaskCreateInvalid,
            help = if key == "priority" {
                "a priority is P0, P1, P2 or P3"
            } else {
                "a feature id is a capital letter and digits 1–9 (F, F4, H83)"
            },
            "{value:?} is not a valid {key}"
        )));
    }
    let path =
        locate_task_file(wbs, None, state_dir.project_root(), state_dir).map_err(Failure::usage)?;
    let lock =
        DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let document = TaskDocument::read(&path).map_err(Failure::usage)?;
    let (document, _) = document.set_field(key, value).map_err(Failure::usage)?;
    stamp_updated_at(document)
        .map_err(Failure::usage)?
        .write()
        .map_err(|e| Failure::with_code(e, exit::FAILED))?;
    drop(lock);
    if json {
        let document = FieldJson {
            entity: EntityRef::task(wbs, &path),
            event_name: "task.updated",
            wbs: wbs.as_str(),
            field: key,
            value,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        outln!("Set {key}={value} on task {wbs}");
    }
    Ok(ExitCode::SUCCESS)
}
