use super::*;

/// `text` with each `@` taken out as a hole.
fn holes(text: &str) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut at = Vec::new();
    for c in text.chars() {
        if c == '@' {
            at.push(out.len());
        } else {
            out.push(c);
        }
    }
    (out, at)
}

fn places(text: &str) -> Vec<Placement> {
    let (text, at) = holes(text);
    place(&text, &at)
}

fn one(text: &str) -> Placement {
    let all = places(text);
    assert_eq!(all.len(), 1, "{text}");
    all.into_iter().next().unwrap()
}

fn refused(text: &str) -> Refusal {
    match one(text) {
        Err(r) => r,
        Ok(p) => panic!("{text:?} placed as {p:?}"),
    }
}

fn rendered(text: &str) -> String {
    let (text, at) = holes(text);
    let refs: Vec<(usize, &str)> = at.iter().map(|&h| (h, "N")).collect();
    render(&text, &refs).unwrap()
}

#[test]
fn places_code_quotes_comments_and_here_documents() {
    assert_eq!(one("echo @"), Ok(Place::Code));
    assert_eq!(one("echo pre@post"), Ok(Place::Code));
    assert_eq!(one("@ --flag"), Ok(Place::Code));
    assert_eq!(one("echo \"a @ b\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("echo 'a @ b'"), Ok(Place::SingleQuoted));
    assert_eq!(one("echo \"it's @\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("echo \\' @"), Ok(Place::Code));
    assert_eq!(one("echo \"\\\" @\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("true # @"), Ok(Place::Comment));
    assert_eq!(one("true # c\necho @"), Ok(Place::Code));
    assert_eq!(one("echo a#@"), Ok(Place::Code));
    assert_eq!(one("echo $# @"), Ok(Place::Code));
    assert_eq!(one("cat <<EOF\nhi @\nEOF\n"), Ok(Place::HereDoc));
    assert_eq!(
        places("cat <<-EOF\n\thi @\n\tEOF\necho '@'"),
        vec![Ok(Place::HereDoc), Ok(Place::SingleQuoted)]
    );
    assert_eq!(one("cat <<EOF\nhi\nEOF\necho @"), Ok(Place::Code));
    assert_eq!(one("cat <<EOF; echo @\nbody\nEOF"), Ok(Place::Code));
    assert_eq!(one("x=@ y"), Ok(Place::Code));
    assert_eq!(one("echo > @"), Ok(Place::Code));
}

#[test]
fn command_substitution_is_code_even_inside_double_quotes() {
    assert_eq!(one("echo \"$(printf %s @)\""), Ok(Place::Code));
    assert_eq!(one("echo \"$(printf %s \"@\")\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("echo \"$(f (x)) @\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("echo \"$(echo \")\") @\""), Ok(Place::DoubleQuoted));
    // The vector: a `case` pattern's `)` does not end the substitution.
    assert_eq!(
        one("echo \"$(case a in a) echo @;; esac)\""),
        Ok(Place::Code)
    );
    assert_eq!(
        one("echo \"$(case a in (a) echo x;; esac) @\""),
        Ok(Place::DoubleQuoted)
    );
}

#[test]
fn case_patterns_are_code() {
    assert_eq!(
        places("case @ in @|b) echo @;; (c) echo \"@\";; esac; echo @"),
        vec![
            Ok(Place::Code),
            Ok(Place::Code),
            Ok(Place::Code),
            Ok(Place::DoubleQuoted),
            Ok(Place::Code)
        ]
    );
}

#[test]
fn refuses_what_it_cannot_place_with_certainty() {
    assert_eq!(refused("echo \\@"), Refusal::AfterBackslash);
    assert_eq!(refused("echo \"\\@\""), Refusal::AfterBackslash);
    assert_eq!(refused("echo $@"), Refusal::AfterDollar);
    assert_eq!(refused("echo \"$@\""), Refusal::AfterDollar);
    assert_eq!(refused("echo $'@'"), Refusal::DollarSingleQuote);
    assert_eq!(refused("echo $\"@\""), Refusal::DollarDoubleQuote);
    assert_eq!(refused("echo $((1 + @))"), Refusal::Arithmetic);
    assert_eq!(refused("echo \"$((@))\""), Refusal::Arithmetic);
    assert_eq!(refused("((x = @))"), Refusal::Arithmetic);
    assert_eq!(refused("echo $[@]"), Refusal::Arithmetic);
    assert_eq!(refused("[[ @ -eq 1 ]]"), Refusal::BashConditional);
    assert_eq!(refused("echo ${x:-@}"), Refusal::ParameterExpansion);
    assert_eq!(refused("echo \"${x#@}\""), Refusal::ParameterExpansion);
    assert_eq!(refused("echo `echo @`"), Refusal::Backquote);
    assert_eq!(refused("echo \"`echo @`\""), Refusal::Backquote);
    assert_eq!(refused("cat <<'EOF'\n@\nEOF"), Refusal::QuotedHereDoc);
    assert_eq!(refused("cat <<\\EOF\n@\nEOF"), Refusal::QuotedHereDoc);
    assert_eq!(refused("cat <<E@\nx\nE"), Refusal::HereDocDelimiter);
    assert_eq!(refused("a[@]=1"), Refusal::Subscript);
    assert_eq!(refused("cat <<EOF\n\\@\nEOF"), Refusal::AfterBackslash);
    assert_eq!(refused("echo \"@"), Refusal::Unterminated);
    assert_eq!(refused("echo $(echo @"), Refusal::Unterminated);
}

#[test]
fn refuses_arguments_of_commands_that_run_them() {
    for text in [
        "eval @",
        "eval \"echo @\"",
        "trap 'echo @' EXIT",
        ". @",
        "let x=@",
        "read @",
        "export @=1",
        "local -i n=@",
        "printf -v @ %s x",
        "test -v @",
        "[ -v @ ]",
        "sh -c @",
        "bash -ec \"echo @\"",
        "command eval @",
    ] {
        assert!(
            matches!(refused(text), Refusal::CommandArgument { .. }),
            "{text}"
        );
    }
    // Values, not names or scripts: fine.
    assert_eq!(one("export X=@"), Ok(Place::Code));
    assert_eq!(one("local x=\"@\""), Ok(Place::DoubleQuoted));
    assert_eq!(one("printf '%s\\n' @"), Ok(Place::Code));
    assert_eq!(one("test @ = yes"), Ok(Place::Code));
    assert_eq!(one("sh -c 'echo \"$1\"' sh @"), Ok(Place::Code));
    assert_eq!(one("read -r line < @"), Ok(Place::Code));
    assert_eq!(one("echo eval @"), Ok(Place::Code));
}

#[test]
fn stops_after_constructs_dash_and_bash_read_differently() {
    for text in [
        "echo $'a\\'b' @",
        "cat <<EOF\n$(echo\nEOF\n)\nEOF\necho @",
        "cat <<EOF\n`x`\nEOF\necho @",
        "cat <<EOF\na\\\nEOF\nEOF\necho @",
        "cat <<< x; echo @",
        "echo a &> f; echo @",
        "alias e=eval\ne @",
        "echo \"${x:-'}'}\" @",
        "echo $((1 + $(echo 2))) @",
        "x=$(cat <<EOF\nEOF\n) @",
    ] {
        assert!(matches!(refused(text), Refusal::After(_)), "{text}");
    }
}

#[test]
fn a_hole_never_joins_the_bytes_around_it() {
    // `<` hole `<` is two redirections, not a here-document.
    assert_eq!(one("cat <@< x"), Ok(Place::Code));
    // A word with a hole is never a reserved word.
    assert_eq!(one("[@[ x ]]"), Ok(Place::Code));
    // A line with a hole never ends a here-document.
    assert_eq!(
        places("cat <<EOF\nEOF@\n@\nEOF\necho @"),
        vec![Ok(Place::HereDoc), Ok(Place::HereDoc), Ok(Place::Code)]
    );
}

#[test]
fn renders_references_quoted_for_their_place() {
    assert_eq!(rendered("echo @"), "echo \"${N}\"");
    assert_eq!(rendered("echo \"a @\""), "echo \"a ${N}\"");
    assert_eq!(rendered("echo 'a @ b'"), "echo 'a '\"${N}\"' b'");
    assert_eq!(rendered("cat <<EOF\n@\nEOF"), "cat <<EOF\n${N}\nEOF");
    assert_eq!(rendered("true # @"), "true # \"${N}\"");
    assert_eq!(rendered("@@"), "\"${N}\"\"${N}\"");
}

#[test]
fn render_refuses_bad_offsets_and_names() {
    assert_eq!(
        render("echo", &[(9, "N")]),
        Err(Refused {
            index: 0,
            refusal: Refusal::BadRange
        })
    );
    assert_eq!(
        render("é", &[(1, "N")]),
        Err(Refused {
            index: 0,
            refusal: Refusal::BadRange
        })
    );
    assert_eq!(
        render("echo ", &[(5, "a-b")]),
        Err(Refused {
            index: 0,
            refusal: Refusal::BadRange
        })
    );
    let refused = render("echo `@` ", &[(0, "A"), (6, "B")]).unwrap_err();
    assert_eq!(refused.index, 1);
}

#[test]
fn hostile_text_never_overflows_the_stack() {
    let deep = "$(".repeat(10_000);
    assert!(place(&deep, &[deep.len()])[0].is_err());
    let deep = "\"$(".repeat(10_000);
    assert!(place(&deep, &[deep.len()])[0].is_err());
    let deep = "${".repeat(10_000);
    assert!(place(&deep, &[deep.len()])[0].is_err());
}

/// A hole at the depth bound: the `"` its reference would open is one level past it, so
/// the second reading could never confirm it. It is refused as too deep, never rendered
/// and then found `Unconfirmed` (the fuzz target found such a text).
#[test]
fn a_hole_at_the_depth_bound_is_too_deep() {
    for depth in 60..70 {
        let text = format!("{}@{}", "$(".repeat(depth), ")".repeat(depth));
        let (plain, at) = holes(&text);
        let refs: Vec<(usize, &str)> = at.iter().map(|&h| (h, "N")).collect();
        match render(&plain, &refs) {
            Ok(out) => assert!(depth < 64, "rendered at depth {depth}: {out}"),
            Err(r) => {
                assert_ne!(r.refusal, Refusal::Unconfirmed, "depth {depth}");
                assert!(depth >= 64, "refused at depth {depth}: {:?}", r.refusal);
            }
        }
    }
    assert_eq!(
        refused(&format!("{}@{}", "$(".repeat(64), ")".repeat(64))),
        Refusal::TooDeep
    );
    // Inside a double quote the reference adds no quote: the same depth is still placed.
    let quoted = format!("{}\"@\"{}", "$(".repeat(63), ")".repeat(63));
    assert_eq!(one(&quoted), Ok(Place::DoubleQuoted));
}
