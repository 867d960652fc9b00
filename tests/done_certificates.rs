//! Signed done certificates end to end (issue 19, item 4): when the gate certifies a task,
//! spur writes `docs/tasks/.certs/<wbs>.json` signed with the user's SSH key, and `spur task
//! verify-certs` holds every task file that claims done to a valid certificate from a key
//! the committed `allowed_signers` file allows — so CI can refuse a done nobody allowed
//! signed. Keys are made with OpenSSH's `ssh-keygen` (the same program spur signs with).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{write_verdict_through_spur, Spur};

const CERTS: &str = "docs/tasks/.certs";
const SIGNERS: &str = "docs/tasks/.certs/allowed_signers";

/// An ed25519 key pair made by ssh-keygen, outside the project.
struct Key {
    path: PathBuf,
    public: String,
}

/// The keys of a team: ada's is in `allowed_signers`, eve's is not.
struct Team {
    _dir: tempfile::TempDir,
    ada: Key,
    eve: Key,
}

fn keygen(dir: &Path, name: &str) -> Key {
    let path = dir.join(name);
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run ssh-keygen ({e}): install OpenSSH's client: apt-get install openssh-client")
        });
    assert!(status.success(), "ssh-keygen failed");
    let public = std::fs::read_to_string(dir.join(format!("{name}.pub"))).unwrap();
    Key {
        path,
        public: public.trim().to_owned(),
    }
}

fn team() -> Team {
    let dir = tempfile::tempdir().unwrap();
    let ada = keygen(dir.path(), "ada");
    let eve = keygen(dir.path(), "eve");
    Team {
        _dir: dir,
        ada,
        eve,
    }
}

/// `.spur/config.yaml` that writes certificates signed with `key` as `principal`.
fn config(key: &Path, principal: &str) -> String {
    format!(
        "doneGate:\n  certificates:\n    enabled: true\n    signingKey: {}\n    principal: {principal}\n",
        key.display()
    )
}

/// The person changes the config, and approves its policy, as a person must before the
/// gate decides under a changed policy.
fn reconfigure(project: &Spur, config: String) {
    project.file(".spur/config.yaml", config);
    project.args(["policy", "approve"]).run().success();
}

/// A project that signs as ada, with ada (only) in the committed `allowed_signers`.
fn project(team: &Team) -> Spur {
    Spur::new()
        .file(
            ".spur/config.yaml",
            config(&team.ada.path, "ada@example.com"),
        )
        .file(SIGNERS, format!("ada@example.com {}\n", team.ada.public))
}

fn task_path(wbs: &str) -> String {
    format!("docs/tasks/{wbs}_task.md")
}

/// Task `wbs`'s file: one requirement, one criterion, no status yet.
fn add_task(project: &Spur, wbs: &str) {
    project.file(
        &task_path(wbs),
        format!(
            "# {wbs} A task\n\n## Requirements\n\n- R1: the thing {wbs} asks for.\n\n\
             ## Acceptance Criteria\n\n- [ ] AC-1: it is there\n"
        ),
    );
}

/// A PASS for task `wbs`, written through spur (so the gate takes it as spur's).
fn pass(project: &Spur, wbs: &str) {
    write_verdict_through_spur(
        project,
        wbs,
        &format!(
            r#"{{"wbs":"{wbs}","verdict":"PASS","requirements":[{{"id":"R1","status":"MET","evidence":"docs/tasks/{wbs}_task.md:5"}}],"acceptanceCriteria":[{{"id":"AC-1","status":"MET","evidenceType":"test","evidence":"docs/tasks/{wbs}_task.md:9"}}]}}"#
        ),
    );
}

/// `spur task certify WBS [extra] --json` as ada: (exit code, JSON, stderr).
fn certify(project: &Spur, wbs: &str, extra: &[&str]) -> (i32, Value, String) {
    let out = project
        .args(["task", "certify", wbs])
        .args(extra)
        .json()
        .env("USER", "ada")
        .run();
    (
        out.exit_code().expect("exited"),
        out.stdout_json(),
        out.stderr_redacted(),
    )
}

