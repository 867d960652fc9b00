//! The loader: pipeline text → typed [`Pipeline`] (DESIGN §2). Reading is bounded (file
//! size cap, YAML budgets against alias bombs and deep nesting), so hostile input ends in
//! one clear [`LoadFailure`], never a panic, hang or exhausted memory. Findings that still
//! let a model be built (unknown keys, wrong types, duplicate keys…) are collected as
//! diagnostics in [`Loaded`], all at once.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::pipeline::model::*;
use crate::pipeline::raw::{self, Node, NodeValue};
use crate::source::{Located, SourceFile, Span};
use crate::template::is_identifier;

/// Largest pipeline file spur reads: 8 MiB (the largest real pipeline is ~40 KiB).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Most YAML nodes (scalars, lists, mappings) in one pipeline.
pub const MAX_NODES: usize = 200_000;
/// Deepest nesting of lists and mappings.
pub const MAX_DEPTH: usize = 48;
/// Most aliases (`*name`) in one pipeline; each expansion is also bounded.
pub const MAX_ALIASES: usize = 1_000;

/// Top-level keys the loader accepts (kept in sync with `schema.json` by a test).
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "kind",
    "name",
    "version",
    "description",
    "initialState",
    "terminalStates",
    "failureStates",
    "iterationBound",
    "defaultOnError",
    "vars",
    "env",
    "states",
    "transitions",
];
pub const STATE_KEYS: &[&str] = &["id", "description", "pause", "onEnter", "onExit"];
pub const TRANSITION_KEYS: &[&str] = &[
    "from",
    "to",
    "description",
    "trigger",
    "guard",
    "terminalReason",
];
pub const ACTION_KEYS: &[&str] = &["kind", "options", "onError"];
pub const GUARD_KEYS: &[&str] = &["kind", "options"];
pub const ENV_KEYS: &[&str] = &["allow"];

/// A pipeline that was built, with the findings made while building it. The findings may
/// include errors (e.g. an unknown key): a pipeline is runnable only once checked.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub pipeline: Pipeline,
    pub diagnostics: Vec<Diagnostic>,
}

/// The file cannot be read or parsed at all (exit 2).
#[derive(Debug)]
pub enum LoadFailure {
    /// No source text to point at: I/O error, too large, not UTF-8.
    Unreadable {
        code: &'static str,
        path: PathBuf,
        message: String,
        help: Option<String>,
    },
    /// A finding with a span in the text: YAML syntax, budget exceeded, not a mapping…
    Invalid(Box<Diagnostic>),
}

impl LoadFailure {
    pub fn code(&self) -> &'static str {
        match self {
            LoadFailure::Unreadable { code, .. } => code,
            LoadFailure::Invalid(d) => d.code,
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            LoadFailure::Unreadable { path, .. } => path,
            LoadFailure::Invalid(d) => d.source().path(),
        }
    }

    pub fn help_text(&self) -> Option<&str> {
        match self {
            LoadFailure::Unreadable { help, .. } => help.as_deref(),
            LoadFailure::Invalid(d) => d.help.as_deref(),
        }
    }

    /// The JSON form, like a diagnostic's (line/column 0 when there is no text).
    pub fn to_json(&self) -> crate::diagnostic::JsonDiagnostic {
        match self {
            LoadFailure::Unreadable {
                code,
                path,
                message,
                help,
            } => crate::diagnostic::JsonDiagnostic {
                severity: crate::diagnostic::Severity::Error,
                code,
                message: message.clone(),
                file: path.display().to_string(),
                line: 0,
                column: 0,
                offset: 0,
                length: 0,
                help: help.clone(),
            },
            LoadFailure::Invalid(d) => d.to_json(),
        }
    }

    fn invalid(diagnostic: Diagnostic) -> Self {
        LoadFailure::Invalid(Box::new(diagnostic))
    }
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadFailure::Unreadable { path, message, .. } => {
                write!(f, "{}: {message}", path.display())
            }
            LoadFailure::Invalid(d) => fmt::Display::fmt(d, f),
        }
    }
}

impl std::error::Error for LoadFailure {}

