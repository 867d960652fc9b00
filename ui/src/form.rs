//! `application/x-www-form-urlencoded` (query strings and posted forms): pairs, decoded.

/// The decoded `key=value` pairs of `text` (a query string without its `?`, or a form body).
pub(crate) fn pairs(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// The first value of `key` in `pairs`.
pub(crate) fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Percent-decoding with `+` as a space; invalid escapes stay as they are, invalid UTF-8
/// becomes U+FFFD.
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(v) = hex {
                    out.push(v);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{decode, pairs, value};

    #[test]
    fn decodes_plus_and_percent_escapes_and_keeps_bad_ones() {
        assert_eq!(decode("a+b%3Cc%3E%zz%4"), "a b<c>%zz%4");
        let p = pairs("answer=yes&csrf=ab%2Bc&&x");
        assert_eq!(value(&p, "answer"), Some("yes"));
        assert_eq!(value(&p, "csrf"), Some("ab+c"));
        assert_eq!(value(&p, "x"), Some(""));
        assert_eq!(value(&p, "y"), None);
    }
}
