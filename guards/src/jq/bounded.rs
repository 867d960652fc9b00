//! The bounded fragment of jq: filters whose evaluation cannot run long, allocate much or
//! recurse deeply, so spur evaluates them in its own process instead of in the jq worker
//! (`super::sandbox`), which exists to contain the filters that can.
//!
//! A filter is in the fragment when it is small (at most [`MAX_FRAGMENT_TOKENS`] tokens)
//! and built only from:
//! - `.`, number and plain string literals (no interpolation, no `@format`), the run's
//!   variables (`$name` of those bound at compile time);
//! - paths that index by a literal key or number (`.a`, `.a.b?`, `.[0]`, `.["k"]`), never
//!   iterate or slice (`.[]`, `.[1:]`, `..`);
//! - comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`), `and`, `or`, `//`, unary `-`,
//!   `if … then … elif … else … end`, and `l | r` without a binding;
//! - calls of `not`, `length`, `type`, `true`, `false`, `null`, `empty`, `select(f)`,
//!   `has(f)`, `startswith(f)`, `endswith(f)` with arguments in the fragment.
//!
//! Why that is bounded: no term produces more than one output (no `,`, no iteration), and
//! every output is a part of the input or of a literal, a boolean, a number or a type name —
//! nothing builds a value (no arithmetic, arrays, objects or interpolation), so a pipe cannot
//! grow one. Evaluation is therefore one pass over the syntax tree whose steps each cost at
//! most the size of the input (a comparison of two values, `startswith`), and recursion is
//! at most the tree's depth plus the input's nesting, which the caller bounds
//! ([`MAX_IN_PROCESS_DEPTH`]). Anything else — `reduce`, `def`, `..`, `range`, `[…]`,
//! `+`, `limit`, `until`, a parse it does not recognise — goes to the worker.

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::load::{Lexer, Parser};
use jaq_core::path::Part;
use serde_json::Value;

/// The largest filter, in tokens, that may be in the fragment.
pub(crate) const MAX_FRAGMENT_TOKENS: usize = 64;

/// The deepest an input (or a variable's value) may nest for an in-process evaluation;
/// deeper ones go to the worker. serde_json refuses deeper text by default (128).
pub(crate) const MAX_IN_PROCESS_DEPTH: usize = 128;

/// Whether `expr`, with `var_names` bound (without `$`), is in the bounded fragment.
pub(crate) fn is_bounded(expr: &str, var_names: &[String]) -> bool {
    let Ok(tokens) = Lexer::new(expr).lex() else {
        return false;
    };
    if count_tokens(expr) > MAX_FRAGMENT_TOKENS {
        return false;
    }
    let Ok(term) = Parser::new(&tokens).parse(|p| p.term()) else {
        return false;
    };
    Fragment { var_names }.term(&term)
}

/// Whether `value` nests at most [`MAX_IN_PROCESS_DEPTH`] arrays and objects.
pub(crate) fn shallow(value: &Value) -> bool {
    let mut pending = vec![(value, 0usize)];
    while let Some((v, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        if depth + 1 > MAX_IN_PROCESS_DEPTH {
            return false;
        }
        pending.extend(children.map(|c| (c, depth + 1)));
    }
    true
}

/// A rough token count (words, numbers, strings and punctuation), enough to keep the
/// fragment to small filters: the nesting check bounds the rest.
fn count_tokens(expr: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in expr.chars() {
        let word = c.is_alphanumeric() || c == '_' || c == '$' || c == '"';
        if word {
            if !in_word {
                count += 1;
            }
        } else if !c.is_whitespace() {
            count += 1;
        }
        in_word = word;
    }
    count
}

struct Fragment<'v> {
    var_names: &'v [String],
}

