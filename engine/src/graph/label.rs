//! Edge labels: a guard in a few words (its kind, and the option that says what it tests — a
//! shell command, a jq expression, a path — on one line, cut to a readable length), ranked
//! by declaration order when a state has several transitions, since the first that passes
//! wins.

use super::TransitionGraph;
use crate::pipeline::{Guard, GuardKind, NestedGuard, NestedGuards, Options, Pipeline};
use crate::source::Located;

/// The label of transition `t` in a drawing: `[rank. ]guard`, where rank is its place among
/// its source state's transitions (only when there are several), an unconditional transition
/// reads `otherwise` after the first place (`always` in first place), and a shadowed one
/// ends with `(never taken)`. Plain text: each format escapes it.
pub(crate) fn transition_label(pipeline: &Pipeline, graph: &TransitionGraph, t: usize) -> String {
    let Some(transition) = pipeline.transitions.get(t) else {
        return String::new();
    };
    let guard = transition
        .guard
        .as_ref()
        .map(|g| GuardSummary::of(g).label())
        .unwrap_or_default();
    let siblings = graph
        .state_index(&transition.from.value)
        .map_or(&[] as &[usize], |s| graph.outgoing(s));
    let rank = siblings.iter().position(|&x| x == t);
    let mut label = match rank {
        Some(rank) if siblings.len() > 1 => {
            let guard = match guard.as_str() {
                "" if rank == 0 => "always",
                "" => "otherwise",
                text => text,
            };
            format!("{}. {guard}", rank + 1)
        }
        _ => guard,
    };
    if graph.is_shadowed(t) {
        label.push_str(" (never taken)");
    }
    label
}

/// Longest summary, in characters (the cut adds `…`).
pub(crate) const SUMMARY_CHARS: usize = 40;

/// What a guard tests, in short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GuardSummary {
    pub(crate) kind: String,
    /// One line of at most [`SUMMARY_CHARS`] characters; `None` when the kind says it all
    /// (`always`, `never`, `action-ok`, a plugin without options).
    pub(crate) summary: Option<String>,
}

impl GuardSummary {
    pub(crate) fn of(guard: &Guard) -> GuardSummary {
        GuardSummary {
            kind: guard.kind.value.name().to_owned(),
            summary: summarize(&guard.kind.value, &guard.options)
                .map(|text| shorten(&text, SUMMARY_CHARS))
                .filter(|text| !text.is_empty()),
        }
    }

    /// The edge label: `kind: summary`, or the kind alone. Empty for `always`, which is
    /// what an unguarded transition does too.
    pub(crate) fn label(&self) -> String {
        match (&self.summary, self.kind.as_str()) {
            (_, "always") => String::new(),
            (Some(summary), kind) => format!("{kind}: {summary}"),
            (None, kind) => kind.to_owned(),
        }
    }
}

/// The full (uncut) text that describes a guard of `kind` with `options` (as written).
fn summarize(kind: &GuardKind, options: &Options) -> Option<String> {
    let text = |value: Option<&Located<String>>| value.map(|s| s.value.clone());
    match kind {
        GuardKind::Always | GuardKind::Never | GuardKind::ActionOk => None,
        GuardKind::Shell(o) => text(o.command.written_str()),
        GuardKind::Jq(o) => {
            let expr = text(o.expr.as_ref())?;
            Some(match text(o.file.as_ref().and_then(|f| f.written_str())) {
                Some(file) => format!("{expr} ({file})"),
                None => expr,
            })
        }
        GuardKind::FileExists(o) => text(o.path.written_str()),
        GuardKind::All(o) | GuardKind::Any(o) | GuardKind::Not(o) => {
            let inner: Vec<String> = match &o.guards {
                NestedGuards::List(items) => items.iter().map(nested).collect(),
                NestedGuards::Single(single) => vec![nested(single)],
                NestedGuards::Invalid => Vec::new(),
            };
            Some(inner.join(", "))
        }
        // A plugin: its options as compact JSON tell the reader what it checks.
        GuardKind::Plugin(_) if options.entries.is_empty() => None,
        GuardKind::Plugin(_) => Some(options.to_json().to_string()),
    }
}

