//! Task-file parser: any text parses or is an error, without a panic; a parsed task's
//! criterion ids are unique valid gate-name segments (they name the verify gates
//! `evidence-command:<id>`), and a criterion's command is never blank.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use spur_engine::task_file::parse_task_file;
use spur_engine::wbs::Wbs;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(task) = parse_task_file(Path::new("docs/tasks/0001_fuzz.md"), text) else {
        return;
    };
    let mut ids: Vec<&str> = task.acceptance.iter().map(|a| a.id.as_str()).collect();
    for id in &ids {
        assert!(Wbs::parse(id).is_ok(), "id {id:?} is not a valid segment");
    }
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "criterion ids are unique");
    for (ac, command) in task.commanded() {
        assert!(!command.trim().is_empty(), "blank command for {}", ac.id);
    }
});