/// Make task `wbs` done through the gate (a PASS, then certify), asserting it was allowed.
fn certified(project: &Spur, wbs: &str) -> Value {
    pass(project, wbs);
    let (code, json, stderr) = certify(project, wbs, &[]);
    assert_eq!(
        (code, json["decision"].as_str()),
        (0, Some("allow")),
        "{json} {stderr}"
    );
    json
}

/// What the task file says: prepend `status: done` frontmatter (as a person or spur's task
/// verbs would write it once the task is done).
fn claim_done(project: &Spur, wbs: &str) {
    let text = project.read(&task_path(wbs));
    project.file(
        &task_path(wbs),
        format!("---\nname: A task\nstatus: done\n---\n{text}"),
    );
}

/// `spur task verify-certs [args]`: (exit code, stdout, stderr).
fn verify_certs(project: &Spur, args: &[&str]) -> (i32, String, String) {
    let out = project.args(["task", "verify-certs"]).args(args).run();
    (
        out.exit_code().expect("exited"),
        out.stdout_redacted(),
        out.stderr_redacted(),
    )
}

fn verify_certs_json(project: &Spur, args: &[&str]) -> (i32, Value) {
    let out = project
        .args(["task", "verify-certs", "--json"])
        .args(args)
        .run();
    (out.exit_code().expect("exited"), out.stdout_json())
}

/// The failure code of each task in a `--json` report, by wbs.
fn failures(json: &Value) -> Vec<(String, String)> {
    json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["wbs"].as_str().unwrap_or("?").to_owned(),
                t["failure"]["code"].as_str().unwrap_or("ok").to_owned(),
            )
        })
        .collect()
}

/// Key fingerprints and times differ on every run.
macro_rules! stable_snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({filters => vec![
            (r"SHA256:[A-Za-z0-9+/]{43}", "SHA256:[key]"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", "[time]"),
        ]}, {
            insta::assert_snapshot!($name, $value);
        });
    };
}

/// The CI check of the issue: three tasks claim done; one certificate was forged (edited
/// after signing, to cover a requirement an agent rewrote), one was never made (the agent
/// set `status: done` itself). `verify-certs` names both, with their kinds, and exits 1.
#[test]
fn ci_names_the_forged_and_the_missing_certificate_and_exits_1() {
    let team = team();
    let project = project(&team);
    for wbs in ["0001", "0002", "0003"] {
        add_task(&project, wbs);
    }
    certified(&project, "0001");
    certified(&project, "0002");
    for wbs in ["0001", "0002", "0003"] {
        claim_done(&project, wbs);
    }
    let (code, _, _) = verify_certs(&project, &[]);
    assert_eq!(code, 1, "0003 has no certificate yet");

    // The forger rewrites 0002's requirement and edits the certificate's task-file hash to
    // the rewritten file's: every field is consistent, but the signature is ada's over the
    // old bytes.
    let cert_path = format!("{CERTS}/0002.json");
    let before: Value = serde_json::from_str(&project.read(&cert_path)).unwrap();
    let old_hash = before["certificate"]["taskFile"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let task = project.read(&task_path("0002"));
    project.file(
        &task_path("0002"),
        task.replace("the thing 0002 asks for", "something easier"),
    );
    let certificate = project.read(&cert_path);
    let new_hash = sha256_of_kept_text(&project, "0002", &old_hash);
    project.file(&cert_path, certificate.replace(&old_hash, &new_hash));

    let (code, stdout, stderr) = verify_certs(&project, &[]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("FAILED  0002") && stdout.contains("FAILED  0003"),
        "{stdout}"
    );
    assert!(stdout.contains("ok      0001"), "{stdout}");
    stable_snapshot!("ci_forged_and_missing", stdout);

    let (code, json) = verify_certs_json(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&json),
        [
            ("0001".to_owned(), "ok".to_owned()),
            ("0002".to_owned(), "spur::cert::bad-signature".to_owned()),
            ("0003".to_owned(), "spur::cert::missing".to_owned()),
        ]
    );
    stable_snapshot!(
        "ci_forged_and_missing_json",
        serde_json::to_string_pretty(&json).unwrap()
    );
}

