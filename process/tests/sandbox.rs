//! The sandbox of children on this machine's kernel (Landlock): a confined child cannot
//! write beneath a protected path, even one inside a writable tree; it can write the rest
//! of the tree; a spec marked unconfined can write both. One test: the confinement is
//! once per process.

use std::path::PathBuf;

use spur_process::sandbox::{confine_children, Confinement, Unconfined};
use spur_process::{ProcessSpec, ProcessStatus};

#[test]
fn a_confined_child_cannot_write_beneath_a_protected_path_inside_a_writable_tree() {
    let tree = tempfile::tempdir().unwrap();
    let protected = tree.path().join("state/protected");
    std::fs::create_dir_all(&protected).unwrap();
    std::fs::create_dir_all(tree.path().join("state/other")).unwrap();
    std::fs::write(protected.join("ledger"), "spur's\n").unwrap();

    // A writable path inside a protected one cannot be granted.
    std::fs::create_dir_all(protected.join("inner")).unwrap();
    assert!(matches!(
        Confinement::new(&[protected.join("inner")], std::slice::from_ref(&protected)),
        Err(Unconfined::Overlap { .. })
    ));

    let writable: Vec<PathBuf> = vec![tree.path().to_path_buf(), PathBuf::from("/dev/null")];
    let confinement = Confinement::new(&writable, std::slice::from_ref(&protected))
        .expect("this machine's kernel must offer Landlock (Linux 5.13+, landlock in lsm=)");
    confine_children(confinement);
    // The spawner threads start with the first spawn of their kind, not before.
    assert_eq!(spawner_threads(), 0);

    let script = "echo forged >> state/protected/ledger; echo a=$?; \
                  echo new > state/protected/new; echo b=$?; \
                  echo ok > state/other/file; echo c=$?; \
                  echo ok > top; echo d=$?; echo quiet > /dev/null; echo e=$?";
    let out = ProcessSpec::shell(script).cwd(tree.path()).run();
    assert_eq!(out.status, ProcessStatus::Exited(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Beneath the protected path: refused. Around it, and in the tree's other entries:
    // allowed. The tree's root itself holds the protected path, so nothing new is made
    // directly in it.
    assert_eq!(
        stdout,
        "a=2\nb=2\nc=0\nd=2\ne=0\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"));
    assert_eq!(spawner_threads(), 1, "one plain spawn: one spawner thread");
    assert_eq!(
        std::fs::read_to_string(protected.join("ledger")).unwrap(),
        "spur's\n"
    );

    // spur's own nested call: unconfined.
    let out = ProcessSpec::shell("echo more >> state/protected/ledger")
        .cwd(tree.path())
        .unconfined()
        .run();
    assert_eq!(out.status, ProcessStatus::Exited(0));
    assert_eq!(
        std::fs::read_to_string(protected.join("ledger")).unwrap(),
        "spur's\nmore\n"
    );
}

/// This process's threads named like the sandbox's spawners.
fn spawner_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.unwrap().path().join("comm")).ok())
        .filter(|name| name.starts_with("spur-confined"))
        .count()
}