impl miette::Diagnostic for LoadFailure {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            LoadFailure::Unreadable { help, .. } => {
                help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
            }
            LoadFailure::Invalid(d) => miette::Diagnostic::help(d.as_ref()),
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self {
            LoadFailure::Unreadable { .. } => None,
            LoadFailure::Invalid(d) => miette::Diagnostic::source_code(d.as_ref()),
        }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        match self {
            LoadFailure::Unreadable { .. } => None,
            LoadFailure::Invalid(d) => miette::Diagnostic::labels(d.as_ref()),
        }
    }
}

/// Read a pipeline file: at most [`MAX_FILE_BYTES`], valid UTF-8.
pub fn read_source(path: &Path) -> Result<SourceFile, LoadFailure> {
    let unreadable = |code, message: String, help: Option<&str>| LoadFailure::Unreadable {
        code,
        path: path.to_owned(),
        message,
        help: help.map(str::to_owned),
    };
    let io = |e: std::io::Error| {
        unreadable(
            "spur::load::unreadable",
            format!("cannot read the pipeline: {e}"),
            None,
        )
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(unreadable(
            "spur::load::unreadable",
            "cannot read the pipeline: it is a directory".into(),
            Some("pass a pipeline file (.yaml)"),
        ));
    }
    let too_large = |size: u64| {
        unreadable(
            "spur::load::too-large",
            format!(
                "the pipeline is too large ({size} bytes; the limit is {MAX_FILE_BYTES} bytes)"
            ),
            Some("a pipeline is a small YAML file; split it or check that this is the right file"),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    // The file may grow between stat and read: never read past the cap.
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = e.as_bytes().get(..offset).unwrap_or(&[]);
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        unreadable(
            "spur::load::not-utf8",
            format!(
                "the pipeline is not valid UTF-8 (invalid byte at offset {offset}, line {line})"
            ),
            Some("save the file as UTF-8"),
        )
    })?;
    Ok(SourceFile::new(path, text))
}