/// The hash the forger needs, of task `wbs`'s file as it is now: taken from a certificate
/// spur makes for the same file in a scratch project (rather than copying spur's hashing
/// into the test).
fn sha256_of_kept_text(project: &Spur, wbs: &str, old: &str) -> String {
    // Without the frontmatter `claim_done` added (which does not count): a task file with a
    // `status:` has the lifecycle, and the scratch task is certified straight from todo.
    let text = project.read(&task_path(wbs));
    let bare = text
        .strip_prefix("---\nname: A task\nstatus: done\n---\n")
        .unwrap_or(&text);
    let copy = Spur::new()
        .file(".spur/config.yaml", project.read(".spur/config.yaml"))
        .file(SIGNERS, project.read(SIGNERS))
        .file(&task_path(wbs), bare);
    let json = certified(&copy, wbs);
    assert_eq!(json["certificate"]["status"], "written");
    let cert: Value = serde_json::from_str(&copy.read(&format!("{CERTS}/{wbs}.json"))).unwrap();
    let new = cert["certificate"]["taskFile"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old, "the edit changes what counts");
    new
}

/// Through a real run (the demo's task pipeline): the certificate binds what the gate
/// certified — the task file's requirements, the verdict artifact, the tree verify
/// recorded, the run — and OpenSSH's own `ssh-keygen -Y verify` accepts it, as does
/// `verify-certs` now that the task file says done (spur wrote it there).
#[test]
fn a_run_that_certifies_writes_a_certificate_that_verifies_here_and_with_openssh() {
    let team = team();
    let project = Spur::new();
    for file in [
        ".spur/config.yaml",
        "stub-agent.sh",
        "check",
        "docs/tasks/0592_hello.md",
    ] {
        project.fixture(&format!("examples/demo/{file}"), file);
    }
    for exe in ["stub-agent.sh", "check"] {
        crate::run::make_executable(&project.join(exe));
    }
    project.fixture("pipelines/task-pipeline.yaml", "task-pipeline.yaml");
    let demo_config = project.read(".spur/config.yaml");
    project.file(
        ".spur/config.yaml",
        format!(
            "{demo_config}\n{}",
            config(&team.ada.path, "ada@example.com")
        ),
    );
    project.file(SIGNERS, format!("ada@example.com {}\n", team.ada.public));

    let out = project
        .args(["run", "task-pipeline.yaml"])
        .var("wbs", "0592")
        .var("profile", "auto")
        .json()
        .run()
        .success()
        .stdout_json();
    assert_eq!(out["outcome"], "done");
    assert_eq!(
        out["doneGate"]["certificate"],
        serde_json::json!({"status": "written", "path": "docs/tasks/.certs/0592.json"})
    );
    let file: Value = serde_json::from_str(&project.read(&format!("{CERTS}/0592.json"))).unwrap();
    let cert = &file["certificate"];
    assert_eq!(cert["format"], "spur-done-certificate/1");
    assert_eq!(cert["wbs"], "0592");
    assert_eq!(cert["taskFile"]["path"], "docs/tasks/0592_hello.md");
    assert_eq!(cert["verdict"]["verdict"], "PASS");
    assert_eq!(cert["gate"]["decision"], "allow");
    assert_eq!(cert["gate"]["reason"], "pass");
    assert_eq!(cert["signer"]["principal"], "ada@example.com");
    assert_eq!(cert["runId"], out["runId"]);
    // The artifact the gate read, and the tree verify recorded and the gate accepted.
    let ledger: Vec<Value> = project
        .read(".spur/ledger/tasks/0592.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let done = ledger.iter().rfind(|r| r["to"] == "done").unwrap();
    assert_eq!(cert["verdict"]["artifactSha256"], done["verdictSha256"]);
    let verified = ledger.iter().rfind(|r| r["kind"] == "verified").unwrap();
    assert_eq!(cert["tree"]["fingerprint"], verified["fingerprint"]);
    assert_eq!(cert["tree"]["verifyRun"], verified["verifyRun"]);

    // OpenSSH verifies the exact bytes of the `certificate` member, which `spur jq -cj`
    // reproduces for a certificate as spur writes it.
    let message = project
        .args(["jq", "-cj", ".certificate", &format!("{CERTS}/0592.json")])
        .run()
        .success()
        .stdout()
        .to_owned();
    let signature = file["signature"].as_str().unwrap();
    project.file("sig", signature);
    let verified = Command::new("ssh-keygen")
        .args([
            "-Y",
            "verify",
            "-n",
            "spur-done-cert",
            "-I",
            "ada@example.com",
            "-f",
        ])
        .arg(project.join(SIGNERS))
        .arg("-s")
        .arg(project.join("sig"))
        .stdin(
            std::fs::File::open({
                project.file("message", &message);
                project.join("message")
            })
            .unwrap(),
        )
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );

    // The gate's allow rewrote the task file's `status:` (a view of the ledger) to done:
    // the file claims done, and its certificate holds.
    assert!(project
        .read("docs/tasks/0592_hello.md")
        .contains("\nstatus: done\n"));
    let (code, stdout, _) = verify_certs(&project, &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with(
            "ok      0592  docs/tasks/0592_hello.md  signed by ada@example.com (SHA256:"
        ),
        "{stdout}"
    );
}

