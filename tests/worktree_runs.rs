//! `spur run --worktree`: a run works in a git worktree of its own (`.spur/worktrees/<id>`,
//! branch `spur/<id>`), so two runs of two tasks in one checkout neither see nor
//! invalidate the evidence of each other's changes; the ledger, journals and audit stay
//! the project's.

use serde_json::Value;

use crate::common::{git_out, Spur};

const ANSWER: &str = "Verdict: PASS

## Requirements

| Req | Status | Evidence |
|-----|--------|----------|
| R1 | MET | `hello.txt:1` |

## Acceptance Criteria

| AC | Status | Evidence Type | Evidence |
|----|--------|---------------|----------|
| AC-1 | MET | command | `./check` passes against `hello.txt:1` |
";

fn task(wbs: &str) -> String {
    format!(
        "# {wbs} Say hello\n\n## Requirements\n\n- R1: hello.txt holds the greeting `hello, world`.\n\n\
         ## Acceptance Criteria\n\n- [ ] AC-1: `./check` passes\n"
    )
}

/// The task's work, its verify and its verdict, then a pause (`review`) before `done`:
/// while one run waits there, another can run.
const PIPELINE: &str = r#"name: wt
initialState: work
terminalStates: [done, failed]
failureStates: [failed]
vars:
  wbs: "0592"
states:
  - id: work
    onEnter:
      - kind: shell
        options:
          command: |
            echo "work of ${vars.wbs}" > "wip-${vars.wbs}.txt"
            "$SPUR_BIN" verify --wbs ${vars.wbs} >&2 || exit 1
            "$SPUR_BIN" task verdict ${vars.wbs} --from-answer answer.md >&2
  - id: review
    pause: true
  - id: done
  - id: failed
transitions:
  - from: work
    to: review
  - from: review
    to: done
"#;

/// The README's demo project (gate `quality` = `./check` on hello.txt) with tasks 0592
/// and 0593, all committed in a git repository.
fn project() -> Spur {
    let project = Spur::new().fixture("examples/demo", ".");
    project.file("docs/tasks/0592_hello.md", task("0592"));
    project.file("docs/tasks/0593_hello.md", task("0593"));
    project.file("hello.txt", "hello, world\n");
    project.file("answer.md", ANSWER);
    project.file("pipeline.yaml", PIPELINE);
    project.file(
        ".gitignore",
        ".spur/run/\n.spur/tasks/\n.spur/locks/\n.spur/bin/\n",
    );
    project.git(&["init", "-q", "-b", "main"]);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "demo"]);
    project
}

fn start(project: &Spur, wbs: &str) -> Value {
    project
        .args(["run", "pipeline.yaml", "--worktree", "--var"])
        .arg(format!("wbs={wbs}"))
        .json()
        .run()
        .code(3)
        .stdout_json()
}

fn worktree_of(project: &Spur, run_id: &str) -> std::path::PathBuf {
    project.path().join(".spur/worktrees").join(run_id)
}

