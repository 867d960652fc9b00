//! How deeply JSON nests, measured without recursion: a JSON text is refused before jaq's
//! (recursive) parser sees it, and an output before jaq's (recursive) printer does. jq
//! refuses input nested deeper than 10,000 levels too.

use jaq_json::Val;

/// The deepest nesting `spur jq` reads or prints.
pub const MAX_JSON_DEPTH: usize = 10_000;

/// The byte offset where `text` first nests deeper than `max` arrays and objects.
pub(crate) fn too_deep_text(text: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (at, &b) in text.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(at);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Whether `value` nests deeper than `max` arrays and objects.
pub(crate) fn too_deep_value(value: &Val, max: usize) -> bool {
    let mut pending: Vec<(&Val, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Val>> = match v {
            Val::Arr(items) => Box::new(items.iter()),
            Val::Obj(fields) => Box::new(fields.iter().flat_map(|(k, v)| [k, v])),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        pending.extend(children.map(|c| (c, depth + 1)));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_depth_counts_brackets_outside_strings() {
        assert_eq!(too_deep_text(br#"[[{"a": "[[[["}]]"#, 3), None);
        assert_eq!(too_deep_text(b"[[[[1]]]]", 3), Some(3));
        assert_eq!(too_deep_text(br#"["\"[[[[", 1]"#, 1), None);
        let deep = "[".repeat(100_000);
        assert_eq!(
            too_deep_text(deep.as_bytes(), MAX_JSON_DEPTH),
            Some(MAX_JSON_DEPTH)
        );
    }

    #[test]
    fn value_depth_is_measured_without_recursion() {
        let mut v = Val::Null;
        for _ in 0..100_000 {
            v = Val::Arr(jaq_json::Rc::new(vec![v]));
        }
        assert!(too_deep_value(&v, MAX_JSON_DEPTH));
        assert!(!too_deep_value(
            &Val::Arr(jaq_json::Rc::new(vec![Val::Null])),
            1
        ));
        // Dropping it would recurse 100,000 deep: leave it to the end of the process.
        std::mem::forget(v);
    }
}