/// A certificate copied over another task's (same signer, valid signature) certifies the
/// task it names, not the one it is filed under.
#[test]
fn a_certificate_copied_to_another_task_fails() {
    let team = team();
    let project = project(&team);
    add_task(&project, "0001");
    add_task(&project, "0002");
    certified(&project, "0001");
    claim_done(&project, "0001");
    claim_done(&project, "0002");
    project.file(
        &format!("{CERTS}/0002.json"),
        project.read(&format!("{CERTS}/0001.json")),
    );
    let (code, json) = verify_certs_json(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&json),
        [
            ("0001".to_owned(), "ok".to_owned()),
            ("0002".to_owned(), "spur::cert::mismatch".to_owned())
        ]
    );
    let message = json["tasks"][1]["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("certifies task \"0001\", not 0002"),
        "{message}"
    );
}

/// Requirements edited after certification break the certificate; what spur and people
/// write after verify (the status, the Solution section) does not.
#[test]
fn a_task_file_whose_requirements_changed_after_certification_fails() {
    let team = team();
    let project = project(&team);
    add_task(&project, "0001");
    certified(&project, "0001");
    claim_done(&project, "0001");
    let path = task_path("0001");
    let text = project.read(&path);
    project.file(&path, format!("{text}\n## Solution\n\nDid the thing.\n"));
    let (code, stdout, _) = verify_certs(&project, &[]);
    assert_eq!(code, 0, "{stdout}");

    project.file(
        &path,
        project
            .read(&path)
            .replace("the thing 0001 asks for", "less"),
    );
    let (code, json) = verify_certs_json(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&json),
        [("0001".to_owned(), "spur::cert::mismatch".to_owned())]
    );
    let message = json["tasks"][0]["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("requirements or acceptance criteria changed"),
        "{message}"
    );
}

