//! The artifact as read, before validation: every field the contract knows, each kept as a
//! string or as a description of whatever else it was. Deserialised straight from the
//! bytes (borrowing strings) on the fast path, or built from a `serde_json::Value` when the
//! fast path cannot describe the document.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::artifact::{AcceptanceCriterion, Check, Requirement};
use super::outcome::FieldProblem;

/// A field value: a string, or what else it was (for messages).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Loose<'a> {
    Str(Cow<'a, str>),
    Other {
        /// "a number", "an array", …
        type_name: &'static str,
        /// "a number 5", "an array", … (scalars shown, containers named).
        shown: String,
    },
}

impl<'a> Loose<'a> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            Loose::Other { .. } => None,
        }
    }

    /// A string with something other than whitespace in it.
    pub(crate) fn non_blank(&self) -> Option<&str> {
        self.as_str().filter(|s| !s.trim().is_empty())
    }

    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Loose::Str(_) => "a string",
            Loose::Other { type_name, .. } => type_name,
        }
    }

    /// `None` for JSON `null`, which reads as absent.
    pub(crate) fn from_value(value: &'a Value) -> Option<Loose<'a>> {
        let other = |type_name: &'static str, shown: String| Loose::Other { type_name, shown };
        match value {
            Value::Null => None,
            Value::String(s) => Some(Loose::Str(Cow::Borrowed(s))),
            Value::Bool(b) => Some(other("a boolean", format!("a boolean {b}"))),
            Value::Number(n) => Some(other("a number", format!("a number {n}"))),
            Value::Array(_) => Some(other("an array", "an array".to_owned())),
            Value::Object(_) => Some(other("an object", "an object".to_owned())),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LooseVisitor(std::marker::PhantomData))
    }
}

struct LooseVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for LooseVisitor<'a> {
    type Value = Loose<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v)))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Loose::Other {
            type_name: "a boolean",
            shown: format!("a boolean {v}"),
        })
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(number(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(number(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        // Render as serde_json does, so both paths word messages alike.
        let shown =
            serde_json::Number::from_f64(v).map_or_else(|| v.to_string(), |n| n.to_string());
        Ok(number(shown))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other {
            type_name: "an array",
            shown: "an array".to_owned(),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Other {
            type_name: "an object",
            shown: "an object".to_owned(),
        })
    }
}

fn number(n: impl fmt::Display) -> Loose<'static> {
    Loose::Other {
        type_name: "a number",
        shown: format!("a number {n}"),
    }
}

/// Accepts only a JSON object for `T` (a derived struct would also take an array of its
/// fields in order, which an artifact must not).
#[derive(Debug)]
pub(crate) struct ObjectOnly<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(ObjectVisitor(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

/// A row object: the fields any row kind may carry. Unknown keys are ignored.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawRow<'a> {
    #[serde(borrow, default)]
    pub(crate) id: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) scenario: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) status: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) evidence: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) evidence_type: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) severity: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) name: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) check: Option<Loose<'a>>,
}

impl<'a> RawRow<'a> {
    pub(crate) fn from_map(map: &'a Map<String, Value>) -> Self {
        let field = |key: &str| map.get(key).and_then(Loose::from_value);
        Self {
            id: field("id"),
            scenario: field("scenario"),
            status: field("status"),
            evidence: field("evidence"),
            evidence_type: field("evidenceType"),
            severity: field("severity"),
            name: field("name"),
            check: field("check"),
        }
    }
}

/// A row kind that can be built from a raw row object (implemented in `rows`).
pub(crate) trait FromRawRow: Sized {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>>;
}

/// A section validated row by row as it is read, so no raw rows are kept.
#[derive(Debug)]
pub(crate) struct ParsedRows<T> {
    pub(crate) rows: Vec<T>,
    /// Index and problems of each rejected row.
    pub(crate) rejected: Vec<(usize, Vec<FieldProblem>)>,
}

impl<T> Default for ParsedRows<T> {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            rejected: Vec::new(),
        }
    }
}

impl<T> ParsedRows<T> {
    pub(crate) fn push(&mut self, index: usize, result: Result<T, Vec<FieldProblem>>) {
        match result {
            Ok(row) => self.rows.push(row),
            Err(problems) => self.rejected.push((index, problems)),
        }
    }
}

impl<'de, T: FromRawRow> Deserialize<'de> for ParsedRows<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RowsVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: FromRawRow> Visitor<'de> for RowsVisitor<T> {
            type Value = ParsedRows<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of row objects")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parsed = ParsedRows {
                    rows: Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096)),
                    rejected: Vec::new(),
                };
                let mut index = 0;
                while let Some(ObjectOnly(row)) = seq.next_element::<ObjectOnly<RawRow<'de>>>()? {
                    parsed.push(index, T::from_raw(&row));
                    index += 1;
                }
                Ok(parsed)
            }
        }
        deserializer.deserialize_seq(RowsVisitor(std::marker::PhantomData))
    }
}

/// The whole artifact on the fast path: only documents whose sections are arrays of
/// objects deserialise; anything else takes the `Value` path for precise diagnostics.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawArtifact<'a> {
    #[serde(borrow, default)]
    pub(crate) wbs: Option<Loose<'a>>,
    #[serde(borrow, default)]
    pub(crate) verdict: Option<Loose<'a>>,
    #[serde(default)]
    pub(crate) requirements: Option<ParsedRows<Requirement>>,
    #[serde(default)]
    pub(crate) acceptance_criteria: Option<ParsedRows<AcceptanceCriterion>>,
    #[serde(default)]
    pub(crate) checks: Option<ParsedRows<Check>>,
    #[serde(default)]
    pub(crate) source: Option<Value>,
}
