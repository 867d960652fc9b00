//! Non-bypass extended to verdict writes: over random sequences of spur's writes of the
//! verdict artifact and a step's forged writes and edits of it (and of the task ledger's
//! `verdict-written` records: unchained, chained by plain sha256 as spur chained them before
//! keyed chains, or sealed with the key over another sha256), a run ends `done`
//! only when the artifact on disk is the one spur wrote last and is a PASS, or the project
//! says `doneGate.externalVerdicts: allow` (and the gate then says `external`), or the run
//! was forced with a reason (audited); a broken ledger stops even a force. The forged
//! operations run in `sh`, as a step would: those before the last spur write from the test,
//! the rest inside the run, from its one step. The oracle is the test's own record of what
//! it wrote, never spur's output.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use spur_engine::done_gate::{write_verdict, AllowReason};
use spur_engine::run::Outcome;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::digest::sha256_hex;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_ledger::VerdictWriter;
use spur_engine::store::{audit, task_status};
use spur_engine::wbs::Wbs;

use crate::non_bypass::{artifact_case, ArtifactCase};
use crate::property::property;
use crate::run_harness::Project;

/// Runs searched by default.
const RUNS: u32 = 300;

const REASON: &str = "verified by hand";

/// One operation on the task's verdict artifact or its ledger.
#[derive(Clone)]
enum Op {
    /// One of spur's writers writes the artifact (recorded in the ledger).
    Spur(ArtifactCase, VerdictWriter),
    /// A step writes the artifact (or removes it: `Absent`).
    ForgeWrite(ArtifactCase),
    /// A step edits it without changing what it says: `cat v > t && printf ' \n' >> t && mv t v`.
    ForgeEdit,
    /// A step puts back the bytes spur wrote last (a copy it kept).
    ForgeRestore,
    /// A step appends a `verdict-written` record whose `prev` does not chain.
    ForgeUnchainedRecord,
    /// A step appends a `verdict-written` record of another sha256 chained by plain sha256,
    /// unsealed (format 2): a forger without the key.
    ForgeSha256ChainedRecord,
    /// A step appends a `verdict-written` record of another sha256, sealed with the key
    /// exactly as spur seals (openssl): a forger who read the key file.
    ForgeSealedRecordOfAnotherSha,
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Spur(a, w) => write!(f, "Spur({a:?}, {})", w.as_str()),
            Op::ForgeWrite(a) => write!(f, "ForgeWrite({a:?})"),
            Op::ForgeEdit => f.write_str("ForgeEdit"),
            Op::ForgeRestore => f.write_str("ForgeRestore"),
            Op::ForgeUnchainedRecord => f.write_str("ForgeUnchainedRecord"),
            Op::ForgeSha256ChainedRecord => f.write_str("ForgeSha256ChainedRecord"),
            Op::ForgeSealedRecordOfAnotherSha => f.write_str("ForgeSealedRecordOfAnotherSha"),
        }
    }
}

/// `doneGate.externalVerdicts` in `.spur/config.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Config {
    Absent,
    Deny,
    Allow,
}

fn op() -> impl Strategy<Value = Op> {
    let writer = prop_oneof![
        Just(VerdictWriter::TaskVerdict),
        Just(VerdictWriter::VerdictDerive),
        Just(VerdictWriter::Verify),
        Just(VerdictWriter::JsonUpdate),
    ];
    let spur_case = artifact_case().prop_filter("spur always writes something", |a| {
        !matches!(a, ArtifactCase::Absent)
    });
    prop_oneof![
        4 => (spur_case, writer).prop_map(|(a, w)| Op::Spur(a, w)),
        3 => artifact_case().prop_map(Op::ForgeWrite),
        2 => Just(Op::ForgeEdit),
        1 => Just(Op::ForgeRestore),
        1 => Just(Op::ForgeUnchainedRecord),
        1 => Just(Op::ForgeSha256ChainedRecord),
        2 => Just(Op::ForgeSealedRecordOfAnotherSha),
    ]
}

/// What the test knows it did: the oracle.
#[derive(Debug, Default)]
struct Record {
    /// The artifact's bytes on disk, and whether they certify T1 (valid, T1, PASS).
    on_disk: Option<(Vec<u8>, bool)>,
    /// The bytes of spur's last write, and whether they certify.
    spurs_last: Option<(Vec<u8>, bool)>,
    /// The sha256 the ledger's last sealed `verdict-written` record names.
    last_recorded: Option<String>,
    /// The ledger holds a sealed record (after which an unsealed one breaks it).
    sealed: bool,
    /// An unchained record was appended: the ledger is broken from there on.
    broken: bool,
}

