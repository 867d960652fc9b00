//! YAML 1.2 core schema resolution of a plain (unquoted) scalar: null, booleans, integers
//! (decimal, `0x`, `0o`), floats; anything else is a string. Quoted and block scalars
//! never come here: they are always strings.

use super::NodeValue;

/// The value of a plain scalar.
pub(super) fn resolve_plain(text: &str) -> NodeValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return NodeValue::Null,
        "true" | "True" | "TRUE" => return NodeValue::Bool(true),
        "false" | "False" | "FALSE" => return NodeValue::Bool(false),
        _ => {}
    }
    let bytes = text.as_bytes();
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let unsigned = bytes
        .strip_prefix(b"-")
        .or_else(|| bytes.strip_prefix(b"+"))
        .unwrap_or(bytes);
    if digits(unsigned) {
        if let Ok(n) = text.trim_start_matches('+').parse::<i64>() {
            return NodeValue::Number(n.into());
        }
        if let Ok(n) = text.trim_start_matches('+').parse::<u64>() {
            return NodeValue::Number(n.into());
        }
    }
    if let Some(hex) = text.strip_prefix("0x") {
        if let Ok(n) = u64::from_str_radix(hex, 16) {
            return NodeValue::Number(n.into());
        }
    }
    if let Some(oct) = text.strip_prefix("0o") {
        if let Ok(n) = u64::from_str_radix(oct, 8) {
            return NodeValue::Number(n.into());
        }
    }
    // Floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let looks_float = {
        let (mantissa, exponent) = match unsigned.iter().position(|b| *b == b'e' || *b == b'E') {
            Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
            None => (unsigned, None),
        };
        let mantissa_ok = match mantissa.iter().position(|b| *b == b'.') {
            Some(i) => {
                let (int, frac) = (&mantissa[..i], &mantissa[i + 1..]);
                (int.is_empty() && digits(frac))
                    || (digits(int) && (frac.is_empty() || digits(frac)))
            }
            None => digits(mantissa),
        };
        let exponent_ok = exponent.is_none_or(|e| {
            digits(
                e.strip_prefix(b"-")
                    .or_else(|| e.strip_prefix(b"+"))
                    .unwrap_or(e),
            )
        });
        mantissa_ok && exponent_ok
    };
    if looks_float {
        if let Some(n) = text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return NodeValue::Number(n);
        }
    }
    NodeValue::String(text.to_owned())
}