/// Parse the YAML document into the raw node tree.
fn parse_yaml(source: &SourceFile) -> Result<Node, LoadFailure> {
    let text = source.text();
    if text.trim().is_empty() {
        return Err(empty(source));
    }
    let limits = raw::Limits {
        max_nodes: MAX_NODES,
        max_depth: MAX_DEPTH,
        max_aliases: MAX_ALIASES,
    };
    let node = match raw::parse(text, limits) {
        Ok(Some(node)) => node,
        Ok(None) => return Err(empty(source)),
        Err(e) => return Err(yaml_error(source, e)),
    };
    match node.value {
        NodeValue::Map(_) => Ok(node),
        NodeValue::Null => Err(empty(source)),
        ref other => Err(LoadFailure::invalid(
            Diagnostic::error(
                "spur::load::not-a-mapping",
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
        code: "spur::load::empty",
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

fn yaml_error(source: &SourceFile, err: raw::ParseError) -> LoadFailure {
    let limits = format!(
        "spur loads at most {MAX_NODES} YAML nodes, {MAX_DEPTH} levels of nesting and \
         {MAX_ALIASES} aliases; a real pipeline is far below these limits"
    );
    let (code, message, label, help, span) = match err {
        raw::ParseError::MultipleDocuments { span } => (
            "spur::load::multiple-documents",
            "a pipeline file holds one YAML document, this one has several".to_owned(),
            "a second document starts here",
            "remove the `---` separator and keep one pipeline per file".to_owned(),
            span,
        ),
        raw::ParseError::TooDeep { span } => (
            "spur::load::too-complex",
            format!("the pipeline is nested more than {MAX_DEPTH} levels deep"),
            "limit reached here",
            limits,
            span,
        ),
        raw::ParseError::TooLarge { span } => (
            "spur::load::too-complex",
            "the pipeline is too large: it expands to too many YAML nodes or aliases (an alias bomb?)"
                .to_owned(),
            "limit reached here",
            limits,
            span,
        ),
        raw::ParseError::UnknownAnchor { name, span } => (
            "spur::load::yaml",
            format!("invalid YAML: alias `*{name}` names no anchor"),
            "unknown alias",
            "define the anchor (`&name`) before its aliases".to_owned(),
            span,
        ),
        raw::ParseError::Syntax { message, span } => (
            "spur::load::yaml",
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

/// Load a pipeline from its source text.
pub fn load(source: &SourceFile) -> Result<Loaded, LoadFailure> {
    let root = parse_yaml(source)?;
    let mut builder = Builder {
        source,
        diagnostics: Vec::new(),
    };
    let pipeline = builder.pipeline(&root)?;
    Ok(Loaded {
        pipeline,
        diagnostics: builder.diagnostics,
    })
}

/// The entries of a mapping with unknown and duplicate keys reported.
struct Fields<'n> {
    entries: Vec<(&'n str, &'n Node, &'n Node)>,
    /// The mapping's extent (first key to last value).
    span: Span,
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }

    /// The key node of `key`.
    fn key(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, _)| *k)
    }

    /// Where to point when the mapping lacks a key: its first key.
    fn anchor(&self) -> Span {
        self.entries.first().map_or(self.span, |(_, k, _)| k.span)
    }
}

/// The full extent of a node (block collections carry an empty span at their start).
fn extent(node: &Node) -> Span {
    let start = node.span.offset;
    let mut end = node.span.end();
    match &node.value {
        NodeValue::Seq(items) => {
            for item in items {
                end = end.max(extent(item).end());
            }
        }
        NodeValue::Map(entries) => {
            for (k, v) in entries {
                end = end.max(k.span.end()).max(extent(v).end());
            }
        }
        _ => {}
    }
    Span::new(start, end.saturating_sub(start))
}

/// The text of a scalar key (`1: x` → "1").
fn key_text(key: &Node) -> Option<String> {
    match &key.value {
        NodeValue::String(s) => Some(s.clone()),
        NodeValue::Number(n) => Some(n.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        NodeValue::Null => Some("null".into()),
        NodeValue::Seq(_) | NodeValue::Map(_) => None,
    }
}

struct Builder<'s> {
    source: &'s SourceFile,
    diagnostics: Vec<Diagnostic>,
}

const CODE_TYPE: &str = "spur::check::wrong-type";
const CODE_MISSING: &str = "spur::check::missing-key";
const CODE_UNKNOWN_KEY: &str = "spur::check::unknown-key";
const CODE_DUPLICATE_KEY: &str = "spur::check::duplicate-key";

impl<'s> Builder<'s> {
    fn error(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::error(code, self.source, span, message));
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        let d = Diagnostic::error(
            CODE_TYPE,
            self.source,
            node_span(node),
            format!(
                "{what} must be {expected}, found {}",
                node.value.type_name()
            ),
        )
        .label(format!("expected {expected}"));
        self.push(d);
    }

    /// The entries of a mapping node, reporting duplicate keys (both places), unknown keys
    /// (did-you-mean) and non-scalar keys. `None` (reported) when the node is not a mapping.
    fn fields<'n>(&mut self, node: &'n Node, what: &str, known: &[&str]) -> Option<Fields<'n>> {
        let NodeValue::Map(entries) = &node.value else {
            self.wrong_type(node, what, "a mapping");
            return None;
        };
        let mut fields = Fields {
            entries: Vec::with_capacity(entries.len()),
            span: extent(node),
        };
        for (key, value) in entries {
            let NodeValue::String(name) = &key.value else {
                let d = Diagnostic::error(
                    CODE_UNKNOWN_KEY,
                    self.source,
                    key.span,
                    format!(
                        "{what} keys must be strings, found {}",
                        key.value.type_name()
                    ),
                )
                .label("not a known key")
                .help(format!("known keys: {}", known.join(", ")));
                self.push(d);
                continue;
            };
            if let Some((_, first, _)) = fields.entries.iter().find(|(k, _, _)| k == name) {
                let d = Diagnostic::error(
                    CODE_DUPLICATE_KEY,
                    self.source,
                    key.span,
                    format!("duplicate key `{name}` in {what}"),
                )
                .label("declared again here")
                .secondary(first.span, "first declared here")
                .help("YAML keys must be unique; remove one of them");
                self.push(d);
                continue;
            }
            if !known.contains(&name.as_str()) {
                let mut d = Diagnostic::error(
                    CODE_UNKNOWN_KEY,
                    self.source,
                    key.span,
                    format!("unknown key `{name}` in {what}"),
                )
                .label("unknown key");
                d = match did_you_mean(name, known.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("known keys: {}", known.join(", "))),
                };
                self.push(d);
                continue;
            }
            fields.entries.push((name.as_str(), key, value));
        }
        Some(fields)
    }

    fn missing(&mut self, fields: &Fields<'_>, key: &str, what: &str) {
        let d = Diagnostic::error(
            CODE_MISSING,
            self.source,
            fields.anchor(),
            format!("{what} has no `{key}`"),
        )
        .label(format!("this {what} needs `{key}`"))
        .help(format!("add `{key}:`"));
        self.push(d);
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        match &node.value {
            NodeValue::String(s) => Some(Located::new(s.clone(), node.span)),
            _ => {
                self.wrong_type(node, what, "a string");
                None
            }
        }
    }

    fn opt_string(
        &mut self,
        fields: &Fields<'_>,
        key: &str,
        what: &str,
    ) -> Option<Located<String>> {
        let node = fields.get(key)?;
        if matches!(node.value, NodeValue::Null) {
            return None;
        }
        self.string(node, &format!("`{key}` of {what}"))
    }

    /// A state reference (`initialState`, `from`, `to`, list items): a non-empty string.
    fn state_ref(&mut self, node: &Node, what: &str) -> Option<Located<String>> {
        let value = self.string(node, what)?;
        if value.value.trim().is_empty() {
            self.error(
                CODE_TYPE,
                node_span(node),
                format!("{what} must not be empty"),
            )
            .primary
            .text = "empty state id".into();
            return None;
        }
        Some(value)
    }

    /// A required state reference; when missing or invalid, an empty placeholder at the
    /// mapping (the checker skips empty references: the problem is already reported).
    fn required_state_ref(
        &mut self,
        fields: &Fields<'_>,
        key: &str,
        what: &str,
    ) -> Located<String> {
        match fields.get(key) {
            Some(node) => self
                .state_ref(node, &format!("`{key}` of {what}"))
                .unwrap_or_else(|| Located::new(String::new(), node.span)),
            None => {
                self.missing(fields, key, what);
                Located::new(String::new(), fields.anchor())
            }
        }
    }

    fn state_list(&mut self, fields: &Fields<'_>, key: &str) -> Vec<Located<String>> {
        let Some(node) = fields.get(key) else {
            return Vec::new();
        };
        match &node.value {
            NodeValue::Null => Vec::new(),
            NodeValue::Seq(items) => items
                .iter()
                .filter_map(|item| self.state_ref(item, &format!("an item of `{key}`")))
                .collect(),
            _ => {
                self.wrong_type(node, &format!("`{key}`"), "a list of state ids");
                Vec::new()
            }
        }
    }

    fn pipeline(&mut self, root: &Node) -> Result<Pipeline, LoadFailure> {
        let Some(top) = self.fields(root, "the pipeline", TOP_LEVEL_KEYS) else {
            return Err(LoadFailure::invalid(Diagnostic::error(
                "spur::load::not-a-mapping",
                self.source,
                root.span,
                "a pipeline must be a YAML mapping",
            )));
        };
        self.kind(&top)?;
        let name = match fields_get_string(self, &top, "name", "the pipeline") {
            Some(name) => name,
            None => Located::new(String::new(), top.anchor()),
        };
        if let Some(name_node) = top.get("name") {
            if matches!(&name_node.value, NodeValue::String(s) if s.trim().is_empty()) {
                self.error(CODE_TYPE, node_span(name_node), "`name` must not be empty")
                    .primary
                    .text = "empty name".into();
            }
        }
        let version = top.get("version").and_then(|node| match &node.value {
            // `version: 1` and `version: 1.0` are common; keep their text.
            NodeValue::Number(_) => self
                .source
                .text()
                .get(node.span.offset..node.span.end())
                .map(|t| Located::new(t.to_owned(), node.span)),
            NodeValue::Null => None,
            _ => self.string(node, "`version`"),
        });
        let description = self.opt_string(&top, "description", "the pipeline");
        let initial_state = self.required_state_ref(&top, "initialState", "the pipeline");
        let terminal_states = self.state_list(&top, "terminalStates");
        let failure_states = self.state_list(&top, "failureStates");
        let iteration_bound = self.iteration_bound(&top);
        let default_on_error = top
            .get("defaultOnError")
            .and_then(|node| self.on_error(node, "`defaultOnError`"))
            .unwrap_or_else(|| Located::new(OnError::Fail, Span::default()));
        let vars = top.get("vars").map(|n| self.vars(n)).unwrap_or_default();
        let env_allow = top.get("env").map(|n| self.env(n)).unwrap_or_default();
        let states = match top.get("states") {
            Some(node) => self.list(node, "`states`", |b, item, i| b.state(item, i)),
            None => {
                self.missing(&top, "states", "the pipeline");
                Vec::new()
            }
        };
        let transitions = match top.get("transitions") {
            Some(node) => self.list(node, "`transitions`", |b, item, i| b.transition(item, i)),
            None => {
                self.missing(&top, "transitions", "the pipeline");
                Vec::new()
            }
        };
        Ok(Pipeline {
            source: self.source.clone(),
            name,
            version,
            description,
            initial_state,
            terminal_states,
            failure_states,
            iteration_bound,
            default_on_error,
            vars,
            env_allow,
            states,
            transitions,
        })
    }

    fn kind(&mut self, top: &Fields<'_>) -> Result<(), LoadFailure> {
        let Some(node) = top.get("kind") else {
            return Ok(());
        };
        match &node.value {
            NodeValue::String(s) if s == "state-machine" => Ok(()),
            NodeValue::String(s) if s == "transition-flow" => Err(LoadFailure::invalid(
                Diagnostic::error(
                    "spur::load::unsupported-kind",
                    self.source,
                    node.span,
                    "`kind: transition-flow` pipelines are not supported yet",
                )
                .label("not supported")
                .help("spur runs the `state-machine` dialect; rewrite the flow as states and transitions"),
            )),
            NodeValue::String(s) => {
                let d = Diagnostic::error(
                    "spur::check::unknown-kind",
                    self.source,
                    node.span,
                    format!("unknown pipeline kind `{s}`"),
                )
                .label("unknown kind")
                .help(match did_you_mean(s, ["state-machine"]) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => "the supported kind is `state-machine` (the default)".into(),
                });
                self.push(d);
                Ok(())
            }
            _ => {
                self.wrong_type(node, "`kind`", "a string");
                Ok(())
            }
        }
    }

    fn iteration_bound(&mut self, top: &Fields<'_>) -> Located<u32> {
        let default = Located::new(DEFAULT_ITERATION_BOUND, Span::default());
        let Some(node) = top.get("iterationBound") else {
            return default;
        };
        let bound = match &node.value {
            NodeValue::Number(n) => n
                .as_u64()
                .filter(|n| *n > 0)
                .and_then(|n| u32::try_from(n).ok()),
            _ => None,
        };
        match bound {
            Some(b) => Located::new(b, node.span),
            None => {
                let d = Diagnostic::error(
                    "spur::check::iteration-bound",
                    self.source,
                    node_span(node),
                    "`iterationBound` must be a positive integer",
                )
                .label("not a positive integer")
                .help(format!(
                    "the most transitions one run may take, e.g. `iterationBound: {DEFAULT_ITERATION_BOUND}` (the default)"
                ));
                self.push(d);
                default
            }
        }
    }

    fn on_error(&mut self, node: &Node, what: &str) -> Option<Located<OnError>> {
        let NodeValue::String(s) = &node.value else {
            self.wrong_type(node, what, "`fail` or `continue`");
            return None;
        };
        match OnError::parse(s) {
            Some(policy) => Some(Located::new(policy, node.span)),
            None => {
                let hint = did_you_mean(s, ["fail", "continue"]).map_or_else(
                    || "use `fail` or `continue`".to_owned(),
                    |c| format!("did you mean `{c}`?"),
                );
                let d = Diagnostic::error(
                    "spur::check::on-error",
                    self.source,
                    node.span,
                    format!("invalid {what} `{s}`"),
                )
                .label("not an error policy")
                .help(hint);
                self.push(d);
                None
            }
        }
    }

    fn vars(&mut self, node: &Node) -> Vec<VarDecl> {
        if matches!(node.value, NodeValue::Null) {
            return Vec::new();
        }
        let NodeValue::Map(entries) = &node.value else {
            self.wrong_type(node, "`vars`", "a mapping of name to string");
            return Vec::new();
        };
        let mut vars: Vec<VarDecl> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Some(name) = key_text(key) else {
                self.wrong_type(key, "a var name", "a string");
                continue;
            };
            if let Some(first) = vars.iter().find(|v| v.name.value == name) {
                let d = Diagnostic::error(
                    CODE_DUPLICATE_KEY,
                    self.source,
                    key.span,
                    format!("var `{name}` is declared twice"),
                )
                .label("declared again here")
                .secondary(first.name.span, "first declared here")
                .help("remove one of the declarations");
                self.push(d);
                continue;
            }
            if !is_identifier(&name) {
                let d = Diagnostic::error(
                    "spur::check::var-name",
                    self.source,
                    key.span,
                    format!("invalid var name `{name}`"),
                )
                .label("not a valid name")
                .help("var names match ^[A-Za-z_][A-Za-z0-9_]*$ (they become environment variables of shell steps)");
                self.push(d);
                continue;
            }
            let default = match &value.value {
                NodeValue::String(s) => Located::new(s.clone(), value.span),
                NodeValue::Number(_) | NodeValue::Bool(_) => {
                    let text = self
                        .source
                        .text()
                        .get(value.span.offset..value.span.end())
                        .unwrap_or_default()
                        .to_owned();
                    let d = Diagnostic::warning(
                        "spur::check::var-not-string",
                        self.source,
                        value.span,
                        format!(
                            "var `{name}` has a {} default; vars are strings",
                            match value.value {
                                NodeValue::Bool(_) => "boolean",
                                _ => "number",
                            }
                        ),
                    )
                    .label(format!("read as the string \"{text}\""))
                    .help(format!("quote it: `{name}: \"{text}\"`"));
                    self.push(d);
                    Located::new(text, value.span)
                }
                _ => {
                    self.wrong_type(value, &format!("the default of var `{name}`"), "a string");
                    continue;
                }
            };
            vars.push(VarDecl {
                name: Located::new(name, key.span),
                default,
            });
        }
        vars
    }

    fn env(&mut self, node: &Node) -> Vec<Located<String>> {
        let Some(fields) = self.fields(node, "`env`", ENV_KEYS) else {
            return Vec::new();
        };
        let Some(allow) = fields.get("allow") else {
            return Vec::new();
        };
        let NodeValue::Seq(items) = &allow.value else {
            self.wrong_type(allow, "`env.allow`", "a list of environment variable names");
            return Vec::new();
        };
        let mut names = Vec::new();
        for item in items {
            let Some(name) = self.string(item, "an item of `env.allow`") else {
                continue;
            };
            if !is_identifier(&name.value) {
                let d = Diagnostic::error(
                    "spur::check::var-name",
                    self.source,
                    item.span,
                    format!("invalid environment variable name `{}`", name.value),
                )
                .label("not a valid name")
                .help("names match ^[A-Za-z_][A-Za-z0-9_]*$");
                self.push(d);
                continue;
            }
            names.push(name);
        }
        names
    }

    fn list<T>(
        &mut self,
        node: &Node,
        what: &str,
        mut item: impl FnMut(&mut Self, &Node, usize) -> Option<T>,
    ) -> Vec<T> {
        match &node.value {
            NodeValue::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| item(self, n, i))
                .collect(),
            NodeValue::Null => Vec::new(),
            _ => {
                self.wrong_type(node, what, "a list");
                Vec::new()
            }
        }
    }

    fn state(&mut self, node: &Node, _index: usize) -> Option<State> {
        let fields = self.fields(node, "a state", STATE_KEYS)?;
        let id = match fields.get("id") {
            Some(id) => self.state_ref(id, "a state `id`")?,
            None => {
                self.missing(&fields, "id", "state");
                return None;
            }
        };
        let what = format!("state `{}`", id.value);
        let description = self.opt_string(&fields, "description", &what);
        let pause = match fields.get("pause") {
            None => false,
            Some(Node {
                value: NodeValue::Bool(b),
                ..
            }) => *b,
            Some(Node {
                value: NodeValue::Null,
                ..
            }) => false,
            Some(other) => {
                self.wrong_type(other, &format!("`pause` of {what}"), "`true` or `false`");
                false
            }
        };
        let on_enter = self.actions(&fields, "onEnter", &what);
        let on_exit = self.actions(&fields, "onExit", &what);
        Some(State {
            id,
            description,
            pause,
            on_enter,
            on_exit,
            span: fields.span,
        })
    }

    fn actions(&mut self, fields: &Fields<'_>, key: &str, what: &str) -> Vec<Action> {
        match fields.get(key) {
            None => Vec::new(),
            Some(node) => self.list(node, &format!("`{key}` of {what}"), |b, item, _| {
                b.action(item)
            }),
        }
    }

    fn action(&mut self, node: &Node) -> Option<Action> {
        let fields = self.fields(node, "an action", ACTION_KEYS)?;
        let kind = self.kind_field(&fields, "action")?;
        let options = self.options(&fields, node);
        let on_error = fields
            .get("onError")
            .filter(|n| !matches!(n.value, NodeValue::Null))
            .and_then(|n| self.on_error(n, "`onError`"));
        Some(Action {
            kind,
            options,
            on_error,
            span: fields.span,
        })
    }

    fn kind_field(&mut self, fields: &Fields<'_>, what: &str) -> Option<Located<String>> {
        let Some(node) = fields.get("kind") else {
            self.missing(fields, "kind", what);
            return None;
        };
        let kind = self.string(node, &format!("the `kind` of a {what}"))?;
        if kind.value.trim().is_empty() {
            self.error(
                CODE_TYPE,
                node_span(node),
                format!("the `kind` of a {what} must not be empty"),
            );
            return None;
        }
        Some(kind)
    }

    fn options(&mut self, fields: &Fields<'_>, owner: &Node) -> Options {
        match fields.get("options") {
            None
            | Some(Node {
                value: NodeValue::Null,
                ..
            }) => Options {
                entries: Vec::new(),
                span: fields.key("kind").map_or(owner.span, |k| k.span),
            },
            Some(node) => match self.option_value(node) {
                OptionValue::Map(options) => options,
                _ => {
                    self.wrong_type(node, "`options`", "a mapping");
                    Options {
                        entries: Vec::new(),
                        span: node.span,
                    }
                }
            },
        }
    }

    fn option_value(&mut self, node: &Node) -> OptionValue {
        match &node.value {
            NodeValue::Null => OptionValue::Null(node.span),
            NodeValue::Bool(b) => OptionValue::Bool(Located::new(*b, node.span)),
            NodeValue::Number(n) => OptionValue::Number(Located::new(n.clone(), node.span)),
            NodeValue::String(s) => OptionValue::String(Located::new(s.clone(), node.span)),
            NodeValue::Seq(items) => OptionValue::List(
                items.iter().map(|i| self.option_value(i)).collect(),
                extent(node),
            ),
            NodeValue::Map(entries) => {
                let mut options = Options {
                    entries: Vec::with_capacity(entries.len()),
                    span: extent(node),
                };
                for (key, value) in entries {
                    let Some(name) = key_text(key) else {
                        self.wrong_type(key, "an option name", "a string");
                        continue;
                    };
                    if let Some((first, _)) = options.entries.iter().find(|(k, _)| k.value == name)
                    {
                        let d = Diagnostic::error(
                            CODE_DUPLICATE_KEY,
                            self.source,
                            key.span,
                            format!("duplicate option `{name}`"),
                        )
                        .label("declared again here")
                        .secondary(first.span, "first declared here")
                        .help("YAML keys must be unique; remove one of them");
                        self.push(d);
                        continue;
                    }
                    let value = self.option_value(value);
                    options.entries.push((Located::new(name, key.span), value));
                }
                OptionValue::Map(options)
            }
        }
    }

    fn transition(&mut self, node: &Node, index: usize) -> Option<Transition> {
        let fields = self.fields(node, "a transition", TRANSITION_KEYS)?;
        let what = format!("transition #{}", index + 1);
        let from = self.required_state_ref(&fields, "from", &what);
        let to = self.required_state_ref(&fields, "to", &what);
        let description = self.opt_string(&fields, "description", &what);
        let trigger = self.opt_string(&fields, "trigger", &what);
        let guard = fields
            .get("guard")
            .filter(|n| !matches!(n.value, NodeValue::Null))
            .and_then(|n| self.guard(n));
        let terminal_reason = fields
            .get("terminalReason")
            .and_then(|n| self.terminal_reason(n));
        Some(Transition {
            from,
            to,
            description,
            trigger,
            guard,
            terminal_reason,
            span: fields.span,
        })
    }

    fn guard(&mut self, node: &Node) -> Option<Guard> {
        let fields = self.fields(node, "a guard", GUARD_KEYS)?;
        let kind = self.kind_field(&fields, "guard")?;
        let options = self.options(&fields, node);
        Some(Guard {
            kind,
            options,
            span: fields.span,
        })
    }

    fn terminal_reason(&mut self, node: &Node) -> Option<Located<TerminalReason>> {
        let NodeValue::String(s) = &node.value else {
            self.wrong_type(node, "`terminalReason`", "a string");
            return None;
        };
        match TerminalReason::parse(s) {
            Some(reason) => Some(Located::new(reason, node.span)),
            None => {
                let all = TerminalReason::ALL.map(TerminalReason::as_str);
                let d = Diagnostic::error(
                    "spur::check::terminal-reason",
                    self.source,
                    node.span,
                    format!("unknown terminalReason `{s}`"),
                )
                .label("not a terminal reason")
                .help(match did_you_mean(s, all) {
                    Some(r) => format!("did you mean `{r}`?"),
                    None => format!("use one of: {}", all.join(", ")),
                });
                self.push(d);
                None
            }
        }
    }
}