/// A guard nested in a combinator, as `kind` or `kind summary` (or `?` when malformed).
fn nested(guard: &NestedGuard) -> String {
    let NestedGuard::Guard(guard) = guard else {
        return "?".to_owned();
    };
    let kind = &guard.kind.value;
    let combinator = matches!(
        kind,
        GuardKind::All(_) | GuardKind::Any(_) | GuardKind::Not(_)
    );
    match summarize(kind, &guard.options) {
        Some(summary) if combinator => format!("{kind}({summary})"),
        Some(summary) => format!("{kind} {summary}"),
        None => kind.to_string(),
    }
}

/// Whitespace runs (newlines included) become one space; longer than `max` characters is cut
/// to `max - 1` characters and `…`.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::OptionValue;
    use crate::source::Span;

    fn s(text: &str) -> Located<String> {
        Located::new(text.to_owned(), Span::default())
    }

    fn options(entries: &[(&str, OptionValue)]) -> Options {
        Options {
            entries: entries.iter().map(|(k, v)| (s(k), v.clone())).collect(),
            span: Span::default(),
        }
    }

    fn string(text: &str) -> OptionValue {
        OptionValue::String(s(text))
    }

    fn guard(kind: &str, opts: Options) -> Guard {
        Guard::new(s(kind), opts, Span::default())
    }

    #[test]
    fn a_shell_guard_is_summarized_by_its_command_on_one_line() {
        let g = guard(
            "shell",
            options(&[("command", string("test \"$profile\"\n   = auto"))]),
        );
        let summary = GuardSummary::of(&g);
        assert_eq!(summary.summary.as_deref(), Some("test \"$profile\" = auto"));
        assert_eq!(summary.label(), "shell: test \"$profile\" = auto");
    }

    #[test]
    fn long_commands_are_cut_with_an_ellipsis() {
        let command =
            "test \"$(cat .spur/run/$__runId-feature-dev-precheck.status 2>/dev/null)\" = PASS";
        let g = guard("shell", options(&[("command", string(command))]));
        let summary = GuardSummary::of(&g).summary.unwrap();
        assert_eq!(summary.chars().count(), SUMMARY_CHARS);
        assert_eq!(summary, "test \"$(cat .spur/run/$__runId-feature-…");
    }

    #[test]
    fn a_jq_guard_shows_its_expression_and_file() {
        let g = guard(
            "jq",
            options(&[("expr", string(".ok")), ("file", string("r.json"))]),
        );
        assert_eq!(GuardSummary::of(&g).label(), "jq: .ok (r.json)");
    }

    #[test]
    fn always_has_an_empty_label_and_other_bare_kinds_show_the_kind() {
        assert_eq!(
            GuardSummary::of(&guard("always", Options::default())).label(),
            ""
        );
        let never = GuardSummary::of(&guard("never", Options::default()));
        assert_eq!(never.summary, None);
        assert_eq!(never.label(), "never");
    }

    #[test]
    fn combinators_list_their_guards() {
        let inner = OptionValue::Map(options(&[
            ("kind", string("file-exists")),
            (
                "options",
                OptionValue::Map(options(&[("path", string("a.txt"))])),
            ),
        ]));
        let always = OptionValue::Map(options(&[("kind", string("always"))]));
        let g = guard(
            "any",
            options(&[(
                "guards",
                OptionValue::List(vec![inner, always, string("x")], Span::default()),
            )]),
        );
        assert_eq!(
            GuardSummary::of(&g).label(),
            "any: file-exists a.txt, always, ?"
        );
    }

    #[test]
    fn nested_combinators_show_their_own_guards_in_parentheses() {
        let shell = OptionValue::Map(options(&[
            ("kind", string("shell")),
            (
                "options",
                OptionValue::Map(options(&[("command", string("make   test"))])),
            ),
        ]));
        let all = OptionValue::Map(options(&[
            ("kind", string("all")),
            (
                "options",
                OptionValue::Map(options(&[(
                    "guards",
                    OptionValue::List(vec![shell, string("x")], Span::default()),
                )])),
            ),
        ]));
        let g = guard(
            "not",
            options(&[("guards", OptionValue::List(vec![all], Span::default()))]),
        );
        assert_eq!(GuardSummary::of(&g).label(), "not: all(shell make test, ?)");
    }

    #[test]
    fn a_plugin_guard_shows_its_options_as_json() {
        let g = guard("ci-green", options(&[("branch", string("main"))]));
        assert_eq!(
            GuardSummary::of(&g).label(),
            "ci-green: {\"branch\":\"main\"}"
        );
        assert_eq!(
            GuardSummary::of(&guard("ci-green", Options::default())).label(),
            "ci-green"
        );
    }
}