impl Record {
    /// Whether the artifact on disk is the one the ledger last recorded.
    fn on_disk_is_recorded(&self) -> bool {
        self.on_disk
            .as_ref()
            .is_some_and(|(bytes, _)| Some(sha256_hex(bytes)) == self.last_recorded)
    }

    fn certifies(&self) -> bool {
        self.on_disk.as_ref().is_some_and(|(_, pass)| *pass)
    }
}

/// The shell a step would run for a forged `op` (number `i`), and its effect on `record`.
/// Payloads are written beside the project first, so the shell only copies them. `key`:
/// the project's key file and its id, which a sealing forger read.
fn forge(
    op: &Op,
    i: usize,
    (root, state, key): (&Path, &StateDir, &(String, String)),
    record: &mut Record,
) -> String {
    let artifact = state.verdict_path(&Wbs::parse("T1").expect("wbs"));
    let ledger = state.task_ledger_path(&Wbs::parse("T1").expect("wbs"));
    let (v, l) = (artifact.display(), ledger.display());
    let payload = |bytes: &[u8]| {
        let path = root.join(format!("payload-{i}"));
        std::fs::write(&path, bytes).expect("payload");
        path
    };
    match op {
        Op::Spur(..) => unreachable!("spur's writes are not forged"),
        Op::ForgeWrite(ArtifactCase::Absent) => {
            record.on_disk = None;
            format!("rm -f '{v}'\n")
        }
        Op::ForgeWrite(case) => {
            let text = case.text().unwrap_or_default();
            let path = payload(text.as_bytes());
            record.on_disk = Some((text.into_bytes(), case.certifies()));
            format!(
                "mkdir -p '{}' && cp '{}' '{v}'\n",
                state.run_dir().display(),
                path.display()
            )
        }
        Op::ForgeEdit => {
            match &mut record.on_disk {
                None => String::new(),
                Some((bytes, _)) => {
                    bytes.extend_from_slice(b" \n");
                    format!("cat '{v}' > '{v}.tmp' && printf ' \\n' >> '{v}.tmp' && mv '{v}.tmp' '{v}'\n")
                }
            }
        }
        Op::ForgeRestore => match record.spurs_last.clone() {
            None => String::new(),
            Some((bytes, pass)) => {
                let path = payload(&bytes);
                record.on_disk = Some((bytes, pass));
                format!("cp '{}' '{v}'\n", path.display())
            }
        },
        Op::ForgeUnchainedRecord => {
            record.broken = true;
            let sha = sha256_hex(format!("forged-{i}").as_bytes());
            format!(
                "mkdir -p '{dir}' && printf '%s\\n' '{{\"v\":2,\"seq\":0,\"wbs\":\"T1\",\"at\":\"2026-01-01T00:00:00.000Z\",\"user\":\"forger\",\"run\":null,\"kind\":\"verdict-written\",\"sha256\":\"{sha}\",\"writer\":\"verify\",\"prev\":\"{zeros}\"}}' >> '{l}'\n",
                dir = state.task_ledgers_dir().display(),
                zeros = "0".repeat(64),
            )
        }
        Op::ForgeSha256ChainedRecord => {
            let sha = sha256_hex(format!("forged-{i}").as_bytes());
            // After a sealed record an unsealed one breaks the chain; before any, it is an
            // unkeyed record, which is no proof: it names no artifact as spur's.
            if record.sealed {
                record.broken = true;
            }
            format!(
                "mkdir -p '{dir}' && touch '{l}'\n\
                 seq=$(wc -l < '{l}' | tr -d ' ')\n\
                 if [ \"$seq\" -gt 0 ]; then prev=$(printf '%s' \"$(tail -n 1 '{l}')\" | sha256sum | cut -d' ' -f1); else prev=; fi\n\
                 printf '{{\"v\":2,\"seq\":%s,\"wbs\":\"T1\",\"at\":\"2026-01-01T00:00:00.000Z\",\"user\":\"forger\",\"run\":null,\"kind\":\"verdict-written\",\"sha256\":\"{sha}\",\"writer\":\"verify\",\"prev\":\"%s\"}}\\n' \"$seq\" \"$prev\" >> '{l}'\n",
                dir = state.task_ledgers_dir().display(),
            )
        }
        Op::ForgeSealedRecordOfAnotherSha => {
            let sha = sha256_hex(format!("forged-{i}").as_bytes());
            if !record.broken {
                record.last_recorded = Some(sha.clone());
                record.sealed = true;
            }
            let (key_path, key_id) = key;
            format!(
                "mkdir -p '{dir}' && touch '{l}'\n\
                 seq=$(wc -l < '{l}' | tr -d ' ')\n\
                 last=$(tail -n 1 '{l}')\n\
                 if [ \"$seq\" -eq 0 ]; then prev=; else case \"$last\" in\n\
                   *'\"mac\":\"'*) prev=$(printf '%s' \"$last\" | sed 's/.*\"mac\":\"\\([0-9a-f]*\\)\".*/\\1/') ;;\n\
                   *) prev=$(printf '%s' \"$last\" | sha256sum | cut -d' ' -f1) ;;\n\
                 esac; fi\n\
                 body=$(printf '{{\"v\":3,\"seq\":%s,\"wbs\":\"T1\",\"at\":\"2026-01-01T00:00:00.000Z\",\"user\":\"forger\",\"run\":null,\"kind\":\"verdict-written\",\"sha256\":\"{sha}\",\"writer\":\"verify\",\"prev\":\"%s\",\"key\":\"{key_id}\"' \"$seq\" \"$prev\")\n\
                 mac=$(printf '%s' \"$body\" | openssl dgst -sha256 -mac HMAC -macopt \"hexkey:$(cat '{key_path}')\" | sed 's/^.*= //')\n\
                 printf '%s,\"mac\":\"%s\"}}\\n' \"$body\" \"$mac\" >> '{l}'\n",
                dir = state.task_ledgers_dir().display(),
            )
        }
    }
}

