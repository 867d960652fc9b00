//! The pipeline's YAML document: parsed into a node tree under budgets (against alias bombs
//! and deep nesting), and every way that fails — syntax, a budget, a second document, an
//! empty file, a root that is not a mapping — as one [`LoadFailure`] pointing at the place.

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::load_failure::LoadFailure;
use crate::source::{SourceFile, Span};
use crate::yaml::{self, Node, NodeValue, ParseError};

/// Most YAML nodes (scalars, lists, mappings) in one pipeline.
pub(crate) const MAX_NODES: usize = 200_000;
/// Deepest nesting of lists and mappings.
pub(crate) const MAX_DEPTH: usize = 48;
/// Most aliases (`*name`) in one pipeline; each expansion is also bounded.
pub(crate) const MAX_ALIASES: usize = 1_000;

/// Parse the pipeline's YAML document into a node tree whose root is a mapping.
pub(crate) fn parse_document(source: &SourceFile) -> Result<Node, LoadFailure> {
    let text = source.text();
    if text.trim().is_empty() {
        return Err(empty(source));
    }
    let limits = yaml::Limits {
        max_nodes: MAX_NODES,
        max_depth: MAX_DEPTH,
        max_aliases: MAX_ALIASES,
    };
    let node = match yaml::parse(text, limits) {
        Ok(Some(node)) => node,
        Ok(None) => return Err(empty(source)),
        Err(e) => return Err(yaml_error(source, e)),
    };
    match node.value {
        NodeValue::Map(_) => Ok(node),
        NodeValue::Null => Err(empty(source)),
        ref other => Err(LoadFailure::invalid(
            Diagnostic::error(
                Code::LoadNotAMapping,
                source,
                Span::new(node.span.offset, first_line_len(text, node.span.offset)),
                format!("a pipeline must be a YAML mapping, but this file is {}", other.type_name()),
            )
            .label("the document starts here")
            .help("a pipeline starts with keys such as `name:`, `initialState:`, `states:` and `transitions:`"),
        )),
    }
}

fn empty(source: &SourceFile) -> LoadFailure {
    LoadFailure::Unreadable {
        code: Code::LoadEmpty,
        path: source.path().to_owned(),
        message: "the pipeline file is empty".into(),
        help: Some(
            "a pipeline needs at least `name`, `initialState`, `states` and `transitions`".into(),
        ),
    }
}

fn first_line_len(text: &str, offset: usize) -> usize {
    text.get(offset..)
        .and_then(|rest| rest.lines().next())
        .map_or(0, str::len)
}

fn yaml_error(source: &SourceFile, err: ParseError) -> LoadFailure {
    let limits = format!(
        "spur loads at most {MAX_NODES} YAML nodes, {MAX_DEPTH} levels of nesting and \
         {MAX_ALIASES} aliases; a real pipeline is far below these limits"
    );
    let (code, message, label, help, span) = match err {
        ParseError::MultipleDocuments { span } => (
            Code::LoadMultipleDocuments,
            "a pipeline file holds one YAML document, this one has several".to_owned(),
            "a second document starts here",
            "remove the `---` separator and keep one pipeline per file".to_owned(),
            span,
        ),
        ParseError::TooDeep { span } => (
            Code::LoadTooComplex,
            format!("the pipeline is nested more than {MAX_DEPTH} levels deep"),
            "limit reached here",
            limits,
            span,
        ),
        ParseError::TooLarge { span } => (
            Code::LoadTooComplex,
            "the pipeline is too large: it expands to too many YAML nodes or aliases (an alias bomb?)"
                .to_owned(),
            "limit reached here",
            limits,
            span,
        ),
        ParseError::UnknownAnchor { name, span } => (
            Code::LoadYaml,
            format!("invalid YAML: alias `*{name}` names no anchor"),
            "unknown alias",
            "define the anchor (`&name`) before its aliases".to_owned(),
            span,
        ),
        ParseError::Syntax { message, span } => (
            Code::LoadYaml,
            format!("invalid YAML: {message}"),
            "here",
            "fix the YAML syntax; `spur check` reads the file once it parses".to_owned(),
            span,
        ),
    };
    let span = clamp(source, span);
    // A snippet of a huge line (e.g. 100,000 `[`) helps nobody: name the place instead.
    let line_len = {
        let text = source.text();
        let start = text
            .get(..span.offset)
            .and_then(|b| b.rfind('\n'))
            .map_or(0, |i| i + 1);
        text.get(start..)
            .and_then(|rest| rest.lines().next())
            .map_or(0, str::len)
    };
    if line_len > MAX_SNIPPET_LINE {
        let (line, column) = source.line_column(span.offset);
        return LoadFailure::Unreadable {
            code,
            path: source.path().to_owned(),
            message: format!("{message} (line {line}, column {column})"),
            help: Some(help),
        };
    }
    LoadFailure::invalid(
        Diagnostic::error(code, source, span, message)
            .label(label)
            .help(help),
    )
}

/// Longest source line shown in a load error's snippet.
const MAX_SNIPPET_LINE: usize = 240;

fn clamp(source: &SourceFile, span: Span) -> Span {
    let len = source.text().len();
    let offset = span.offset.min(len);
    Span::new(offset, span.len.min(len - offset))
}