/// A certificate signed with a key `allowed_signers` does not list — or lists for someone
/// else — is refused, however well-formed.
#[test]
fn a_certificate_signed_by_a_key_not_allowed_for_its_principal_fails() {
    let team = team();
    let project = project(&team);
    add_task(&project, "0001");
    add_task(&project, "0002");
    // eve signs as ada: her key is not in the file at all.
    reconfigure(&project, config(&team.eve.path, "ada@example.com"));
    certified(&project, "0001");
    claim_done(&project, "0001");
    let (code, json) = verify_certs_json(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&json),
        [("0001".to_owned(), "spur::cert::unknown-signer".to_owned())]
    );
    let message = json["tasks"][0]["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("the key is not in the allowed signers file"),
        "{message}"
    );
    // eve's key listed for eve; she signs as ada: not allowed for ada.
    let signers = project.read(SIGNERS);
    project.file(
        SIGNERS,
        format!("{signers}eve@example.com {}\n", team.eve.public),
    );
    certified(&project, "0002");
    claim_done(&project, "0002");
    let (code, json) = verify_certs_json(&project, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        failures(&json),
        [
            ("0001".to_owned(), "spur::cert::unknown-signer".to_owned()),
            ("0002".to_owned(), "spur::cert::unknown-signer".to_owned())
        ]
    );
    let message = json["tasks"][1]["failure"]["message"].as_str().unwrap();
    assert!(
        message.contains("lists the key for eve@example.com only"),
        "{message}"
    );
    // Signed by eve as eve, with eve allowed: fine. (The task file goes back to its bare
    // shape to be reopened: with frontmatter `status:` it would have the lifecycle, whose
    // way back to done goes through testing and `spur task check --as done`.)
    reconfigure(&project, config(&team.eve.path, "eve@example.com"));
    add_task(&project, "0002");
    project
        .args(["task", "update", "0002", "in-progress"])
        .run()
        .success();
    certified(&project, "0002");
    claim_done(&project, "0002");
    let (_, json) = verify_certs_json(&project, &[]);
    assert_eq!(failures(&json)[1], ("0002".to_owned(), "ok".to_owned()));
}

/// Signing that fails never un-certifies: the task is done, the certificate is reported as
/// not written with the command that gets it, and that command works once the key does.
#[test]
fn a_failed_signature_leaves_the_task_done_and_says_how_to_get_the_certificate() {
    let team = team();
    let project = project(&team);
    add_task(&project, "0001");
    reconfigure(
        &project,
        config(Path::new("/nonexistent/key"), "ada@example.com"),
    );
    pass(&project, "0001");
    let (code, json, stderr) = certify(&project, "0001", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["status"], "done");
    assert_eq!(json["certificate"]["status"], "failed");
    assert_eq!(json["certificate"]["code"], "spur::cert::sign-failed");
    assert_eq!(
        json["certificate"]["retry"],
        "spur task update 0001 in-progress && spur task certify 0001"
    );
    assert!(stderr.contains("spur::cert::sign-failed"), "{stderr}");
    assert!(
        stderr.contains("task 0001 is done (recorded in its ledger)"),
        "{stderr}"
    );
    assert!(!project.exists(&format!("{CERTS}/0001.json")));
    let show = project
        .args(["task", "show", "0001", "--json"])
        .run()
        .stdout_json();
    assert_eq!(show["status"], "done");

    // Fixed, and certified again.
    reconfigure(&project, config(&team.ada.path, "ada@example.com"));
    project
        .args(["task", "update", "0001", "in-progress"])
        .run()
        .success();
    let (code, json, _) = certify(&project, "0001", &[]);
    assert_eq!(
        (code, &json["certificate"]["status"]),
        (0, &"written".into()),
        "{json}"
    );
    claim_done(&project, "0001");
    assert_eq!(verify_certs(&project, &[]).0, 0);
}

