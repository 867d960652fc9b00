//! `spur jq`: the embedded jq through the binary, and the `jq` PATH shim.

use crate::common::Spur;

/// `spur jq ARGS…` fed `stdin`: (exit code, stdout, stderr).
fn run(project: &Spur, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = project.arg("jq").args(args).stdin(stdin).run();
    (
        out.exit_code().expect("exited"),
        out.stdout().to_owned(),
        out.stderr().to_owned(),
    )
}

#[test]
fn pretty_prints_by_default() {
    let project = Spur::new();
    let (code, stdout, _) = run(
        &project,
        &["."],
        r#"{"verdict":"PASS","rows":[1,{"a":null}]}"#,
    );
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout, @r#"
    {
      "verdict": "PASS",
      "rows": [
        1,
        {
          "a": null
        }
      ]
    }
    "#);
}

#[test]
fn compact_raw_sort_and_slurp_flags() {
    let project = Spur::new();
    let (_, compact, _) = run(&project, &["-c", ".rows"], r#"{"rows":[1, {"a": 2}]}"#);
    assert_eq!(compact, "[1,{\"a\":2}]\n");
    let (_, raw, _) = run(&project, &["-r", ".[]"], r#"["line one", "two"]"#);
    assert_eq!(raw, "line one\ntwo\n");
    let (_, sorted, _) = run(&project, &["-S", "-c", "."], r#"{"b":1,"a":2}"#);
    assert_eq!(sorted, "{\"a\":2,\"b\":1}\n");
    let (_, slurped, _) = run(&project, &["-sc", "."], "1 2\n3");
    assert_eq!(slurped, "[1,2,3]\n");
    let (_, joined, _) = run(&project, &["-j", ".[]"], r#"["a", "b"]"#);
    assert_eq!(joined, "ab");
}

#[test]
fn binds_arg_and_argjson_and_reads_files() {
    let project = Spur::new();
    project
        .file("a.json", r#"{"n": 1}"#)
        .file("b.json", r#"{"n": 2}"#);
    let (code, stdout, _) = run(
        &project,
        &[
            "-c",
            "--arg",
            "who",
            "me",
            "--argjson",
            "cfg",
            r#"{"x":[1]}"#,
            "{n: .n, who: $who, cfg: $cfg, named: $ARGS.named}",
            "a.json",
            "b.json",
        ],
        "",
    );
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout, @r#"
    {"n":1,"who":"me","cfg":{"x":[1]},"named":{"who":"me","cfg":{"x":[1]}}}
    {"n":2,"who":"me","cfg":{"x":[1]},"named":{"who":"me","cfg":{"x":[1]}}}
    "#);
}

#[test]
fn null_input_reads_the_stream_only_through_inputs() {
    let project = Spur::new();
    let (_, stdout, _) = run(&project, &["-nc", "[inputs | . * 10]"], "1 2 3");
    assert_eq!(stdout, "[10,20,30]\n");
    let (_, stdout, _) = run(&project, &["-n", "1 + 1"], "");
    assert_eq!(stdout, "2\n");
}

#[test]
fn exit_status_flag_follows_jq() {
    let project = Spur::new();
    assert_eq!(run(&project, &["-e", ".ok"], r#"{"ok": true}"#).0, 0);
    assert_eq!(run(&project, &["-e", ".ok"], r#"{"ok": false}"#).0, 1);
    assert_eq!(run(&project, &["-e", ".ok"], r#"{}"#).0, 1);
    assert_eq!(run(&project, &["-e", "empty"], r#"{}"#).0, 4);
    // Without -e a false output is still success.
    assert_eq!(run(&project, &[".ok"], r#"{"ok": false}"#).0, 0);
}

#[test]
fn a_filter_that_does_not_compile_exits_3_pointing_into_the_filter() {
    let project = Spur::new();
    let (code, stdout, stderr) = run(&project, &[".verdict | frobnicate"], "{}");
    assert_eq!(code, 3);
    assert_eq!(stdout, "");
    insta::assert_snapshot!(stderr, @r"
    spur::jq::compile

      × jq filter does not compile: undefined filter `frobnicate`
       ╭─[filter:1:12]
     1 │ .verdict | frobnicate
       ·            ─────┬────
       ·                 ╰── undefined filter `frobnicate`
       ╰────
      help: see the jq manual for the filter language: https://jqlang.org/manual/
    ");
}

#[test]
fn a_syntax_error_points_at_the_unexpected_token() {
    let project = Spur::new();
    let (code, _, stderr) = run(&project, &[".a == "], "{}");
    assert_eq!(code, 3);
    insta::assert_snapshot!(stderr, @r"
    spur::jq::compile

      × jq filter does not compile: expected term, found end of input
       ╭─[filter:1:6]
     1 │ .a == 
       ·      ┬
       ·      ╰── expected term, found end of input
       ╰────
      help: see the jq manual for the filter language: https://jqlang.org/manual/
    ");
}

#[test]
fn a_runtime_error_exits_5_after_earlier_outputs() {
    let project = Spur::new();
    let (code, stdout, stderr) = run(&project, &[".[] | .a"], r#"[{"a": 1}, 2]"#);
    assert_eq!(code, 5);
    assert_eq!(stdout, "1\n");
    insta::assert_snapshot!(stderr, @r#"
    spur::jq::runtime

      × jq error: cannot index 2 with "a"
    "#);
}

#[test]
fn bad_input_and_bad_arguments_are_usage_errors() {
    let project = Spur::new();
    let (code, _, stderr) = run(&project, &["."], "{\"a\": ");
    assert_eq!(code, 2);
    assert!(stderr.contains("spur::jq::input"), "{stderr}");
    assert!(stderr.contains("<stdin>: not valid JSON"), "{stderr}");

    let (code, _, stderr) = run(&project, &[".", "missing.json"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read missing.json"), "{stderr}");

    let (code, _, stderr) = run(&project, &["-n", "--argjson", "x", "{nope", "$x"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("--argjson x: not valid JSON"), "{stderr}");

    assert_eq!(run(&project, &[], "").0, 2);
}

#[test]
fn halt_error_exits_with_its_own_code() {
    let project = Spur::new();
    let (code, _, stderr) = run(&project, &["-n", r#""stop\n" | halt_error(7)"#], "");
    assert_eq!(code, 7);
    assert_eq!(stderr, "stop\n");
}

#[cfg(unix)]
#[test]
fn the_binary_is_jq_when_called_jq_so_shell_steps_can_use_it() {
    let project = Spur::new();
    let shim = project.join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let spur = crate::common::bin();
    std::os::unix::fs::symlink(&spur, shim.join("jq")).unwrap();
    project.file("verdict.json", r#"{"verdict": "PASS"}"#);
    // The shell guard form the checker suggests rewriting, run against the shim.
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"test "$(jq -r .verdict verdict.json)" = PASS && command -v jq"#)
        .current_dir(project.path())
        .env("PATH", format!("{}:/usr/bin:/bin", shim.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let found = String::from_utf8(output.stdout).unwrap();
    assert_eq!(found.trim(), shim.join("jq").display().to_string());
}
