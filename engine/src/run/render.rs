//! Templates rendered just before use: `${vars.X}`, `${env.X}` (allow-listed
//! only) and the built-ins (`${workflow}`, `${runId}`, `${task}`, `${state}`, `${node}`,
//! `${iteration}`, `${run}`, `${runtime}`), parsed by
//! [`crate::template`] (shell's `$name` is not a template). In shell command text every substitution is escaped for its
//! quoting context (ARCHITECTURE.md, *Threat model*), so a value is always exactly one literal string.

use crate::diagnostic::{coded_diagnostic, Code};
use crate::pipeline::{FromRendered, OptionValue, Options, Problem, Templated};
use crate::source::{Located, Span};
use crate::template::{Builtin, Segment, Template};

use super::vars::Vars;

/// What templates can refer to at this point of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RenderContext<'a> {
    pub(crate) vars: &'a Vars,
    pub(crate) env_allow: &'a [String],
    pub(crate) workflow: &'a str,
    pub(crate) run_id: &'a str,
    pub(crate) state: &'a str,
    pub(crate) iteration: u32,
}

/// A template names something that does not exist at run time. `spur check` rejects these
/// at load time; this is the run-time backstop (never an empty string).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RenderError {
    pub(crate) message: String,
}

coded_diagnostic! {
    RenderError {
        Self { .. } => Code::RunTemplate,
            help("declare the var under `vars:` (or allow the env var under `env.allow`); `spur check` finds these before a run");
    }
}

impl RenderError {
    fn undefined(name: String) -> Self {
        Self {
            message: format!("template `${{{name}}}` is undefined"),
        }
    }
}

/// How substituted values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// As is.
    Text,
    /// Escaped for the shell quoting context at the substitution point.
    Shell,
}

/// A piece of a template: literal text or a resolved value.
enum Piece {
    Literal(String),
    Value(String),
}

fn pieces(text: &str, ctx: &RenderContext<'_>) -> Result<Vec<Piece>, RenderError> {
    let located = Located::new(text.to_owned(), Span::default());
    let template = Template::parse(&located).map_err(|e| RenderError {
        message: e.to_string(),
    })?;
    template
        .segments
        .into_iter()
        .map(|segment| {
            Ok(match segment {
                Segment::Literal(s) => Piece::Literal(s),
                Segment::Var(name) => Piece::Value(
                    ctx.vars
                        .get(&name.value)
                        .cloned()
                        .ok_or_else(|| RenderError::undefined(format!("vars.{}", name.value)))?,
                ),
                Segment::Env(name) => {
                    if !ctx.env_allow.contains(&name.value) {
                        return Err(RenderError::undefined(format!("env.{}", name.value)));
                    }
                    Piece::Value(std::env::var(&name.value).unwrap_or_default())
                }
                Segment::Builtin(b) => Piece::Value(builtin(b.value, ctx)),
            })
        })
        .collect()
}

/// The value of a built-in name, as the reference engine's `runtimeBuiltins` gives it.
fn builtin(name: Builtin, ctx: &RenderContext<'_>) -> String {
    match name {
        Builtin::Workflow | Builtin::Task => ctx.workflow.to_owned(),
        Builtin::RunId | Builtin::Run => ctx.run_id.to_owned(),
        Builtin::State | Builtin::Node => ctx.state.to_owned(),
        Builtin::Iteration => ctx.iteration.to_string(),
        Builtin::Runtime => RUNTIME.to_owned(),
    }
}

/// The dialect a run executes, the value of `${runtime}`.
const RUNTIME: &str = "state-machine";

/// Render `text` in `mode`.
pub(crate) fn render(
    text: &str,
    mode: Mode,
    ctx: &RenderContext<'_>,
) -> Result<String, RenderError> {
    if !text.contains("${") {
        return Ok(text.to_owned());
    }
    let pieces = pieces(text, ctx)?;
    match mode {
        Mode::Text => Ok(pieces
            .into_iter()
            .map(|p| match p {
                Piece::Literal(s) => s.to_owned(),
                Piece::Value(v) => v,
            })
            .collect()),
        Mode::Shell => {
            let mut literal = String::new();
            let mut substitutions = Vec::new();
            for piece in pieces {
                match piece {
                    Piece::Literal(s) => literal.push_str(&s),
                    // An empty range at the insertion point: `${…}` holds no quote
                    // character, so the context there is the context of the placeholder.
                    Piece::Value(v) => substitutions.push((literal.len()..literal.len(), v)),
                }
            }
            spur_guards::shell_quote::render_shell(&literal, &substitutions).map_err(|e| {
                RenderError {
                    message: format!("cannot place a var in shell text: {e}"),
                }
            })
        }
    }
}

/// Render every string in `options` as text, nested lists and maps included: the options of
/// a plugin, as the JSON it is given.
pub(crate) fn render_options(
    options: &Options,
    ctx: &RenderContext<'_>,
) -> Result<serde_json::Value, RenderError> {
    let mut map = serde_json::Map::new();
    for (key, value) in &options.entries {
        map.insert(key.value.clone(), render_value(value, Mode::Text, ctx)?);
    }
    Ok(serde_json::Value::Object(map))
}

/// Strings in `mode` (a list's or a mapping's as text), other values as written.
fn render_value(
    value: &OptionValue,
    mode: Mode,
    ctx: &RenderContext<'_>,
) -> Result<serde_json::Value, RenderError> {
    Ok(match value {
        OptionValue::String(s) => serde_json::Value::String(render(&s.value, mode, ctx)?),
        OptionValue::List(items, _) => serde_json::Value::Array(
            items
                .iter()
                .map(|i| render_value(i, Mode::Text, ctx))
                .collect::<Result<_, _>>()?,
        ),
        OptionValue::Map(m) => render_options(m, ctx)?,
        other => other.to_json(),
    })
}

/// A typed option that could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OptionError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("option `{key}` {problem}")]
    Invalid { key: &'static str, problem: Problem },
}

impl RenderContext<'_> {
    /// Render `option` (shell text for a [`FromRendered::SHELL`] type) and read it as a
    /// `T`; `Ok(None)` when it holds no value.
    pub(crate) fn resolve<T: FromRendered>(
        &self,
        option: &Templated<T>,
    ) -> Result<Option<T>, OptionError> {
        let mode = if T::SHELL { Mode::Shell } else { Mode::Text };
        let rendered = render_value(option.written(), mode, self)?;
        T::from_rendered(rendered).map_err(|problem| OptionError::Invalid {
            key: option.key(),
            problem,
        })
    }

    /// [`RenderContext::resolve`] for an option whose value, when of the wrong type, counts
    /// as absent.
    pub(crate) fn resolve_lenient<T: FromRendered>(
        &self,
        option: Option<&Templated<T>>,
    ) -> Result<Option<T>, RenderError> {
        match option.map(|o| self.resolve(o)) {
            None | Some(Err(OptionError::Invalid { .. })) => Ok(None),
            Some(Ok(value)) => Ok(value),
            Some(Err(OptionError::Render(e))) => Err(e),
        }
    }
}
