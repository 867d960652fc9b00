use answer_parser::parse;

#[test]
fn reads_the_verdict_line() {
    assert_eq!(parse("Verdict: PASS\n").verdict, "PASS");
}

#[test]
fn reads_table_rows() {
    let answer = parse("| R1 | MET | a.rs:1 |\n");
    assert_eq!(answer.rows.len(), 1);
}

#[test]
fn lint_errors_name_their_row() {
    let answer = parse("| R9 | MET | a.rs:1 |\n");
    assert_eq!(answer.rows[0][1], "R9");
}

#[test]
fn interrupted_write_keeps_the_previous_file() {
    // the temp file is renamed only once it is complete
}

#[test]
fn quiet_mode_prints_nothing() {}
