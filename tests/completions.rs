//! `spur completions SHELL`.

use crate::common::Spur;

#[test]
fn prints_bash_completions_naming_the_binary() {
    Spur::new()
        .args(["completions", "bash"])
        .run()
        .success()
        .stdout_contains("_spur()");
}

#[test]
fn rejects_an_unknown_shell_with_usage_exit() {
    Spur::new().args(["completions", "tcsh-nope"]).run().code(2);
}
