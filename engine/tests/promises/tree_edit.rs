//! Non-bypass against tree edits after verify: a project with verify gates, a green (or
//! red) `spur verify --wbs T1` at some tree, then a step's random edits — files written,
//! removed, renamed, chmod-ed, symlinks retargeted, a task file's Requirements or its
//! Solution rewritten, and writes meant to hide a change (`.git/index`,
//! `.git/info/exclude`, files under the state dir) — with re-verifies in between and a
//! PASS artifact throughout. Whatever was edited, the gate allows done only when the last
//! verify at the tree as it now is was green, or through an audited force. The oracle is
//! this test's own model of the tree (what each edit did to it) and of which verify ran at
//! which model tree, never spur's fingerprint.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt as _};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use spur_engine::done_gate::{
    evaluate_done_transition, AllowReason, DoneDecision, DoneRequest, ForceReason,
};
use spur_engine::policy::PolicySource;
use spur_engine::store::audit;
use spur_engine::store::data_lock::DataLock;
use spur_engine::verify::{run_gates, VerifyRequest};
use spur_engine::wbs::Wbs;

use crate::property::property;
use crate::run_harness::{one_run_at_a_time, Project};

const FILES: usize = 4;
const TASK: &str = "docs/tasks/T1_edit.md";

/// What the model sees of one path: a file (content, executable) or a link (target).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Node {
    File(String, bool),
    Link(String),
}

/// The tree as the test knows it: the `d/` files and the task file's requirement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
struct Model {
    nodes: BTreeMap<String, Node>,
    requirement: String,
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, String),
    Remove(usize),
    Rename(usize, usize),
    Chmod(usize),
    Link(usize, usize),
    /// Put `d/bad` in place: the `clean` gate fails while it exists.
    Bad(bool),
    Requirement(String),
    /// Changes nothing the model sees.
    Solution(String),
    HideInGit(usize),
    StateDirJunk(String),
    Reverify,
}

fn op() -> impl Strategy<Value = Op> {
    let text = "[a-c]{0,3}";
    prop_oneof![
        3 => (0..FILES, text).prop_map(|(i, t)| Op::Write(i, t)),
        1 => (0..FILES).prop_map(Op::Remove),
        1 => (0..FILES, 0..FILES).prop_map(|(i, j)| Op::Rename(i, j)),
        1 => (0..FILES).prop_map(Op::Chmod),
        1 => (0..FILES, 0..FILES).prop_map(|(i, j)| Op::Link(i, j)),
        1 => any::<bool>().prop_map(Op::Bad),
        1 => text.prop_map(Op::Requirement),
        1 => text.prop_map(Op::Solution),
        1 => (0..FILES).prop_map(Op::HideInGit),
        1 => text.prop_map(Op::StateDirJunk),
        2 => Just(Op::Reverify),
    ]
}

fn file(i: usize) -> String {
    format!("d/f{i}")
}

fn task_text(requirement: &str, solution: &str) -> String {
    format!(
        "---\nstatus: todo\n---\n# T1\n\n## Requirements\n\n- R1. {requirement}\n\n## Solution\n\n{solution}\n"
    )
}