impl Fragment<'_> {
    fn term(&self, term: &Term<&str>) -> bool {
        match term {
            Term::Id | Term::Num(_) => true,
            Term::Str(format, parts) => format.is_none() && plain(parts),
            Term::Var(name) => name
                .strip_prefix('$')
                .is_some_and(|n| self.var_names.iter().any(|v| v == n)),
            Term::Neg(inner) => self.term(inner),
            Term::BinOp(l, op, r) => self.binary(op) && self.term(l) && self.term(r),
            Term::IfThenElse(branches, otherwise) => {
                branches.iter().all(|(c, t)| self.term(c) && self.term(t))
                    && otherwise.as_deref().is_none_or(|t| self.term(t))
            }
            Term::Call(name, args) => self.call(name, args),
            Term::Path(head, path) => {
                self.term(head)
                    && path.0.iter().all(|(part, _optional)| match part {
                        Part::Index(key) => literal(key),
                        Part::Range(..) => false,
                    })
            }
            Term::Recurse
            | Term::Arr(_)
            | Term::Obj(_)
            | Term::Label(..)
            | Term::Break(_)
            | Term::Fold(..)
            | Term::TryCatch(..)
            | Term::Def(..) => false,
        }
    }

    fn binary(&self, op: &BinaryOp<&str>) -> bool {
        matches!(
            op,
            BinaryOp::Pipe(None) | BinaryOp::Alt | BinaryOp::Or | BinaryOp::And | BinaryOp::Cmp(_)
        )
    }

    fn call(&self, name: &str, args: &[Term<&str>]) -> bool {
        let arity_ok = match name {
            "not" | "length" | "type" | "true" | "false" | "null" | "empty" => args.is_empty(),
            "select" | "has" | "startswith" | "endswith" => args.len() == 1,
            _ => false,
        };
        arity_ok && args.iter().all(|a| self.term(a))
    }
}

/// A literal key or index: a number or a plain string.
fn literal(term: &Term<&str>) -> bool {
    match term {
        Term::Num(_) => true,
        Term::Str(None, parts) => plain(parts),
        _ => false,
    }
}

/// String parts without interpolation.
fn plain(parts: &[StrPart<&str, Term<&str>>]) -> bool {
    parts
        .iter()
        .all(|p| matches!(p, StrPart::Str(_) | StrPart::Char(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bounded(expr: &str) -> bool {
        is_bounded(expr, &["want".to_owned()])
    }

    #[test]
    fn comparisons_of_paths_and_literals_are_in_the_fragment() {
        for expr in [
            ".verdict == \"PASS\"",
            ".a.b? == 3 and (.c | length) > 0",
            ".[0] != null or .x // false",
            ".verdict == $want",
            "if .a then .b else .c end | not",
            ".[\"k\"] | type == \"string\"",
            "has(\"a\") and (.s | startswith(\"x\"))",
            "select(.ok) | .n >= -1",
            "true",
        ] {
            assert!(bounded(expr), "{expr} should be in the fragment");
        }
    }

    #[test]
    fn anything_that_iterates_builds_recurses_or_defines_is_not() {
        for expr in [
            "reduce range(100000) as $i ([]; [.])",
            "def f: f; f",
            "[.[]]",
            ".[] == 1",
            ".. == 1",
            ". + . | . + .",
            ".a, .b",
            "[.a] == [1]",
            "{a: 1} == .",
            ".[1:] == []",
            "\"\\(.a)\" == \"x\"",
            "@base64 \"x\" == .",
            "limit(3; repeat(.))",
            ".x as $y | $y",
            "$other == 1",
            "try error catch .",
            "label $out | break $out",
            "until(false; .)",
            "$__loc__",
            "input",
            "",
        ] {
            assert!(!bounded(expr), "{expr} should go to the worker");
        }
    }

    #[test]
    fn a_long_filter_is_not_in_the_fragment_even_if_every_part_is() {
        let long = [".a == 1"; 20].join(" and ");
        assert!(!bounded(&long));
        let short = [".a == 1"; 3].join(" and ");
        assert!(bounded(&short));
    }

    #[test]
    fn shallow_counts_nesting_without_recursion() {
        let mut deep = json!(1);
        for _ in 0..MAX_IN_PROCESS_DEPTH {
            deep = json!([deep]);
        }
        assert!(shallow(&deep));
        assert!(!shallow(&json!([deep])));
        assert!(shallow(&json!({"a": {"b": [1, 2]}})));
    }
}
