use crate::common::Project;

#[test]
fn prints_bash_completions_naming_the_binary() {
    let project = Project::new();
    let output = project
        .spur()
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("_spur()"), "{text}");
}

#[test]
fn rejects_an_unknown_shell_with_usage_exit() {
    let project = Project::new();
    project
        .spur()
        .args(["completions", "tcsh-nope"])
        .assert()
        .code(2);
}