/// Apply `op` to the project and the model.
fn apply(root: &Path, model: &mut Model, solution: &mut String, op: &Op) {
    let path = |rel: &str| root.join(rel);
    let clear = |rel: &str| {
        if fs::symlink_metadata(path(rel)).is_ok() {
            fs::remove_file(path(rel)).unwrap();
        }
    };
    match op {
        Op::Write(i, text) => {
            let rel = file(*i);
            let exec = matches!(model.nodes.get(&rel), Some(Node::File(_, true)));
            clear(&rel);
            fs::write(path(&rel), text).unwrap();
            if exec {
                fs::set_permissions(path(&rel), fs::Permissions::from_mode(0o755)).unwrap();
            }
            model.nodes.insert(rel, Node::File(text.clone(), exec));
        }
        Op::Remove(i) => {
            let rel = file(*i);
            clear(&rel);
            model.nodes.remove(&rel);
        }
        Op::Rename(i, j) => {
            let (from, to) = (file(*i), file(*j));
            if from == to || !model.nodes.contains_key(&from) {
                return;
            }
            fs::rename(path(&from), path(&to)).unwrap();
            let node = model.nodes.remove(&from).unwrap();
            model.nodes.insert(to, node);
        }
        Op::Chmod(i) => {
            let rel = file(*i);
            if let Some(Node::File(_, exec)) = model.nodes.get_mut(&rel) {
                *exec = !*exec;
                let mode = if *exec { 0o755 } else { 0o644 };
                fs::set_permissions(path(&rel), fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Op::Link(i, j) => {
            let rel = file(*i);
            let target = format!("f{j}");
            clear(&rel);
            symlink(&target, path(&rel)).unwrap();
            model.nodes.insert(rel, Node::Link(target));
        }
        Op::Bad(present) => {
            clear("d/bad");
            model.nodes.remove("d/bad");
            if *present {
                fs::write(path("d/bad"), "").unwrap();
                model
                    .nodes
                    .insert("d/bad".into(), Node::File(String::new(), false));
            }
        }
        Op::Requirement(text) => {
            model.requirement = format!("do {text}");
            fs::write(path(TASK), task_text(&model.requirement, solution)).unwrap();
        }
        Op::Solution(text) => {
            *solution = format!("did {text}");
            fs::write(path(TASK), task_text(&model.requirement, solution)).unwrap();
        }
        Op::HideInGit(i) => {
            fs::create_dir_all(path(".git/info")).unwrap();
            fs::write(path(".git/info/exclude"), format!("{}\n", file(*i))).unwrap();
            fs::write(path(".git/index"), format!("DIRC {i}")).unwrap();
        }
        Op::StateDirJunk(text) => {
            fs::create_dir_all(path(".spur/run")).unwrap();
            fs::write(path(".spur/run/junk.txt"), text).unwrap();
        }
        Op::Reverify => {}
    }
}

/// `verify --wbs T1`; whether it was green.
fn verify(project: &Project) -> bool {
    let mut request = VerifyRequest::new(project.state_dir());
    request.wbs = Some(Wbs::parse("T1").unwrap());
    run_gates(&request).unwrap().passed
}

#[test]
fn tree_edits_after_verify_never_end_done_without_a_green_verify_at_the_tree_or_a_force() {
    let cases = (
        proptest::collection::vec(op(), 0..10),
        any::<bool>(),
        // One case in five forced.
        prop_oneof![4 => Just(false), 1 => Just(true)],
    );
    let [passed, forced, denied] = [(); 3].map(|()| AtomicU32::new(0));
    property(
        "tree edits after verify",
        48,
        cases,
        |(ops, verify_last, force)| {
            let _one = one_run_at_a_time();
            let project = Project::new();
            let root = project.root();
            fs::create_dir_all(root.join(".spur/run")).unwrap();
            fs::create_dir_all(root.join("d")).unwrap();
            fs::create_dir_all(root.join("docs/tasks")).unwrap();
            fs::write(
                root.join(".spur/config.yaml"),
                "verify:\n  gates:\n    clean: { command: \"test ! -e d/bad\" }\ndoneGate:\n  externalVerdicts: allow\n",
            )
            .unwrap();
            fs::write(
                root.join(".spur/run/T1-verdict.json"),
                r#"{"wbs":"T1","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"d/f0:1"}]}"#,
            )
            .unwrap();
            let mut model = Model {
                requirement: "do a".into(),
                ..Model::default()
            };
            let mut solution = "TBD".to_owned();
            fs::write(root.join(TASK), task_text(&model.requirement, &solution)).unwrap();
            apply(root, &mut model, &mut solution, &Op::Write(0, "a".into()));
            // The oracle: the result of the last verify at each model tree.
            let mut verified: BTreeMap<Model, bool> = BTreeMap::new();
            verified.insert(model.clone(), verify(&project));
            for op in &ops {
                apply(root, &mut model, &mut solution, op);
                if matches!(op, Op::Reverify) {
                    verified.insert(model.clone(), verify(&project));
                }
            }
            if verify_last {
                verified.insert(model.clone(), verify(&project));
            }
            let wbs = Wbs::parse("T1").unwrap();
            let state = project.state_dir();
            let lock = DataLock::acquire(&state, &wbs).unwrap();
            let reason = ForceReason::new("accepted after review").unwrap();
            let decision = evaluate_done_transition(&DoneRequest {
                lock: &lock,
                force: force.then_some(&reason),
                state_dir: &state,
                run_id: None,
                user: "ada",
                policy: &PolicySource::Project,
            });
            let green_here = verified.get(&model).copied().unwrap_or(false);
            let audited = audit::list(&state.audit_path())
                .map(|l| l.len())
                .unwrap_or(0);
            match decision {
                DoneDecision::Allow {
                    reason: AllowReason::Forced,
                    ..
                } => {
                    prop_assert!(force);
                    prop_assert_eq!(audited, 1);
                    forced.fetch_add(1, Ordering::Relaxed);
                }
                // The artifact is the test's own, accepted by `externalVerdicts: allow`.
                DoneDecision::Allow {
                    reason: AllowReason::Pass | AllowReason::External,
                    ..
                } => {
                    prop_assert!(!force);
                    prop_assert!(
                        green_here,
                        "allowed without a green verify at this tree: {:?}",
                        model
                    );
                    passed.fetch_add(1, Ordering::Relaxed);
                }
                DoneDecision::Deny { message, .. } => {
                    prop_assert!(!force, "a force was denied: {}", message);
                    prop_assert!(
                        !green_here,
                        "denied at a green tree: {} {:?}",
                        message,
                        model
                    );
                    denied.fetch_add(1, Ordering::Relaxed);
                }
                DoneDecision::Noop { .. } => prop_assert!(false, "noop"),
            }
            Ok(())
        },
    );
    let [passed, forced, denied] = [passed, forced, denied].map(AtomicU32::into_inner);
    println!("tree edits after verify: {passed} done by PASS, {forced} forced, {denied} denied");
    assert!(
        passed > 0 && forced > 0 && denied > 0,
        "the search must reach every outcome"
    );
}
