//! The project and the shell loop both verify benchmarks compare: 200 trivial gates
//! (`command: 'true'`) against the same 200 commands run one after another by `sh`.

use std::path::Path;
use std::process::Command;

use spur_engine::store::state_dir::StateDir;
use spur_engine::verify::{run_gates, VerifyRequest};

pub(crate) const GATES: usize = 200;

/// A project whose config has the 200 gates, all read-only or none.
pub(crate) fn project(read_only: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = String::from("verify:\n  gates:\n");
    for i in 0..GATES {
        config.push_str(&format!(
            "    g{i:03}: {{command: 'true', readOnly: {read_only}}}\n"
        ));
    }
    std::fs::create_dir_all(dir.path().join(".spur")).expect("state dir");
    std::fs::write(dir.path().join(".spur/config.yaml"), config).expect("config");
    dir
}

/// Run the project's gates; every one must pass.
pub(crate) fn verify(root: &Path) {
    // The key of its chains beside the project, never in the home of who benches.
    let state = StateDir::at(root.join(".spur"))
        .with_key_file(spur_engine::store::chain_key::KeyFile::at(root.join("key")))
        .with_protected_dir(root.join(".spur/protected"));
    let request = VerifyRequest::new(state);
    let outcome = run_gates(&request).expect("verify runs");
    assert!(outcome.passed && outcome.summary.pass == GATES);
}

/// Each run starts from the same ledger size, as a real run would.
pub(crate) fn forget_ledger(root: &Path) {
    let _ = std::fs::remove_file(root.join(".spur/run/_project-verdicts.jsonl"));
}

/// `sh` running `sh -c true` 200 times, one after another.
pub(crate) fn sh_loop() {
    let status = Command::new("sh")
        .args([
            "-c",
            "i=0; while [ $i -lt 200 ]; do sh -c true; i=$((i+1)); done",
        ])
        .status()
        .expect("sh");
    assert!(status.success());
}
