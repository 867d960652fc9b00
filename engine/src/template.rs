//! Templates in option strings: `${vars.X}`, `${env.X}` and the built-ins `${workflow}`,
//! `${runId}`, `${task}`, `${state}`, `${node}`, `${iteration}`, `${run}`, `${runtime}`. Parsing splits a string into
//! literal text and placeholders, each with its span in the source file; the checker
//! verifies every name, the runner renders. A `$` not followed by `{` is literal text, so
//! shell variables (`$wbs`) stay shell text.

use std::fmt;

use crate::pipeline::scalar_span::ScalarSpan;
use crate::source::{Located, SourceFile, Span};

/// A parsed template string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pub(crate) segments: Vec<Segment>,
    /// The whole string value.
    pub(crate) span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Literal(String),
    /// `${vars.X}`: the name and the span of the whole placeholder.
    Var(Located<String>),
    /// `${env.X}`.
    Env(Located<String>),
    Builtin(Located<Builtin>),
}

/// The built-in names, the reference engine's runtime builtins (`RUNTIME_BUILTIN_KEYS`):
/// each is a bare name with no fields (`${task}`, not `${task.id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Builtin {
    /// The pipeline's `name`.
    Workflow,
    /// The run id.
    RunId,
    /// The pipeline's `name` again (the reference names the running definition `task`).
    Task,
    /// The current state's id.
    State,
    /// The current state's id again (`node` in the reference's other dialect).
    Node,
    /// Transitions taken so far.
    Iteration,
    /// The run id again.
    Run,
    /// The dialect the run executes: `state-machine`.
    Runtime,
}

impl Builtin {
    pub(crate) const ALL: [Builtin; 8] = [
        Self::Workflow,
        Self::RunId,
        Self::Task,
        Self::State,
        Self::Node,
        Self::Iteration,
        Self::Run,
        Self::Runtime,
    ];

    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Workflow => "workflow",
            Self::RunId => "runId",
            Self::Task => "task",
            Self::State => "state",
            Self::Node => "node",
            Self::Iteration => "iteration",
            Self::Run => "run",
            Self::Runtime => "runtime",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == s)
    }
}

/// Why a string is not a valid template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateError {
    pub(crate) kind: TemplateErrorKind,
    /// The offending placeholder (or the rest of the string for an unclosed one).
    pub(crate) span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateErrorKind {
    /// `${` with no closing `}`.
    Unclosed,
    /// `${}`.
    Empty,
    /// `${foo}` or `${foo.x}`: not a built-in nor `vars.`/`env.`.
    UnknownName(String),
    /// `${vars.}` or `${vars.a-b}`.
    InvalidName(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TemplateErrorKind::Unclosed => f.write_str("unclosed `${` in template"),
            TemplateErrorKind::Empty => f.write_str("empty placeholder `${}` in template"),
            TemplateErrorKind::UnknownName(name) => {
                write!(f, "unknown template name `${{{name}}}`")
            }
            TemplateErrorKind::InvalidName(name) => {
                write!(f, "invalid name in placeholder `${{{name}}}`")
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// `^[A-Za-z_][A-Za-z0-9_]*$`: a var or environment variable name.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Template {
    /// Parse a string; every placeholder span is the whole value's span.
    pub(crate) fn parse(value: &Located<String>) -> Result<Template, TemplateError> {
        Self::parse_with(value, ScalarSpan::new(value, None))
    }

    /// Parse a string read from `source`, with exact spans for placeholders.
    pub(crate) fn parse_in(
        value: &Located<String>,
        source: &SourceFile,
    ) -> Result<Template, TemplateError> {
        Self::parse_with(value, ScalarSpan::new(value, Some(source)))
    }

    fn parse_with(value: &Located<String>, map: ScalarSpan<'_>) -> Result<Template, TemplateError> {
        let text = value.value.as_str();
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest_start = 0;
        while let Some(found) = text.get(rest_start..).and_then(|r| r.find("${")) {
            let open = rest_start + found;
            literal.push_str(text.get(rest_start..open).unwrap_or(""));
            let Some(close) = text.get(open..).and_then(|r| r.find('}')).map(|i| open + i) else {
                return Err(TemplateError {
                    kind: TemplateErrorKind::Unclosed,
                    span: map.range(open, text.len()),
                });
            };
            let span = map.range(open, close + 1);
            let inner = text.get(open + 2..close).unwrap_or("").trim();
            let segment = placeholder(inner, span)?;
            if !literal.is_empty() {
                segments.push(Segment::Literal(std::mem::take(&mut literal)));
            }
            segments.push(segment);
            rest_start = close + 1;
        }
        literal.push_str(text.get(rest_start..).unwrap_or(""));
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Ok(Template {
            segments,
            span: value.span,
        })
    }

    /// True when the string has no placeholder.
    #[cfg(test)]
    pub(crate) fn is_literal(&self) -> bool {
        self.segments
            .iter()
            .all(|s| matches!(s, Segment::Literal(_)))
    }

    /// The `${vars.X}` placeholders.
    pub(crate) fn vars(&self) -> impl Iterator<Item = &Located<String>> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(v) => Some(v),
            _ => None,
        })
    }

    /// The `${env.X}` placeholders.
    pub(crate) fn envs(&self) -> impl Iterator<Item = &Located<String>> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Env(v) => Some(v),
            _ => None,
        })
    }
}

