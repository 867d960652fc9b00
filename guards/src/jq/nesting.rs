//! A bound on how deeply a jq expression can nest, checked before jaq sees it. jaq's lexer,
//! parser and compiler recurse once per level of the syntax tree, so a hostile expression
//! (100,000 opening parentheses, or as many `|`) would overflow the stack of whoever compiles
//! it (`spur check`, a run starting). The scan is linear and recursion-free; it counts an
//! upper bound of the tree's depth: every opening bracket and string interpolation, every
//! operator character and every keyword that opens a nested term.

/// At most this many brackets open at once.
pub const MAX_BRACKET_NESTING: usize = 256;

/// At most this many operators, brackets and nesting keywords in one expression (an upper
/// bound of the depth of its syntax tree). Real filters use a few dozen.
pub const MAX_NESTING_TOKENS: usize = 2_000;

/// Why an expression is refused, and the byte offset where the bound was passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) message: String,
    pub(crate) offset: usize,
}

/// Keywords after which jaq parses a nested term.
const NESTING_KEYWORDS: [&str; 10] = [
    "if", "elif", "try", "reduce", "foreach", "def", "label", "as", "and", "or",
];

/// Check `expr` against both bounds; the number of nesting tokens it holds.
pub(crate) fn check(expr: &str) -> Result<usize, TooDeep> {
    // Each entry: a bracket of code (`(`, `[`, `{`) or an interpolation `\(` inside a string.
    let mut open: Vec<u8> = Vec::new();
    let mut tokens = 0usize;
    let mut in_string = false;
    let bytes = expr.as_bytes();
    let mut i = 0;
    let count = |at: usize, tokens: &mut usize| -> Result<(), TooDeep> {
        *tokens += 1;
        if *tokens > MAX_NESTING_TOKENS {
            return Err(TooDeep {
                message: format!(
                    "the expression is too complex: more than {MAX_NESTING_TOKENS} operators, \
                     brackets and keywords"
                ),
                offset: at,
            });
        }
        Ok(())
    };
    while let Some(&b) = bytes.get(i) {
        if in_string {
            match b {
                b'\\' if bytes.get(i + 1) == Some(&b'(') => {
                    open.push(b'"');
                    in_string = false;
                    count(i, &mut tokens)?;
                    i += 1;
                }
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'#' => {
                    // A comment runs to the end of the line.
                    while bytes.get(i).is_some_and(|&c| c != b'\n') {
                        i += 1;
                    }
                }
                b'(' | b'[' | b'{' => {
                    open.push(b);
                    count(i, &mut tokens)?;
                }
                // An interpolation closes back into its string.
                b')' | b']' | b'}' => in_string = open.pop() == Some(b'"'),
                b'|' | b',' | b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'<' | b'>' | b'!'
                | b'?' | b';' => count(i, &mut tokens)?,
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let start = i;
                    while bytes
                        .get(i + 1)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                    {
                        i += 1;
                    }
                    let word = expr.get(start..=i).unwrap_or("");
                    if NESTING_KEYWORDS.contains(&word) {
                        count(start, &mut tokens)?;
                    }
                }
                _ => {}
            }
        }
        if open.len() > MAX_BRACKET_NESTING {
            return Err(TooDeep {
                message: format!(
                    "the expression nests more than {MAX_BRACKET_NESTING} brackets deep"
                ),
                offset: i,
            });
        }
        i += 1;
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_filters_pass() {
        for expr in [
            ".verdict == \"PASS\" and ($vars.wbs | length) > 0",
            "reduce .[] as $x (0; . + $x)",
            r#""a \("b \(1 + 2)") c" | test("^a")"#,
            "# a comment ((((\n.a",
            "[.[] | select(.ok)] | length > 0",
        ] {
            assert!(check(expr).is_ok(), "{expr}");
        }
    }

    #[test]
    fn deep_brackets_are_refused_where_they_pass_the_bound() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let err = check(&deep).unwrap_err();
        assert_eq!(err.offset, MAX_BRACKET_NESTING);
        assert!(err.message.contains("nests more than 256"), "{err:?}");
        let interpolated = format!("{}1{}", "\"\\(".repeat(300), ")\"".repeat(300));
        assert!(check(&interpolated).is_err());
    }

    #[test]
    fn long_operator_chains_and_keyword_chains_are_refused() {
        let pipe = vec!["1"; 100_000].join("|");
        assert!(check(&pipe).unwrap_err().message.contains("too complex"));
        let neg = format!("{}1", "-".repeat(100_000));
        assert!(check(&neg).is_err());
        let tries = format!("{}1", "try ".repeat(100_000));
        assert!(check(&tries).is_err());
    }

    #[test]
    fn brackets_inside_strings_and_comments_do_not_count() {
        let in_string = format!("\"{}\"", "(".repeat(10_000));
        assert_eq!(check(&in_string), Ok(0));
    }
}
