//! Conversions between `serde_json::Value` (what the engine holds) and jaq's `Val`.

use jaq_json::{Map, Num, Rc, Val};
use serde_json::Value;

pub(crate) fn to_val(value: &Value) -> Val {
    match value {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => Val::Num(if let Some(i) = n.as_i64() {
            Num::from_integral(i)
        } else if let Some(u) = n.as_u64() {
            Num::from_integral(u)
        } else {
            Num::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        Value::String(s) => Val::utf8_str(s.clone().into_bytes()),
        Value::Array(items) => Val::Arr(Rc::new(items.iter().map(to_val).collect())),
        Value::Object(fields) => Val::obj(
            fields
                .iter()
                .map(|(k, v)| (Val::utf8_str(k.clone().into_bytes()), to_val(v)))
                .collect::<Map>(),
        ),
    }
}

/// jaq values that JSON cannot hold map like jq prints them: NaN/±inf → null, byte
/// strings → lossy UTF-8, non-string keys → their JSON text.
pub(crate) fn from_val(val: &Val) -> Value {
    match val {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Num(n) => match n {
            Num::Int(i) => Value::from(*i as i64),
            Num::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            other => serde_json::from_str(&other.to_string()).unwrap_or(Value::Null),
        },
        Val::TStr(bytes) | Val::BStr(bytes) => {
            Value::String(String::from_utf8_lossy(bytes).into_owned())
        }
        Val::Arr(items) => Value::Array(items.iter().map(from_val).collect()),
        Val::Obj(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (key_text(k), from_val(v)))
                .collect(),
        ),
    }
}

fn key_text(key: &Val) -> String {
    match key {
        Val::TStr(bytes) | Val::BStr(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        other => other.to_string(),
    }
}

/// Approximate size in bytes of `value` as JSON text; stops counting past `limit`.
pub(crate) fn approx_size(value: &Value, limit: usize) -> usize {
    fn walk(value: &Value, total: &mut usize, limit: usize) {
        if *total > limit {
            return;
        }
        match value {
            Value::Null | Value::Bool(_) => *total += 5,
            Value::Number(_) => *total += 8,
            Value::String(s) => *total += s.len() + 2,
            Value::Array(items) => {
                *total += 2;
                for item in items {
                    *total += 1;
                    walk(item, total, limit);
                }
            }
            Value::Object(fields) => {
                *total += 2;
                for (k, v) in fields {
                    *total += k.len() + 4;
                    walk(v, total, limit);
                }
            }
        }
    }
    let mut total = 0;
    walk(value, &mut total, limit);
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_json_values() {
        let value = json!({"a": [1, -2, 3.5, "x", null, true], "b": {"c": "é"}, "big": 18446744073709551615u64});
        assert_eq!(from_val(&to_val(&value)), value);
    }

    #[test]
    fn size_estimate_stops_early_past_the_limit() {
        let value = json!(["x".repeat(100), "y".repeat(100)]);
        assert!(approx_size(&value, 10) > 10);
        assert!(approx_size(&value, 10) < 200);
        assert!(approx_size(&json!({"k": "v"}), 1000) < 20);
    }
}