fn placeholder(inner: &str, span: Span) -> Result<Segment, TemplateError> {
    let err = |kind| Err(TemplateError { kind, span });
    if inner.is_empty() {
        return err(TemplateErrorKind::Empty);
    }
    if let Some(builtin) = Builtin::parse(inner) {
        return Ok(Segment::Builtin(Located::new(builtin, span)));
    }
    let (namespace, name) = match inner.split_once('.') {
        Some((ns @ ("vars" | "env"), name)) => (ns, name.trim()),
        _ => return err(TemplateErrorKind::UnknownName(inner.to_owned())),
    };
    if !is_identifier(name) {
        return err(TemplateErrorKind::InvalidName(inner.to_owned()));
    }
    let name = Located::new(name.to_owned(), span);
    Ok(if namespace == "vars" {
        Segment::Var(name)
    } else {
        Segment::Env(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Template, TemplateError> {
        let source = SourceFile::new("p.yaml", format!("k: {text}\n"));
        Template::parse_in(
            &Located::new(text.to_owned(), Span::new(3, text.len())),
            &source,
        )
    }

    #[test]
    fn splits_literals_vars_env_and_builtins_with_spans() {
        let t = parse("a ${vars.wbs} $x ${env.HOME}${runId}").unwrap();
        assert_eq!(
            t.segments,
            vec![
                Segment::Literal("a ".into()),
                Segment::Var(Located::new("wbs".into(), Span::new(5, 11))),
                Segment::Literal(" $x ".into()),
                Segment::Env(Located::new("HOME".into(), Span::new(20, 11))),
                Segment::Builtin(Located::new(Builtin::RunId, Span::new(31, 8))),
            ]
        );
    }

    #[test]
    fn dollar_without_brace_is_literal() {
        let t = parse("echo $wbs $ {").unwrap();
        assert!(t.is_literal());
    }

    #[test]
    fn rejects_unclosed_empty_and_unknown_placeholders() {
        assert_eq!(
            parse("x ${vars.a").unwrap_err().kind,
            TemplateErrorKind::Unclosed
        );
        assert_eq!(parse("${}").unwrap_err().kind, TemplateErrorKind::Empty);
        assert_eq!(
            parse("${featureId}").unwrap_err().kind,
            TemplateErrorKind::UnknownName("featureId".into())
        );
        assert_eq!(
            parse("${vars.a-b}").unwrap_err().kind,
            TemplateErrorKind::InvalidName("vars.a-b".into())
        );
    }

    #[test]
    fn identifiers_follow_the_var_name_rule() {
        assert!(is_identifier("_a1"));
        assert!(!is_identifier("1a"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("a-b"));
    }
}
