//! Lint + derive an answer with 1,000 rows and 1,000 anchors into real files.
//!
//! The project: 100 source files of 200 lines in a temp dir; a task with 800 requirements
//! and 200 acceptance criteria; an answer with one row each, every row citing a line range
//! in one of the files. `lint_and_derive` is the in-process work (parse, resolve, check
//! every anchor against the tree with a fresh file cache, aggregate); `derive_verdict`
//! adds reading both files and the atomic, fsync'd write of the artifact.

// criterion_group!/criterion_main! define undocumented `pub fn`s.
#![allow(missing_docs)]

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use spur_engine::answer::anchor::AnchorChecker;
use spur_engine::answer::task_file::parse_task_file;
use spur_engine::answer::{derive_artifact, derive_verdict, lint, parse_answer, DeriveRequest};
use spur_engine::store::state_dir::StateDir;
use spur_engine::verdict::Verdict;
use spur_engine::wbs::Wbs;

const FILES: usize = 100;
const LINES: usize = 200;
const REQUIREMENTS: usize = 800;
const CRITERIA: usize = 200;

fn build_project(root: &Path) -> (String, String) {
    fs::create_dir_all(root.join("src/mod")).unwrap();
    for f in 0..FILES {
        let mut text = String::new();
        for l in 0..LINES {
            writeln!(text, "pub fn item_{f}_{l}() -> usize {{ {l} }}").unwrap();
        }
        fs::write(root.join(format!("src/mod/file_{f}.rs")), text).unwrap();
    }
    let mut task = String::from("# 0900 Big task\n\n## Requirements\n\n");
    for r in 1..=REQUIREMENTS {
        writeln!(task, "- R{r}: requirement number {r}").unwrap();
    }
    task.push_str("\n## Acceptance Criteria\n\n");
    for a in 1..=CRITERIA {
        writeln!(task, "- [ ] AC-{a}: behaviour number {a} holds").unwrap();
    }
    let anchor = |i: usize| {
        let start = 1 + i % (LINES - 10);
        format!("src/mod/file_{}.rs:{start}-{}", i % FILES, start + 5)
    };
    let mut answer = String::from(
        "Verdict: PASS\n\n## Requirements\n\n| Req | Status | Evidence |\n|-----|--------|----------|\n",
    );
    for r in 1..=REQUIREMENTS {
        writeln!(answer, "| R{r} | MET | `{}` |", anchor(r)).unwrap();
    }
    answer.push_str(
        "\n### Acceptance Criteria Verification\n\n| AC | Status | Evidence Type | Evidence |\n|----|--------|---------------|----------|\n",
    );
    for a in 1..=CRITERIA {
        writeln!(
            answer,
            "| AC-{a} | MET | test | `{}` |",
            anchor(REQUIREMENTS + a)
        )
        .unwrap();
    }
    (task, answer)
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (task_text, answer_text) = build_project(root);
    fs::create_dir_all(root.join("docs/tasks")).unwrap();
    fs::write(root.join("docs/tasks/0900_big.md"), &task_text).unwrap();
    fs::write(root.join("answer.md"), &answer_text).unwrap();
    let task = parse_task_file(Path::new("docs/tasks/0900_big.md"), &task_text).unwrap();
    let wbs = Wbs::parse("0900").unwrap();

    // Sanity: the benchmark measures a clean derivation, not an early exit.
    {
        let answer = parse_answer(&answer_text);
        let mut anchors = AnchorChecker::new(root).unwrap();
        let report = lint(&answer, &task, &mut anchors);
        assert!(!report.has_errors(), "{:?}", report.diagnostics.first());
        let derived = derive_artifact(&wbs, &task, &answer, &report, "answer.md");
        assert_eq!(derived.artifact.verdict, Verdict::Pass);
        assert_eq!(
            derived.artifact.requirements.len() + derived.artifact.acceptance_criteria.len(),
            REQUIREMENTS + CRITERIA
        );
    }

    c.bench_function("answer/lint_and_derive_1000_rows_1000_anchors", |b| {
        b.iter(|| {
            let answer = parse_answer(&answer_text);
            let mut anchors = AnchorChecker::new(root).unwrap();
            let report = lint(&answer, &task, &mut anchors);
            derive_artifact(&wbs, &task, &answer, &report, "answer.md")
        })
    });

    let request = DeriveRequest {
        wbs: wbs.clone(),
        answer: root.join("answer.md"),
        task: None,
        // The key of its chains beside the project, never in the home of who benches.
        state_dir: StateDir::at(root.join(".spur"))
            .with_key_file(spur_engine::store::chain_key::KeyFile::at(root.join("key")))
            .with_protected_dir(root.join(".spur/protected")),
        project_root: root.to_path_buf(),
        write: true,
        writer: spur_engine::store::task_ledger::VerdictWriter::TaskVerdict,
        run_id: None,
    };
    c.bench_function("answer/derive_verdict_1000_rows_with_atomic_write", |b| {
        b.iter(|| derive_verdict(&request).unwrap())
    });
}

criterion_group!(benches, bench);
// criterion_main! defines an undocumented `pub fn main`
criterion_main!(benches);
