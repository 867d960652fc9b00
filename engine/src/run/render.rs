//! Templates rendered just before use: `${vars.X}`, `${env.X}` (allow-listed
//! only) and the built-ins (`${workflow}`, `${runId}`, `${task}`, `${state}`, `${node}`,
//! `${iteration}`, `${run}`, `${runtime}`), parsed by
//! [`crate::template`] (shell's `$name` is not a template). Shell command text is never
//! rendered with values: each placeholder becomes a reference to a variable that carries
//! the value ([`RenderContext::shell`], ARCHITECTURE.md, *Threat model*).

use crate::diagnostic::{coded_diagnostic, Code};
use crate::pipeline::{FromRendered, OptionValue, Options, Problem, ShellText, Templated};
use crate::shell_text;
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

impl RenderContext<'_> {
    /// The value of a placeholder.
    fn value(&self, segment: &Segment) -> Result<String, RenderError> {
        Ok(match segment {
            Segment::Literal(s) => s.clone(),
            Segment::Var(name) => self
                .vars
                .get(&name.value)
                .cloned()
                .ok_or_else(|| RenderError::undefined(format!("vars.{}", name.value)))?,
            Segment::Env(name) => {
                if !self.env_allow.contains(&name.value) {
                    return Err(RenderError::undefined(format!("env.{}", name.value)));
                }
                std::env::var(&name.value).unwrap_or_default()
            }
            Segment::Builtin(b) => builtin(b.value, self),
        })
    }
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
pub(crate) const RUNTIME: &str = "state-machine";

fn parse(text: &str) -> Result<Template, RenderError> {
    Template::parse(&Located::new(text.to_owned(), Span::default())).map_err(|e| RenderError {
        message: e.to_string(),
    })
}

/// Render `text` with each placeholder's value in its place.
pub(crate) fn render(text: &str, ctx: &RenderContext<'_>) -> Result<String, RenderError> {
    if !text.contains("${") {
        return Ok(text.to_owned());
    }
    parse(text)?
        .segments
        .iter()
        .map(|segment| ctx.value(segment))
        .collect()
}

/// Render every string in `options` as text, nested lists and maps included: the options of
/// a plugin, as the JSON it is given.
pub(crate) fn render_options(
    options: &Options,
    ctx: &RenderContext<'_>,
) -> Result<serde_json::Value, RenderError> {
    let mut map = serde_json::Map::new();
    for (key, value) in &options.entries {
        map.insert(key.value.clone(), render_value(value, ctx)?);
    }
    Ok(serde_json::Value::Object(map))
}

/// Strings rendered as text (in lists and mappings too), other values as written.
fn render_value(
    value: &OptionValue,
    ctx: &RenderContext<'_>,
) -> Result<serde_json::Value, RenderError> {
    Ok(match value {
        OptionValue::String(s) => serde_json::Value::String(render(&s.value, ctx)?),
        OptionValue::List(items, _) => serde_json::Value::Array(
            items
                .iter()
                .map(|i| render_value(i, ctx))
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
    /// Render `option` and read it as a `T`; `Ok(None)` when it holds no value.
    pub(crate) fn resolve<T: FromRendered>(
        &self,
        option: &Templated<T>,
    ) -> Result<Option<T>, OptionError> {
        let rendered = render_value(option.written(), self)?;
        T::from_rendered(rendered).map_err(|problem| OptionError::Invalid {
            key: option.key(),
            problem,
        })
    }

    /// Shell text: the command with a reference in place of each placeholder
    /// (`crate::shell_text`), and the variables that carry the values; `Ok(None)` when the
    /// option is null.
    pub(crate) fn shell(
        &self,
        option: &Templated<ShellText>,
    ) -> Result<Option<ShellText>, OptionError> {
        let text = match option.written() {
            OptionValue::String(s) => &s.value,
            OptionValue::Null(_) => return Ok(None),
            _ => {
                return Err(OptionError::Invalid {
                    key: option.key(),
                    problem: Problem::NotAString,
                })
            }
        };
        let template = parse(text)?;
        let command = shell_text::render(&template).map_err(|unplaceable| RenderError {
            message: format!(
                "option `{}`: a template cannot be placed in shell text: {}",
                option.key(),
                unplaceable.refusal
            ),
        })?;
        let mut env: Vec<(String, String)> = Vec::new();
        for segment in &template.segments {
            if let Some(name) = shell_text::carrier(segment) {
                if !env.iter().any(|(n, _)| *n == name) {
                    env.push((name, self.value(segment)?));
                }
            }
        }
        Ok(Some(ShellText { command, env }))
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