fn sh(script: &str) -> Result<(), TestCaseError> {
    let status = std::process::Command::new("sh")
        .args(["-ec", script])
        .status()
        .map_err(|e| TestCaseError::fail(format!("sh: {e}")))?;
    prop_assert!(status.success(), "forging script failed: {script}");
    Ok(())
}

#[derive(Default)]
struct Tally {
    done_as_spurs: AtomicU32,
    done_external: AtomicU32,
    done_forced: AtomicU32,
    denied_not_spurs: AtomicU32,
    failed_closed_on_ledger: AtomicU32,
}

#[test]
fn no_verdict_written_or_edited_outside_spur_certifies_a_task_unless_allowed() {
    let openssl = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        openssl,
        "the sealing forger needs `openssl` (HMAC in sh): install it (apt-get install openssl)"
    );
    let force = prop_oneof![4 => Just(None), 1 => Just(Some(REASON))];
    let config = prop_oneof![
        2 => Just(Config::Absent),
        1 => Just(Config::Deny),
        1 => Just(Config::Allow)
    ];
    let tally = Tally::default();
    property(
        "non-bypass against forged verdict writes (runs)",
        RUNS,
        (prop::collection::vec(op(), 1..7), config, force),
        |(ops, config, force)| {
            let project = Project::new();
            let state = project.state_dir();
            // The key exists from the start, so that a forger can read it.
            let key_file = project.key_file();
            let key = key_file.create().expect("a key");
            let key = (
                key_file.path().expect("a key file").display().to_string(),
                key.id().to_owned(),
            );
            let wbs = Wbs::parse("T1").expect("valid wbs");
            std::fs::create_dir_all(state.run_dir()).expect("run dir");
            match config {
                Config::Absent => {}
                Config::Deny => {
                    std::fs::write(state.config_path(), "doneGate: {externalVerdicts: deny}\n")
                        .expect("config")
                }
                Config::Allow => {
                    std::fs::write(state.config_path(), "doneGate: {externalVerdicts: allow}\n")
                        .expect("config")
                }
            }
            // Everything up to spur's last write happens before the run; the forgeries
            // after it happen in the run's step.
            let last_spur = ops.iter().rposition(|op| matches!(op, Op::Spur(..)));
            let mut record = Record::default();
            let mut in_step = String::new();
            for (i, op) in ops.iter().enumerate() {
                match op {
                    Op::Spur(case, writer) => {
                        let text = case.text().unwrap_or_default();
                        let lock = DataLock::acquire(&state, &wbs).expect("data lock");
                        let written = write_verdict(&lock, &state, text.as_bytes(), *writer, None);
                        // The file is written either way; the record only on an intact ledger.
                        prop_assert_eq!(written.is_ok(), !record.broken, "{:?}", written);
                        let pass = case.certifies();
                        record.on_disk = Some((text.clone().into_bytes(), pass));
                        if !record.broken {
                            record.spurs_last = Some((text.clone().into_bytes(), pass));
                            record.last_recorded = Some(sha256_hex(text.as_bytes()));
                            record.sealed = true;
                        }
                    }
                    forged => {
                        let script = forge(forged, i, (project.root(), &state, &key), &mut record);
                        if last_spur.is_some_and(|last| i < last) {
                            sh(&script)?;
                        } else {
                            in_step.push_str(&script);
                        }
                    }
                }
            }
            std::fs::write(project.root().join("forge.sh"), &in_step).expect("forge.sh");
            let yaml = format!(
                "name: verdict-forgery\ninitialState: work\nterminalStates: [done]\n\
                 vars: {{wbs: \"T1\"}}\nstates:\n  - id: work\n    onEnter:\n\
                 \x20     - kind: shell\n        options: {{command: \"sh -e '{}'\"}}\n  - id: done\n\
                 transitions: [{{from: work, to: done}}]\n",
                project.root().join("forge.sh").display()
            );
            let checked = project
                .checked(&yaml)
                .map_err(|e| TestCaseError::fail(format!("pipeline refused: {e}")))?;
            let outcome = project
                .run(&checked, &[], force)
                .map_err(|e| TestCaseError::fail(format!("run error: {e:?}")))?;

            let spurs = record.on_disk_is_recorded();
            let allowed = config == Config::Allow;
            let expect_done =
                !record.broken && (force.is_some() || (record.certifies() && (spurs || allowed)));
            let done = outcome.outcome == Outcome::Done;
            prop_assert_eq!(
                done,
                expect_done,
                "{:?}\nops {:?}\nconfig {:?}, force {:?}, record {:?}",
                outcome,
                ops,
                config,
                force,
                record
            );
            if record.broken {
                // Fail closed: no status is read from a broken ledger, so none is asserted.
                tally
                    .failed_closed_on_ledger
                    .fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            let task_done = task_status::current_status(&state, &wbs)
                .map_err(|e| TestCaseError::fail(format!("task status: {e:?}")))?
                .is_done();
            prop_assert_eq!(task_done, expect_done);
            let audited = audit::list(&state.audit_path())
                .map_err(|e| TestCaseError::fail(format!("audit: {e:?}")))?
                .len();
            prop_assert_eq!(audited, usize::from(force.is_some()));
            let reason = outcome.done_gate.as_ref().and_then(|g| g.reason);
            match (done, force) {
                (true, Some(_)) => {
                    prop_assert_eq!(reason, Some(AllowReason::Forced));
                    tally.done_forced.fetch_add(1, Ordering::Relaxed);
                }
                (true, None) if spurs => {
                    prop_assert_eq!(reason, Some(AllowReason::Pass));
                    tally.done_as_spurs.fetch_add(1, Ordering::Relaxed);
                }
                (true, None) => {
                    prop_assert_eq!(reason, Some(AllowReason::External));
                    tally.done_external.fetch_add(1, Ordering::Relaxed);
                }
                (false, _) if record.certifies() => {
                    tally.denied_not_spurs.fetch_add(1, Ordering::Relaxed);
                }
                (false, _) => {}
            }
            Ok(())
        },
    );
    let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
    eprintln!(
        "  done as spur's {}; done external {}; done forced {}; a PASS denied as not spur's {}; failed closed on a forged ledger line {}",
        n(&tally.done_as_spurs),
        n(&tally.done_external),
        n(&tally.done_forced),
        n(&tally.denied_not_spurs),
        n(&tally.failed_closed_on_ledger),
    );
    for (what, count) in [
        ("done as spur's", &tally.done_as_spurs),
        ("done external", &tally.done_external),
        ("a PASS denied as not spur's", &tally.denied_not_spurs),
        (
            "failed closed on a forged ledger line",
            &tally.failed_closed_on_ledger,
        ),
    ] {
        assert!(n(count) > 0, "no case was {what}");
    }
}
