//! Answer parser + lint + derivation: any text parses and lints without a panic against the
//! example task and project, and the derived artifact is valid and self-consistent (its
//! stored verdict is exactly what its rows recompute to). A NUL in the input splits it
//! into a task file (before) and an answer (after), so task files are fuzzed too.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use spur_engine::answer::anchor::AnchorChecker;
use spur_engine::answer::task_file::parse_task_file;
use spur_engine::answer::{derive_artifact, lint, parse_answer};
use spur_engine::verdict::{aggregate, parse_artifact, ArtifactOutcome};
use spur_engine::wbs::Wbs;

const TASK: &str = include_str!("../../examples/answers/task/0804_answer-files.md");
const PROJECT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/answers/project");

fn wbs() -> &'static Wbs {
    static WBS: OnceLock<Wbs> = OnceLock::new();
    WBS.get_or_init(|| Wbs::parse("0804").expect("a valid wbs"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (task_text, answer_text) = text.split_once('\0').unwrap_or((TASK, text));
    let Ok(task) = parse_task_file(Path::new("docs/tasks/0804_fuzz.md"), task_text) else {
        return;
    };
    let answer = parse_answer(answer_text);
    let mut anchors = AnchorChecker::new(Path::new(PROJECT)).expect("the example project exists");
    let report = lint(&answer, &task, &mut anchors);
    let derived = derive_artifact(wbs(), &task, &answer, &report, "answer.md");
    match parse_artifact(derived.artifact.to_json().as_bytes()) {
        ArtifactOutcome::Valid(artifact) => {
            assert_eq!(artifact.verdict, aggregate(&artifact).verdict, "self-consistent");
        }
        other => panic!("a derived artifact must be valid, got {other:?}"),
    }
});
