//! Whether a task's status is certified: its task ledger checked, and its view compared
//! with it. `spur task show` and `spur audit verify` report what this finds.
//!
//! - certified: the ledger's last status record says done, sealed with the key (and the
//!   view agrees or is absent);
//! - uncertified: the view says done and the ledger has no record at all (a fresh clone of
//!   a repository whose views say done, or a step that wrote one), or the ledger's done is
//!   unkeyed (a ledger of a spur before keyed chains, or rewritten without the key);
//! - tampered: the ledger's chain is broken, or it has records and the view disagrees;
//! - unverifiable: the ledger's seals cannot be checked (the key is missing, or another key
//!   sealed it): neither tampered nor fine;
//! - none: nothing to certify and nothing wrong.

use serde::Serialize;

use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{self, LedgerRecord};
use crate::store::task_status::Status;
use crate::store::task_view::{read_view, viewed_tasks, TaskRecord, View};
use crate::wbs::Wbs;

/// A task's certification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Certification {
    /// The ledger says done.
    Certified,
    /// A view says done; the ledger has no record of it.
    Uncertified,
    /// The ledger is broken, or a view disagrees with it.
    Tampered,
    /// The ledger's seals cannot be checked with the key at hand.
    Unverifiable,
    /// Not done, nothing wrong.
    None,
}

impl Certification {
    /// `certified`, `uncertified`, `tampered`, `unverifiable`, `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Certification::Certified => "certified",
            Certification::Uncertified => "uncertified",
            Certification::Tampered => "tampered",
            Certification::Unverifiable => "unverifiable",
            Certification::None => "none",
        }
    }
}

/// The ledger's side of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSummary {
    /// The ledger file.
    pub(crate) path: String,
    /// Records in its intact prefix.
    pub records: usize,
    /// Whether the chain holds (a missing ledger is an intact, empty one).
    pub intact: bool,
    /// The chain value of its last intact record's line (the next record's `prev`).
    pub(crate) last_hash: Option<String>,
    /// A torn last line was ignored.
    pub(crate) torn_tail: bool,
    /// Why it is not intact.
    pub(crate) problem: Option<String>,
    /// How many of its records are unkeyed (from before keyed chains).
    pub unkeyed: usize,
    /// How many unkeyed records no sealed record follows (see `LedgerRead::unanchored`).
    pub unanchored: usize,
    /// Why its seals cannot be checked, from the first record that cannot be.
    pub(crate) unverifiable: Option<String>,
}

/// The view's side of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewSummary {
    /// The view file.
    pub(crate) path: String,
    /// Whether there is one.
    pub(crate) exists: bool,
    /// The status it claims (when it is a task record).
    pub(crate) status: Option<Status>,
    /// Why it is not a task record.
    pub(crate) problem: Option<String>,
}

/// One task, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCheck {
    /// The task.
    pub wbs: Wbs,
    /// What the ledger (its intact prefix) says: status and history.
    pub record: TaskRecord,
    /// The ledger's records (its intact prefix).
    pub(crate) records: Vec<LedgerRecord>,
    /// The verdict of the check.
    pub certification: Certification,
    /// Why uncertified, what differs when tampered, or a note (an unreadable view).
    pub detail: Option<String>,
    /// The ledger's side.
    pub ledger: LedgerSummary,
    /// The view's side.
    pub view: ViewSummary,
}