fn fields_get_string(
    b: &mut Builder<'_>,
    fields: &Fields<'_>,
    key: &str,
    what: &str,
) -> Option<Located<String>> {
    match fields.get(key) {
        Some(node) => b.string(node, &format!("`{key}` of {what}")),
        None => {
            b.missing(fields, key, what);
            None
        }
    }
}

/// Where to point for a node: its extent, or for an empty block collection its start.
fn node_span(node: &Node) -> Span {
    let span = extent(node);
    if span.len == 0 {
        Span::new(span.offset, 1)
    } else {
        span
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<&'static str> {
        let loaded = load(&SourceFile::new("p.yaml", text.to_owned())).unwrap();
        loaded.diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn reports_every_structural_problem_at_once() {
        let text = "name: p\ninitialState: a\nstates:\n  - id: a\n    pause: \"yes\"\n  - description: no id\ntransitions:\n  - from: a\n";
        assert_eq!(
            codes(text),
            [
                "spur::check::wrong-type",
                "spur::check::missing-key",
                "spur::check::missing-key"
            ]
        );
    }

    #[test]
    fn reads_every_key_of_the_dialect() {
        let text = "kind: state-machine\nname: p\nversion: 1.0\ndescription: d\ninitialState: a\nterminalStates: [b]\nfailureStates: []\niterationBound: 7\ndefaultOnError: continue\nvars: {x: \"1\"}\nenv: {allow: [HOME]}\nstates:\n  - id: a\n    pause: true\n    onExit: [{kind: note, options: {message: m}, onError: fail}]\n  - id: b\ntransitions:\n  - {from: a, to: b, trigger: go, description: t, terminalReason: done, guard: {kind: always}}\n";
        let loaded = load(&SourceFile::new("p.yaml", text)).unwrap();
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        let p = loaded.pipeline;
        assert_eq!(p.version.unwrap().value, "1.0");
        assert_eq!(p.iteration_bound.value, 7);
        assert_eq!(p.default_on_error.value, OnError::Continue);
        assert_eq!(p.env_allow[0].value, "HOME");
        assert!(p.states[0].pause);
        assert_eq!(
            p.states[0].on_exit[0].on_error.as_ref().unwrap().value,
            OnError::Fail
        );
        let t = &p.transitions[0];
        assert_eq!(
            t.terminal_reason.as_ref().unwrap().value,
            TerminalReason::Done
        );
        assert_eq!(t.trigger.as_ref().unwrap().value, "go");
        assert_eq!(t.guard.as_ref().unwrap().kind.value, "always");
    }
}
