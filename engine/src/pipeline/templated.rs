//! An option of a built-in kind, kept as written and typed by what it becomes once its
//! templates are rendered: options are templated (`timeoutMs: ${vars.agentTimeoutMs}`), so a
//! value's type can only be settled just before use. [`FromRendered`] is that last step,
//! one impl per type, the only place a rendered value turns into a typed one. Shell text is
//! the exception: it is never rendered with values (`RenderContext::shell`).

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde_json::Value;

use crate::pipeline::model::OptionValue;
use crate::source::Located;

/// Option `key` as written, to be rendered and read as a `T` when the step runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Templated<T> {
    key: &'static str,
    value: OptionValue,
    ty: PhantomData<fn() -> T>,
}

impl<T> Templated<T> {
    pub(crate) fn new(key: &'static str, value: OptionValue) -> Self {
        Self {
            key,
            value,
            ty: PhantomData,
        }
    }

    /// The option's name in the pipeline.
    pub(crate) fn key(&self) -> &'static str {
        self.key
    }

    /// The value as written (templates not rendered).
    pub(crate) fn written(&self) -> &OptionValue {
        &self.value
    }

    /// The value as written, when it is a string.
    pub(crate) fn written_str(&self) -> Option<&Located<String>> {
        match &self.value {
            OptionValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Shell command text, rendered (`crate::shell_text`): the command, with a reference to
/// an environment variable where each placeholder was, and those variables with their
/// values. No value is ever in the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellText {
    pub(crate) command: String,
    /// Set last in the step's environment, so that nothing else overrides them.
    pub(crate) env: Vec<(String, String)>,
}

/// Name → value pairs (a shell step's `env`), values as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvVars(pub(crate) Vec<(String, String)>);

/// Why a rendered value is not of its option's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // each variant reads as its message: "not a string"
pub(crate) enum Problem {
    NotAString,
    NotAList,
    NotAMapping,
    NotACount,
    NotPositiveMillis,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Problem::NotAString => "must be a string",
            Problem::NotAList => "must be a list",
            Problem::NotAMapping => "must be a mapping",
            Problem::NotACount => "must be a whole number",
            Problem::NotPositiveMillis => "must be a positive number of milliseconds",
        })
    }
}

/// A type an option takes once rendered (strings rendered, other values as written).
pub(crate) trait FromRendered: Sized {
    /// `Ok(None)`: no value (null; for a duration also blank text).
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem>;
}

impl FromRendered for String {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        match value {
            Value::String(s) => Ok(Some(s)),
            Value::Null => Ok(None),
            _ => Err(Problem::NotAString),
        }
    }
}

/// `true`, or text that renders to `true`; anything else is false.
impl FromRendered for bool {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        Ok(Some(match value {
            Value::Bool(b) => b,
            Value::String(s) => s == "true",
            _ => false,
        }))
    }
}

/// A count: a number, or text that is one.
impl FromRendered for u64 {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        match value {
            Value::Null => Ok(None),
            Value::Number(n) => n.as_u64().map(Some).ok_or(Problem::NotACount),
            Value::String(s) => s.parse().map(Some).map_err(|_| Problem::NotACount),
            _ => Err(Problem::NotACount),
        }
    }
}

/// A positive number of milliseconds, written as a number or (after templating) as text.
impl FromRendered for Duration {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        let millis = match value {
            Value::Null => return Ok(None),
            Value::Number(n) => n.as_u64(),
            Value::String(s) if s.trim().is_empty() => return Ok(None),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match millis {
            Some(0) | None => Err(Problem::NotPositiveMillis),
            Some(ms) => Ok(Some(Duration::from_millis(ms))),
        }
    }
}

/// What an option written without templates must be, checked when the pipeline is loaded
/// (`spur check`), so a value that can only fail when its step runs fails before the run.
pub(crate) trait WrittenType {
    fn check_written(value: Value) -> Result<(), Problem>;
}

impl<T: FromRendered> WrittenType for T {
    fn check_written(value: Value) -> Result<(), Problem> {
        T::from_rendered(value).map(|_| ())
    }
}

/// Shell text is never rendered with values (`ShellText`), but it is text.
impl WrittenType for ShellText {
    fn check_written(value: Value) -> Result<(), Problem> {
        match value {
            Value::String(_) | Value::Null => Ok(()),
            _ => Err(Problem::NotAString),
        }
    }
}

/// Any JSON value, strings rendered (an `event.emit` payload).
impl FromRendered for Value {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        Ok(Some(value))
    }
}

/// A list of scalars, each as text.
impl FromRendered for Vec<String> {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        match value {
            Value::Array(items) => Ok(Some(items.iter().map(scalar_text).collect())),
            Value::Null => Ok(None),
            _ => Err(Problem::NotAList),
        }
    }
}

impl FromRendered for EnvVars {
    fn from_rendered(value: Value) -> Result<Option<Self>, Problem> {
        match value {
            Value::Object(map) => Ok(Some(EnvVars(
                map.iter()
                    .map(|(k, v)| (k.clone(), scalar_text(v)))
                    .collect(),
            ))),
            Value::Null => Ok(None),
            _ => Err(Problem::NotAMapping),
        }
    }
}

/// A JSON value as var text: strings as they are, null as nothing, others as JSON.
pub(crate) fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_are_positive_milliseconds_as_numbers_or_text() {
        let ms = |v: Value| Duration::from_rendered(v);
        assert_eq!(ms(json!(5)), Ok(Some(Duration::from_millis(5))));
        assert_eq!(ms(json!(" 7 ")), Ok(Some(Duration::from_millis(7))));
        assert_eq!(ms(json!("")), Ok(None));
        assert_eq!(ms(json!(0)), Err(Problem::NotPositiveMillis));
        assert_eq!(ms(json!("soon")), Err(Problem::NotPositiveMillis));
    }

    #[test]
    fn flags_lists_and_maps_read_scalars_as_text() {
        assert_eq!(bool::from_rendered(json!("true")), Ok(Some(true)));
        assert_eq!(bool::from_rendered(json!(1)), Ok(Some(false)));
        assert_eq!(
            Vec::<String>::from_rendered(json!(["a", 1, null])),
            Ok(Some(vec!["a".into(), "1".into(), String::new()]))
        );
        assert_eq!(
            EnvVars::from_rendered(json!({"A": true})),
            Ok(Some(EnvVars(vec![("A".into(), "true".into())])))
        );
        assert_eq!(u64::from_rendered(json!(" 3")), Err(Problem::NotACount));
        assert_eq!(String::from_rendered(json!(3)), Err(Problem::NotAString));
    }
}