/// Check the ledger and the view of `wbs`.
pub fn check(state_dir: &StateDir, wbs: &Wbs) -> TaskCheck {
    let ledger_path = state_dir.task_ledger_path(wbs).display().to_string();
    let view_path = state_dir.task_path(wbs).display().to_string();
    let (records, mut ledger, unkeyed_done) = match task_ledger::read(state_dir, wbs) {
        Ok(read) => {
            let unverifiable = read
                .unverifiable
                .as_ref()
                .and(read.intact().err())
                .map(|e| e.to_string());
            let summary = LedgerSummary {
                path: ledger_path.clone(),
                records: read.records.len(),
                intact: read.broken.is_none(),
                last_hash: (!read.last_hash().is_empty()).then(|| read.last_hash().to_owned()),
                torn_tail: read.torn_tail,
                problem: read
                    .broken
                    .as_ref()
                    .and(read.intact().err())
                    .map(|e| e.to_string()),
                unkeyed: read.unkeyed(),
                unanchored: read.unanchored(),
                unverifiable,
            };
            let unkeyed_done = read
                .last_status_record()
                .filter(|r| !r.is_keyed() && r.status().is_some_and(|s| s.to.is_done()))
                .map(|r| r.seq);
            (read.records, summary, unkeyed_done)
        }
        Err(e) => (
            Vec::new(),
            LedgerSummary {
                path: ledger_path.clone(),
                records: 0,
                intact: false,
                last_hash: None,
                torn_tail: false,
                problem: Some(e.to_string()),
                unkeyed: 0,
                unanchored: 0,
                unverifiable: None,
            },
            None,
        ),
    };
    let record = TaskRecord::from_ledger(wbs, &records);
    let view = read_view(state_dir, wbs);
    let view_summary = ViewSummary {
        path: view_path.clone(),
        exists: view != View::Missing,
        status: view.status().cloned(),
        problem: match &view {
            View::Unreadable(problem) => Some(problem.clone()),
            View::Missing | View::Record(_) => None,
        },
    };
    let by_ledger = match unkeyed_done {
        Some(seq) => (
            Certification::Uncertified,
            Some(format!(
                "its done record (task ledger {ledger_path} seq {seq}) is unkeyed: written by a spur \
                 before keyed chains, or without the key, so it is no proof"
            )),
        ),
        None if record.status.is_done() => (Certification::Certified, None),
        None => (Certification::None, None),
    };
    let (certification, detail) = if let Some(problem) = &ledger.problem {
        (Certification::Tampered, Some(problem.clone()))
    } else if let Some(why) = &ledger.unverifiable {
        (Certification::Unverifiable, Some(why.clone()))
    } else if records.is_empty() {
        match &view {
            View::Record(claim) if claim.status.is_done() => (
                Certification::Uncertified,
                Some(format!(
                    "its view {view_path} says done, but its task ledger {ledger_path} has no record of it"
                )),
            ),
            View::Unreadable(problem) => (
                Certification::None,
                Some(format!(
                    "its view {view_path} is ignored: {problem}; it is rewritten at the next status change"
                )),
            ),
            View::Record(_) | View::Missing => (Certification::None, None),
        }
    } else {
        match &view {
            View::Missing => by_ledger,
            View::Unreadable(problem) => (
                Certification::Tampered,
                Some(format!(
                    "its view {view_path} is not the ledger's ({problem}); its task ledger says {}",
                    record.status
                )),
            ),
            View::Record(claim) if *claim == record => by_ledger,
            View::Record(claim) => (
                Certification::Tampered,
                Some(differences(claim, &record, &view_path)),
            ),
        }
    };
    ledger.path = ledger_path;
    TaskCheck {
        wbs: wbs.clone(),
        record,
        records,
        certification,
        detail,
        ledger,
        view: view_summary,
    }
}

/// What a view says that its ledger does not.
fn differences(view: &TaskRecord, ledger: &TaskRecord, view_path: &str) -> String {
    let mut found = Vec::new();
    if view.status != ledger.status {
        found.push(format!(
            "it says {}, the ledger says {}",
            view.status, ledger.status
        ));
    }
    if view.wbs != ledger.wbs {
        found.push(format!("it names task {:?}", view.wbs));
    }
    if view.history != ledger.history {
        let first = view
            .history
            .iter()
            .zip(&ledger.history)
            .position(|(a, b)| a != b);
        found.push(match first {
            Some(i) => format!(
                "its history entry {} is not the ledger's record seq {i}",
                i + 1
            ),
            None => format!(
                "its history has {} entries, the ledger {}",
                view.history.len(),
                ledger.history.len()
            ),
        });
    }
    format!(
        "its view {view_path} disagrees with its task ledger: {}",
        found.join("; ")
    )
}