/// A forced done gets a certificate that says so; CI accepts it only when told to.
#[test]
fn a_forced_done_is_certified_as_forced_and_accepted_only_with_accept_forced() {
    let team = team();
    let project = project(&team);
    add_task(&project, "0001");
    let (code, json, _) = certify(
        &project,
        "0001",
        &["--force-done", "--reason", "verified by hand: CI is down"],
    );
    assert_eq!(
        (code, json["reason"].as_str()),
        (0, Some("forced")),
        "{json}"
    );
    let file: Value = serde_json::from_str(&project.read(&format!("{CERTS}/0001.json"))).unwrap();
    assert_eq!(file["certificate"]["gate"]["reason"], "forced");
    assert_eq!(
        file["certificate"]["gate"]["forceReason"],
        "verified by hand: CI is down"
    );
    assert!(file["certificate"]["gate"]["auditHash"].is_string());
    assert!(file["certificate"]["tree"].is_null());
    claim_done(&project, "0001");
    let (code, stdout, _) = verify_certs(&project, &[]);
    assert_eq!(code, 1);
    assert!(stdout.contains("[spur::cert::not-accepted]"), "{stdout}");
    assert!(stdout.contains("--accept forced"), "{stdout}");
    let (code, stdout, _) = verify_certs(&project, &["--accept", "forced"]);
    assert_eq!(code, 0, "{stdout}");
}

/// Certificates are opt-in: without `enabled: true` none is written and none is reported.
#[test]
fn a_project_that_does_not_opt_in_gets_no_certificate() {
    let project = Spur::new();
    add_task(&project, "0001");
    pass(&project, "0001");
    let (code, json, _) = certify(&project, "0001", &[]);
    assert_eq!((code, json["decision"].as_str()), (0, Some("allow")));
    assert!(json.get("certificate").is_none(), "{json}");
    assert!(!project.exists(CERTS));
}

/// With no signing settings of its own, spur signs as git does: `user.signingkey` when
/// `gpg.format` is `ssh`, as `user.email`.
#[test]
fn without_a_configured_key_spur_signs_with_gits_ssh_signing_settings() {
    let team = team();
    let project = Spur::new()
        .file(
            ".spur/config.yaml",
            "doneGate:\n  certificates:\n    enabled: true\n",
        )
        .file(SIGNERS, format!("ada@example.com {}\n", team.ada.public));
    add_task(&project, "0001");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(project.path())
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    pass(&project, "0001");
    // No key anywhere yet.
    let (code, json, stderr) = certify(&project, "0001", &[]);
    assert_eq!(code, 0);
    assert_eq!(
        json["certificate"]["code"], "spur::cert::no-signing-key",
        "{stderr}"
    );
    git(&["config", "gpg.format", "ssh"]);
    git(&["config", "user.signingkey", team.ada.path.to_str().unwrap()]);
    git(&["config", "user.email", "ada@example.com"]);
    project
        .args(["task", "update", "0001", "in-progress"])
        .run()
        .success();
    let (_, json, stderr) = certify(&project, "0001", &[]);
    assert_eq!(json["certificate"]["status"], "written", "{json} {stderr}");
    claim_done(&project, "0001");
    assert_eq!(verify_certs(&project, &[]).0, 0);
}

/// The check cannot be made without a usable `allowed_signers` file: exit 2, named.
#[test]
fn a_missing_or_broken_allowed_signers_file_is_bad_input() {
    let project = Spur::new();
    let (code, _, stderr) = verify_certs(&project, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("spur::cert::allowed-signers"), "{stderr}");
    assert!(
        stderr.contains("docs/tasks/.certs/allowed_signers: no such file"),
        "{stderr}"
    );
    project.file(SIGNERS, "# team\nada@example.com ssh-ed25519 AAAA\n");
    let (code, _, stderr) = verify_certs(&project, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("line 2: the public"), "{stderr}");
    // Another file, given on the command line.
    project.file("signers", "");
    let (code, stdout, _) = verify_certs(&project, &["--allowed-signers", "signers"]);
    assert_eq!(code, 0, "{stdout}");
}
