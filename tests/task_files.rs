//! Task files as spur writes them and as it believes them, on real task files of the
//! reference (`tests/fixtures/reference-tasks/`):
//!
//! - every write (a status, a frontmatter value, a section, record's sections and ticks)
//!   leaves every other byte of the file as it was;
//! - the frontmatter `status:` is a view: a hand edit to a status other than done wins and
//!   is recorded at spur's next touch; a hand edit — or a pipeline step's edit — to done
//!   is never believed and certifies nothing.

use std::ops::Range;

use crate::common::Spur;
use crate::task_verbs::{reference_project, T0055, T0089, T0093, T0096};

const FIXTURES: [(&str, &str); 4] = [
    ("0055", T0055),
    ("0089", T0089),
    ("0093", T0093),
    ("0096", T0096),
];

fn task(project: &Spur, args: &[&str]) -> crate::common::Output {
    project.args(["task"]).args(args).env("USER", "ada").run()
}

/// The byte range of the value of the frontmatter line `key: value` in `text`.
fn value_range(text: &str, key: &str) -> Range<usize> {
    let start = text.find(&format!("\n{key}: ")).unwrap() + key.len() + 3;
    let end = start + text[start..].find('\n').unwrap();
    start..end
}

/// Where the body of `### name` is in `text`: after its heading line, up to the next
/// `### ` or `## ` heading (outside code fences), or the end. `None` when it has none.
fn body_range(text: &str, name: &str) -> Option<Range<usize>> {
    let heading = format!("### {name}\n");
    let start = text
        .match_indices(&heading)
        .find(|(i, _)| *i == 0 || text.as_bytes()[i - 1] == b'\n')?
        .0
        + heading.len();
    let mut offset = start;
    let mut fence = false;
    for line in text[start..].split_inclusive('\n') {
        if line.starts_with("```") {
            fence = !fence;
        } else if !fence && (line.starts_with("### ") || line.starts_with("## ")) {
            return Some(start..offset);
        }
        offset += line.len();
    }
    Some(start..text.len())
}

/// `new` is `original` with at most the bytes in `regions` replaced (or text inserted
/// there): every other byte of `original` is in `new`, in order, and nothing else was
/// added outside the regions.
fn assert_only_regions_changed(
    original: &str,
    new: &str,
    mut regions: Vec<Range<usize>>,
    what: &str,
) {
    regions.sort_by_key(|r| r.start);
    let mut kept = Vec::new();
    let mut at = 0;
    for region in &regions {
        kept.push(&original[at..region.start]);
        at = region.end;
    }
    kept.push(&original[at..]);
    let (first, rest) = kept.split_first().unwrap();
    let (last, middle) = rest.split_last().unwrap_or((first, &[]));
    assert!(
        new.starts_with(first),
        "{what}: the text before the first change differs"
    );
    assert!(
        new.ends_with(last),
        "{what}: the text after the last change differs"
    );
    let mut pos = first.len();
    for piece in middle {
        let found = new[pos..]
            .find(piece)
            .unwrap_or_else(|| panic!("{what}: {piece:?} is not in the new file"));
        pos += found + piece.len();
    }
    assert!(
        pos <= new.len() - last.len(),
        "{what}: the kept parts overlap"
    );
}

/// The place a missing section is inserted: before the first section the reference
/// orders after it that the file has.
fn insertion_point(text: &str, after: &[&str]) -> usize {
    after
        .iter()
        .filter_map(|n| text.find(&format!("\n### {n}\n")).map(|i| i + 1))
        .min()
        .unwrap_or(text.len())
}