/// Every task with a ledger or a view, checked, in wbs order.
pub fn check_all(state_dir: &StateDir) -> Vec<TaskCheck> {
    let mut tasks = task_ledger::ledgered_tasks(state_dir);
    tasks.extend(viewed_tasks(state_dir));
    tasks.sort();
    tasks.dedup();
    tasks.iter().map(|wbs| check(state_dir, wbs)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::data_lock::DataLock;
    use crate::store::task_status::{record_change, ChangeContext, StatusChange};

    fn state() -> (tempfile::TempDir, StateDir, Wbs) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        (dir, state, Wbs::parse("T1").unwrap())
    }

    fn forge_view(state: &StateDir, wbs: &Wbs, text: &str) {
        std::fs::create_dir_all(state.tasks_dir()).unwrap();
        std::fs::write(state.task_path(wbs), text).unwrap();
    }

    fn set(state: &StateDir, wbs: &Wbs, status: &str) {
        let lock = DataLock::acquire(state, wbs).unwrap();
        let ctx = ChangeContext {
            user: "ada",
            run_id: None,
            time: "t".into(),
        };
        let change = StatusChange::To(Status::open(status).unwrap());
        record_change(&lock, state, change, &ctx).unwrap();
    }

    const DONE_VIEW: &str = r#"{"wbs":"T1","status":"done","history":[]}"#;

    #[test]
    fn a_done_view_without_a_ledger_is_uncertified() {
        let (_d, state, wbs) = state();
        forge_view(&state, &wbs, DONE_VIEW);
        let check = check(&state, &wbs);
        assert_eq!(check.certification, Certification::Uncertified);
        assert_eq!(check.record.status.as_str(), "todo");
        assert!(check.detail.unwrap().contains("has no record of it"));
    }

    #[test]
    fn a_view_that_disagrees_with_the_ledger_is_tampered() {
        let (_d, state, wbs) = state();
        set(&state, &wbs, "in-progress");
        assert_eq!(check(&state, &wbs).certification, Certification::None);
        forge_view(&state, &wbs, DONE_VIEW);
        let check = check(&state, &wbs);
        assert_eq!(check.certification, Certification::Tampered);
        let detail = check.detail.unwrap();
        assert!(
            detail.contains(
                "disagrees with its task ledger: it says done, the ledger says in-progress"
            ),
            "{detail}"
        );
        assert!(
            detail.contains("its history has 0 entries, the ledger 1"),
            "{detail}"
        );
    }

    #[test]
    fn a_broken_ledger_is_tampered_whatever_the_view_says() {
        let (_d, state, wbs) = state();
        set(&state, &wbs, "in-progress");
        set(&state, &wbs, "review");
        // The first record edited: its seal no longer matches. The view is the honest one
        // spur wrote.
        let path = state.task_ledger_path(&wbs);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("ada", "eve", 1)).unwrap();
        let check = check(&state, &wbs);
        assert_eq!(check.certification, Certification::Tampered);
        assert!(!check.ledger.intact);
        assert!(check.detail.unwrap().contains("broken at seq 0"));
    }

    #[test]
    fn every_task_with_a_ledger_or_a_view_is_checked() {
        let (_d, state, wbs) = state();
        set(&state, &wbs, "in-progress");
        let t2 = Wbs::parse("T2").unwrap();
        forge_view(&state, &t2, r#"{"wbs":"T2","status":"done","history":[]}"#);
        let all: Vec<_> = check_all(&state)
            .into_iter()
            .map(|c| (c.wbs.to_string(), c.certification))
            .collect();
        assert_eq!(
            all,
            [
                ("T1".to_owned(), Certification::None),
                ("T2".to_owned(), Certification::Uncertified)
            ]
        );
    }
}