#[test]
fn two_tasks_in_two_worktrees_keep_their_own_evidence_and_certify_in_the_project() {
    let project = project();
    // Task 0592 works, verifies and waits at review, its change uncommitted.
    let a = start(&project, "0592");
    let a_id = a["runId"].as_str().unwrap().to_owned();
    let a_tree = worktree_of(&project, &a_id);
    assert_eq!(a["worktree"]["branch"], format!("spur/{a_id}"), "{a}");
    assert_eq!(
        std::fs::read_to_string(a_tree.join("wip-0592.txt")).unwrap(),
        "work of 0592\n"
    );
    // Task 0593 runs beside it, to done, in its own worktree: it sees nothing of 0592's.
    let b = start(&project, "0593");
    let b_id = b["runId"].as_str().unwrap().to_owned();
    let b_tree = worktree_of(&project, &b_id);
    assert!(
        !b_tree.join("wip-0592.txt").exists(),
        "0593 sees 0592's change"
    );
    let b_done = project.args(["continue", &b_id, "--json"]).run().success();
    assert!(
        b_done.stderr().contains("worktree kept"),
        "{}",
        b_done.stderr()
    );
    let b_done = b_done.stdout_json();
    assert_eq!(b_done["outcome"], "done", "{b_done}");
    assert_eq!(b_done["doneGate"]["decision"], "allow", "{b_done}");
    assert_eq!(
        b_done["worktree"]["branch"],
        format!("spur/{b_id}"),
        "{b_done}"
    );
    // 0592's evidence is of its own tree: 0593's change did not invalidate it.
    let a_done = project
        .args(["continue", &a_id, "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(a_done["doneGate"]["decision"], "allow", "{a_done}");
    assert!(!a_tree.join("wip-0593.txt").exists());
    // The main checkout is untouched, `git status` clean; each run is on its own branch.
    assert!(!project.path().join("wip-0592.txt").exists());
    assert!(!project.path().join("wip-0593.txt").exists());
    assert_eq!(git_out(project.path(), &["status", "--porcelain"]), "");
    let branches = git_out(project.path(), &["branch", "--list", "spur/*"]);
    assert!(branches.contains(&format!("spur/{a_id}")), "{branches}");
    assert!(branches.contains(&format!("spur/{b_id}")), "{branches}");
    // The ledgers are in the project's protected state, not in a worktree.
    for wbs in ["0592", "0593"] {
        assert!(project
            .protected()
            .join(format!("ledger/tasks/{wbs}.jsonl"))
            .is_file());
        let show = project
            .args(["task", "show", wbs])
            .json()
            .run()
            .success()
            .stdout_json();
        assert_eq!(show["status"], "done", "{show}");
    }
    assert!(!a_tree.join(".spur/ledger").exists());
    // The journal records the worktree and the branch; `spur runs` and `spur trace` show them.
    let runs = project.runs();
    let listed = runs.iter().find(|r| r["runId"] == a_id.as_str()).unwrap();
    assert_eq!(listed["worktree"]["branch"], format!("spur/{a_id}"));
    let human = project.args(["runs"]).run().success();
    assert!(
        human.stdout().contains(&format!("(branch spur/{b_id})")),
        "{}",
        human.stdout()
    );
    let trace = project.args(["trace", &a_id]).run().success();
    assert!(
        trace.stdout().contains(&format!("branch=spur/{a_id}")),
        "{}",
        trace.stdout()
    );
}

#[test]
fn without_worktrees_the_second_task_invalidates_the_first_ones_evidence() {
    // The same two runs in the main checkout: what --worktree is for.
    let project = project();
    let a = project
        .args(["run", "pipeline.yaml", "--var", "wbs=0592"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    project
        .args(["run", "pipeline.yaml", "--var", "wbs=0593"])
        .json()
        .run()
        .code(3);
    let out = project
        .args(["continue", a["runId"].as_str().unwrap(), "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("the tree changed since verify run"),
        "{message}"
    );
}

#[test]
fn the_config_default_and_its_errors() {
    let project = project();
    project.file(
        ".spur/config.yaml",
        format!(
            "{}\nrun:\n  worktree: true\n",
            std::fs::read_to_string(crate::common::repo_path("examples/demo/.spur/config.yaml"))
                .unwrap()
        ),
    );
    let out = project
        .args(["run", "pipeline.yaml"])
        .json()
        .run()
        .code(3)
        .stdout_json();
    let id = out["runId"].as_str().unwrap();
    assert!(worktree_of(&project, id).join("wip-0592.txt").is_file());
    assert!(!project.path().join("wip-0592.txt").exists());
    project.file(".spur/config.yaml", "run:\n  worktree: yes please\n");
    let bad = project.args(["run", "pipeline.yaml"]).run().code(2);
    assert!(
        bad.stderr().contains("spur::run::worktree-config"),
        "{}",
        bad.stderr()
    );
}

#[test]
fn not_a_repository_and_a_repository_without_a_commit_are_refused_leaving_nothing() {
    let bare = Spur::new().fixture("examples/demo", ".");
    bare.file("pipeline.yaml", PIPELINE);
    let out = bare
        .args(["run", "pipeline.yaml", "--worktree"])
        .run()
        .code(4);
    assert!(
        out.stderr().contains("spur::run::worktree"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("git repository"), "{}", out.stderr());
    assert!(!bare.path().join(".spur/worktrees").join("x").exists());
    assert!(
        !bare.protected().join("runs").exists()
            || std::fs::read_dir(bare.protected().join("runs"))
                .unwrap()
                .count()
                == 0
    );

    // A repository with no commit: git refuses (no HEAD); no directory, branch or entry stays.
    let empty = Spur::new().fixture("examples/demo", ".");
    empty.file("pipeline.yaml", PIPELINE);
    empty.git(&["init", "-q", "-b", "main"]);
    let out = empty
        .args(["run", "pipeline.yaml", "--worktree"])
        .run()
        .code(4);
    assert!(
        out.stderr().contains("spur::run::worktree"),
        "{}",
        out.stderr()
    );
    let left: Vec<_> = std::fs::read_dir(empty.path().join(".spur/worktrees"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.iter().all(|n| n == ".gitignore"), "{left:?}");
    assert_eq!(
        git_out(empty.path(), &["worktree", "list"]).lines().count(),
        1
    );
}

#[test]
fn a_completed_run_cleans_its_worktree_up_only_when_clean() {
    let project = project();
    let clean = "name: c\ninitialState: a\nterminalStates: [end]\nstates: [{id: a}, {id: end}]\ntransitions: [{from: a, to: end}]\n";
    let dirty = "name: d\ninitialState: a\nterminalStates: [end]\nstates:\n  - id: a\n    onEnter:\n      - kind: shell\n        options: { command: \"echo x > new.txt\" }\n  - id: end\ntransitions: [{from: a, to: end}]\n";
    project.file("clean.yaml", clean);
    project.file("dirty.yaml", dirty);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "pipelines"]);
    let out = project
        .args([
            "run",
            "clean.yaml",
            "--worktree",
            "--worktree-cleanup",
            "--json",
        ])
        .run()
        .success();
    let id = out.stdout_json()["runId"].as_str().unwrap().to_owned();
    assert!(
        out.stderr().contains("worktree removed"),
        "{}",
        out.stderr()
    );
    assert!(!worktree_of(&project, &id).exists());
    // The branch is never removed.
    assert!(git_out(project.path(), &["branch", "--list", &format!("spur/{id}")]).contains(&id));
    let out = project
        .args([
            "run",
            "dirty.yaml",
            "--worktree",
            "--worktree-cleanup",
            "--json",
        ])
        .run()
        .success();
    let id = out.stdout_json()["runId"].as_str().unwrap().to_owned();
    assert!(
        out.stderr().contains("uncommitted changes"),
        "{}",
        out.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(worktree_of(&project, &id).join("new.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn a_run_killed_mid_way_continues_in_the_same_worktree() {
    let project = project();
    let steps = "name: k\ninitialState: a\nterminalStates: [end]\nstates:\n  - id: a\n    onEnter:\n      - kind: shell\n        options: { command: \"pwd -P > where.txt\" }\n  - id: end\ntransitions: [{from: a, to: end}]\n";
    project.file("k.yaml", steps);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "k"]);
    // Killed (SIGKILL) right after the state is entered, before its action runs.
    project
        .args(["run", "k.yaml", "--worktree"])
        .env("SPUR_TEST_KILL_AFTER_JOURNAL_SEQ", "2")
        .run()
        .killed();
    let id = project.only_run_id();
    let tree = worktree_of(&project, &id);
    assert!(tree.is_dir());
    assert!(!tree.join("where.txt").exists());
    let out = project.args(["continue", &id, "--json"]).run().success();
    assert_eq!(out.stdout_json()["outcome"], "completed");
    assert!(
        out.stderr().contains(&format!("branch spur/{id}")),
        "{}",
        out.stderr()
    );
    // The step ran in the run's worktree, not in the main checkout.
    let where_ = std::fs::read_to_string(tree.join("where.txt")).unwrap();
    assert_eq!(
        std::path::Path::new(where_.trim()),
        std::fs::canonicalize(&tree).unwrap()
    );
    assert!(!project.path().join("where.txt").exists());
}

#[test]
fn a_forged_worktree_path_in_run_started_is_refused() {
    let project = project();
    let a = start(&project, "0592");
    let id = a["runId"].as_str().unwrap().to_owned();
    // The journal (protected state, keyed chain) is edited to send the run's tree to the
    // main checkout.
    let journal = project
        .protected()
        .join("runs")
        .join(&id)
        .join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let worktree = std::fs::canonicalize(worktree_of(&project, &id)).unwrap();
    let main = std::fs::canonicalize(project.path()).unwrap();
    let forged = text.replace(&worktree.display().to_string(), &main.display().to_string());
    assert_ne!(forged, text, "the journal records the worktree's path");
    std::fs::write(&journal, forged).unwrap();
    // The journal's checks refuse it (its seal is not the key's MAC of the edited text);
    // a forger with the key meets `git_worktree::reopen`, which takes only a folder of
    // `.spur/worktrees/` (its unit test).
    let out = project.args(["continue", &id]).run().code(4);
    assert!(
        out.stderr().contains("spur::journal::chain-broken"),
        "{}",
        out.stderr()
    );
    // Nothing was certified, and the run did nothing in the main checkout.
    let show = project
        .args(["task", "show", "0592"])
        .json()
        .run()
        .success()
        .stdout_json();
    assert_ne!(show["status"], "done", "{show}");
    assert!(!project.path().join("wip-0592.txt").exists());
}

#[test]
fn a_step_writing_another_runs_worktree_gets_that_run_denied_not_certified() {
    // The sandbox guards the protected state, not one tree from another: a step can write
    // a folder beside its worktree. What holds is the evidence: the other run's done gate
    // sees its tree changed since its verify and denies.
    let project = project();
    project.file(
        "evil.yaml",
        "name: evil\ninitialState: a\nterminalStates: [end]\nvars:\n  victim: \"\"\nstates:\n  - id: a\n    onEnter:\n      - kind: shell\n        options: { command: \"echo planted > ../${vars.victim}/planted.txt\" }\n  - id: end\ntransitions: [{from: a, to: end}]\n",
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "evil"]);
    let a = start(&project, "0592");
    let a_id = a["runId"].as_str().unwrap().to_owned();
    project
        .args(["run", "evil.yaml", "--worktree", "--var"])
        .arg(format!("victim={a_id}"))
        .run()
        .success();
    assert!(worktree_of(&project, &a_id).join("planted.txt").is_file());
    let out = project
        .args(["continue", &a_id, "--json"])
        .run()
        .code(1)
        .stdout_json();
    assert_eq!(out["doneGate"]["decision"], "deny", "{out}");
    let message = out["doneGate"]["message"].as_str().unwrap();
    assert!(
        message.contains("the tree changed since verify run"),
        "{message}"
    );
}

#[test]
fn retry_goes_on_in_the_runs_worktree() {
    let project = project();
    project.file(
        "needs.yaml",
        "name: needs\ninitialState: a\nterminalStates: [end]\nstates:\n  - id: a\n    onEnter:\n      - kind: shell\n        options: { command: \"test -f fixed.txt\" }\n  - id: end\ntransitions: [{from: a, to: end}]\n",
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "needs"]);
    let failed = project
        .args(["run", "needs.yaml", "--worktree", "--json"])
        .run()
        .code(1)
        .stdout_json();
    let id = failed["runId"].as_str().unwrap().to_owned();
    // Fixed in the run's worktree (where its agent works); the main checkout has no fix,
    // so a retry there would fail again.
    std::fs::write(worktree_of(&project, &id).join("fixed.txt"), "").unwrap();
    let out = project
        .args(["retry", &id, "--json"])
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "completed", "{out}");
    assert!(!project.path().join("fixed.txt").exists());
}

#[test]
fn a_hook_or_filter_an_earlier_step_left_in_git_gets_no_more_than_a_step_when_the_worktree_is_made()
{
    let project = Spur::new()
        .file(
            "p.yaml",
            "name: p\ninitialState: a\nterminalStates: [b]\nstates: [{id: a}, {id: b}]\ntransitions: [{from: a, to: b}]\n",
        )
        .file(".gitignore", ".spur/\n")
        // What a step of an earlier run can leave (steps may write `.git`): a smudge filter
        // for every file, its attributes committed, and a post-checkout hook.
        .file(".gitattributes", "* filter=evil\n");
    project.git(&["init", "-q", "-b", "main"]);
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "p"]);
    project.git(&[
        "config",
        "filter.evil.smudge",
        r#"touch "$PROTECTED/forged"; touch "$MARK"; cat"#,
    ]);
    project.file(
        ".git/hooks/post-checkout",
        "#!/bin/sh\ntouch \"$MARK\".hook \"$PROTECTED/hooked\"\n",
    );
    let hook = project.join(".git/hooks/post-checkout");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("filtered");
    let protected = project.protected();
    // An earlier run made the project's protected state: there is something to forge.
    project.args(["run", "p.yaml"]).run().success();
    assert!(protected.is_dir());
    project
        .args(["run", "p.yaml", "--worktree"])
        .env("PROTECTED", &protected)
        .env("MARK", &mark)
        .run()
        .success();
    // git checked the worktree out through the filter, in the sandbox: it could not
    // write the protected state. The hook did not run at all.
    assert!(mark.exists(), "the filter ran when the worktree was made");
    assert!(!marks.path().join("filtered.hook").exists(), "a hook ran");
    assert!(protected.is_dir());
    assert!(
        !protected.join("forged").exists(),
        "the filter wrote the protected state"
    );
    assert!(!protected.join("hooked").exists());
}
