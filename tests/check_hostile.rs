//! Hostile pipeline files: each ends in one clear error and exit 2 — no panic, no hang, no
//! exhausted memory. The files are generated into the test's temp dir.

use crate::common::Spur;

/// Run `spur check FILE` on a generated file: (exit code, stderr, JSON findings).
fn check(name: &str, contents: &[u8]) -> (i32, String, serde_json::Value) {
    let project = Spur::new().file(name, contents);
    let human = project.args(["check", name]).run();
    let json = project.args(["check", "--format", "json", name]).run();
    assert_eq!(human.exit_code(), json.exit_code());
    let stderr = human.stderr().to_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (human.exit_code().unwrap(), stderr, json.stdout_json())
}

fn single_code(json: &serde_json::Value) -> &str {
    let findings = json.as_array().unwrap();
    assert_eq!(findings.len(), 1, "{json:#}");
    findings[0]["code"].as_str().unwrap()
}

#[test]
fn billion_laughs_is_rejected_as_too_complex() {
    let mut yaml = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names: Vec<char> = ('a'..='j').collect();
    for pair in names.windows(2) {
        let (prev, next) = (pair[0], pair[1]);
        let refs = vec![format!("*{prev}"); 9].join(",");
        yaml.push_str(&format!("{next}: &{next} [{refs}]\n"));
    }
    let (code, stderr, json) = check("bomb.yaml", yaml.as_bytes());
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::too-complex");
    insta::assert_snapshot!(stderr);
}

#[test]
fn deep_nesting_is_rejected_without_printing_the_line() {
    let (code, stderr, json) = check("nested.yaml", "[".repeat(100_000).as_bytes());
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::too-complex");
    assert!(stderr.len() < 1_000, "{stderr}");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_50_mib_file_is_rejected_before_it_is_read() {
    let mut big = b"name: big\ndescription: \"".to_vec();
    big.resize(50 * 1024 * 1024, b'x');
    big.extend_from_slice(b"\"\n");
    let (code, stderr, json) = check("big.yaml", &big);
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::too-large");
    insta::assert_snapshot!(stderr);
}

#[test]
fn invalid_utf8_names_the_offset() {
    let (code, stderr, json) = check("latin1.yaml", b"name: caf\xe9\n");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::not-utf8");
    insta::assert_snapshot!(stderr);
}

#[test]
fn an_empty_file_is_rejected() {
    let (code, stderr, json) = check("empty.yaml", b"");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::empty");
    insta::assert_snapshot!(stderr);
    let (code, _, json) = check("comments.yaml", b"# nothing here\n");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::empty");
}

#[test]
fn a_yaml_list_is_not_a_pipeline() {
    let (code, stderr, json) = check("list.yaml", b"- id: a\n- id: b\n");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::not-a-mapping");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_yaml_syntax_error_is_exit_2() {
    let (code, stderr, json) = check("syntax.yaml", b"name: a\nstates: [\n");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::yaml");
    insta::assert_snapshot!(stderr);
}

#[test]
fn several_documents_in_one_file_are_rejected() {
    let (code, _, json) = check("two.yaml", b"name: a\n---\nname: b\n");
    assert_eq!(code, 2);
    assert_eq!(single_code(&json), "spur::load::multiple-documents");
}