#[test]
fn every_write_leaves_the_rest_of_a_reference_task_file_byte_identical() {
    for (wbs, name) in FIXTURES {
        let project = reference_project(&[name]);
        let path = format!("docs/tasks/{name}");
        let original = project.read(&path);

        // A status: the `status:` and `updated_at:` values, nothing else.
        task(&project, &["update", wbs, "wip"]).success();
        let new = project.read(&path);
        assert!(new.contains("\nstatus: wip\n"), "{wbs}");
        assert_only_regions_changed(
            &original,
            &new,
            vec![
                value_range(&original, "status"),
                value_range(&original, "updated_at"),
            ],
            &format!("{wbs} status"),
        );

        // A frontmatter value (`--priority`): that value, nothing else.
        let before = new;
        task(&project, &["update", wbs, "--priority", "P3"]).success();
        let new = project.read(&path);
        assert!(new.contains("\npriority: P3\n"), "{wbs}");
        assert_only_regions_changed(
            &before,
            &new,
            vec![
                value_range(&before, "priority"),
                value_range(&before, "updated_at"),
            ],
            &format!("{wbs} priority"),
        );

        // A section: its body (or, when the file has none, the place it is inserted).
        let before = new;
        project.file("solution.md", "| `src/board.tsx:2` | the change |\n");
        task(
            &project,
            &[
                "update",
                wbs,
                "--section",
                "Solution",
                "--from-file",
                "solution.md",
            ],
        )
        .success();
        let new = project.read(&path);
        let solution = body_range(&before, "Solution").unwrap_or_else(|| {
            let at = insertion_point(
                &before,
                &[
                    "Root Cause",
                    "Testing",
                    "Review",
                    "Artifacts",
                    "References",
                    "Notes",
                    "History",
                ],
            );
            at..at
        });
        assert_only_regions_changed(
            &before,
            &new,
            vec![solution, value_range(&before, "updated_at")],
            &format!("{wbs} section"),
        );
        assert!(new.contains("| `src/board.tsx:2` | the change |"), "{wbs}");

        // Record: Testing, Review (where no one wrote one), the proven boxes.
        let before = new;
        project.file(
            "verdict.json",
            format!(
                r#"{{"wbs":"{wbs}","verdict":"PASS","requirements":[{}],"acceptanceCriteria":[],"checks":[]}}"#,
                (1..=5)
                    .map(|n| format!(r#"{{"id":"R{n}","status":"MET","evidence":"`src/board.tsx:2`"}}"#))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        );
        task(&project, &["record", wbs, "--verdict-file", "verdict.json"]).success();
        let new = project.read(&path);
        let mut regions = vec![value_range(&before, "updated_at")];
        for section in ["Testing", "Review"] {
            let later: &[&str] = if section == "Testing" {
                &["Review", "Artifacts", "References", "Notes", "History"]
            } else {
                &["Artifacts", "References", "Notes", "History"]
            };
            regions.push(body_range(&before, section).unwrap_or_else(|| {
                let at = insertion_point(&before, later);
                at..at
            }));
        }
        let requirements = body_range(&before, "Requirements").unwrap();
        for (i, _) in before[requirements.clone()].match_indices("- [ ] R") {
            let at = requirements.start + i + 2;
            regions.push(at..at + 3);
        }
        // 0055's and 0089's Review is someone's: record leaves it alone.
        let review_kept =
            body_range(&before, "Review").is_some_and(|r| !before[r].trim().is_empty());
        assert_only_regions_changed(&before, &new, regions, &format!("{wbs} record"));
        if review_kept {
            let r = body_range(&before, "Review").unwrap();
            assert!(
                new.contains(&before[r]),
                "{wbs}: the authored Review is kept"
            );
        }
        assert!(
            !new.contains("- [ ] R"),
            "{wbs}: every proven box is ticked"
        );
    }
}

#[test]
fn a_hand_edit_to_another_status_wins_at_the_next_touch() {
    let project = reference_project(&[T0096]);
    let path = format!("docs/tasks/{T0096}");
    project.file(
        &path,
        project
            .read(&path)
            .replace("status: todo", "status: In Progress"),
    );
    // Listing reads the claim; it records nothing.
    let list = task(&project, &["list", "--json"]).success().stdout_json();
    assert_eq!(list[0]["status"], "wip");
    assert!(!project.exists(".spur/ledger/tasks/0096.jsonl"));
    // Show touches the task: the claim is recorded in the ledger.
    let show = task(&project, &["show", "0096", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["status"], "wip");
    assert_eq!(show["history"][0]["from"], "todo");
    assert_eq!(show["history"][0]["to"], "wip");
    assert_eq!(show["history"][0]["user"], "ada");
    assert_eq!(show["certification"], "none");
    // The view is rewritten from the ledger: the canonical name.
    assert!(project.read(&path).contains("\nstatus: wip\n"));
    task(&project, &["update", "0096", "testing"]).success();
    assert!(project.read(&path).contains("\nstatus: testing\n"));

    // A status that is not one is not recorded, and check names it.
    project.file(
        &path,
        project
            .read(&path)
            .replace("status: testing", "status: shipped"),
    );
    let show = task(&project, &["show", "0096", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["status"], "testing");
    assert_eq!(show["history"].as_array().unwrap().len(), 2);
    let out = task(&project, &["check", "0096", "--json"]).code(1);
    let codes: Vec<String> = out.stdout_json()[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(codes, ["L1.status-invalid"]);
}

#[test]
fn a_hand_edit_to_done_is_shown_uncertified_and_certifies_nothing() {
    let project = reference_project(&[T0096]);
    let path = format!("docs/tasks/{T0096}");
    task(&project, &["update", "0096", "wip"]).success();
    project.file(
        &path,
        project.read(&path).replace("status: wip", "status: DONE"),
    );
    let show = task(&project, &["show", "0096", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["status"], "wip");
    assert_eq!(show["fileStatus"], "DONE");
    assert_eq!(show["frontmatter"]["status"], "wip");
    assert_eq!(show["certification"], "uncertified");
    assert!(
        show["detail"]
            .as_str()
            .unwrap()
            .contains("says `status: done`"),
        "{show}"
    );
    let out = task(&project, &["show", "0096"]).success();
    assert!(
        out.stdout()
            .contains("  uncertified: its task file docs/tasks/"),
        "{}",
        out.stdout()
    );
    let list = task(&project, &["list", "--status", "done", "--json"]).success();
    assert_eq!(list.stdout_json(), serde_json::json!([]));
    // Nothing recorded done; certifying runs the lifecycle and the gate, and is refused.
    let ledger = project.read(".spur/ledger/tasks/0096.jsonl");
    assert!(!ledger.contains(r#""to":"done""#), "{ledger}");
    task(&project, &["certify", "0096"]).code(1);
    task(&project, &["update", "0096", "done", "--no-lifecycle"]).code(1);
    let ledger = project.read(".spur/ledger/tasks/0096.jsonl");
    assert!(!ledger.contains(r#""to":"done""#), "{ledger}");
}

/// A pipeline step is an agent that can write any file: one that writes `status: done`
/// into its task file gets a run the done gate denies and a task that is uncertified.
#[test]
fn a_step_writing_status_done_is_denied_and_shown_uncertified() {
    let project = reference_project(&[T0096]);
    project.file(
        "claim.yaml",
        r#"name: claim-done
initialState: work
vars: { wbs: "0096" }
states:
  - id: work
    onEnter:
      - kind: shell
        options:
          command: 'sed -i "s/^status: .*/status: done/" docs/tasks/0096_*.md'
  - id: done
transitions:
  - { from: work, to: done }
"#,
    );
    let out = project.args(["run", "claim.yaml", "--json"]).run().code(1);
    let json = out.stdout_json();
    assert_eq!(json["reason"], "done-gate-denied", "{json}");
    assert!(project
        .read(&format!("docs/tasks/{T0096}"))
        .contains("\nstatus: done\n"));
    let show = task(&project, &["show", "0096", "--json"])
        .success()
        .stdout_json();
    assert_eq!(show["status"], "todo");
    assert_eq!(show["certification"], "uncertified");
    assert!(
        !project.exists(".spur/ledger/tasks/0096.jsonl")
            || !project
                .read(".spur/ledger/tasks/0096.jsonl")
                .contains(r#""to":"done""#)
    );
}
