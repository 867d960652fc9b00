//! jaq's standard library (the jq definitions of jaq-core, jaq-std and jaq-json), parsed
//! once per process, and the part of it a filter needs. Compiling a filter compiles every
//! definition it is given, and the whole library costs about half a millisecond — 150 times
//! a short filter — so a filter gets only the definitions its words can reach: every
//! definition named by a word of the filter, and, transitively, every definition named in
//! their bodies. The match is by name alone, so it errs on the side of including.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use jaq_core::load::parse::Def;

struct Library {
    /// In the library's order (a definition sees only those before it).
    definitions: Vec<Def<&'static str>>,
    /// For each definition, the names its body mentions.
    mentions: Vec<Vec<String>>,
    /// Definition indices by name (several arities share a name).
    by_name: HashMap<&'static str, Vec<usize>>,
}

/// The names the library defines, sorted (a test holds it to the library): a filter that
/// names none of them needs no definition, and the library is then not parsed at all —
/// parsing it is most of what compiling a short filter costs a process.
#[rustfmt::skip]
const NAMES: &[&str] = &[
    "@base64", "@base64d", "@html", "@htmld", "@json", "@sh", "@text", "@uri", "@urid", "abs",
    "add", "all", "any", "arrays", "booleans", "capture", "capture_of_match", "combinations",
    "debug", "del", "delpaths", "drem", "empty", "error", "false", "finites", "first",
    "flatten", "from_entries", "fromdate", "gamma", "getpath", "gsub", "halt", "halt_error",
    "in", "index", "infinite", "inside", "isarray", "isboolean", "isempty", "isfinite",
    "isinfinite", "isnan", "isnormal", "isnumber", "isobject", "isstring", "iterables", "join",
    "keys", "last", "logb", "map", "map_values", "match", "max", "max_by", "min", "min_by",
    "nan", "nexttoward", "normals", "not", "nth", "null", "nulls", "numbers", "objects",
    "paths", "pick", "pow10", "range", "recurse", "repeat", "rindex", "scalars", "scalb",
    "scan", "scan_", "select", "setpath", "significand", "split", "splits", "stderr",
    "strings", "sub", "test", "to_entries", "toboolean", "todate", "tonumber", "tostring",
    "totype", "transpose", "true", "type", "unique", "unique_by", "until", "values", "walk",
    "while", "with_entries",
];

static LIBRARY: OnceLock<Library> = OnceLock::new();

fn library() -> &'static Library {
    LIBRARY.get_or_init(|| {
        let definitions: Vec<Def<&'static str>> = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs())
            .collect();
        // A body's debug form spells every call as `Call("name", …)` and a format as
        // `Some("@name")`: every quoted word in it is a candidate name.
        let mentions = definitions
            .iter()
            .map(|d| quoted_words(&format!("{:?}", d.body)))
            .collect();
        let mut by_name: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (i, d) in definitions.iter().enumerate() {
            by_name.entry(d.name).or_default().push(i);
        }
        Library {
            definitions,
            mentions,
            by_name,
        }
    })
}

/// The library's definitions that `expr` can reach, in the library's order.
pub(crate) fn definitions_for(expr: &str) -> Vec<Def<&'static str>> {
    let mut pending: Vec<String> = words(expr);
    if !pending
        .iter()
        .any(|w| NAMES.binary_search(&w.as_str()).is_ok())
    {
        return Vec::new();
    }
    let lib = library();
    let mut wanted: HashSet<usize> = HashSet::new();
    while let Some(name) = pending.pop() {
        for &i in lib.by_name.get(name.as_str()).into_iter().flatten() {
            if wanted.insert(i) {
                pending.extend(lib.mentions.get(i).into_iter().flatten().cloned());
            }
        }
    }
    let mut chosen: Vec<usize> = wanted.into_iter().collect();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .filter_map(|i| lib.definitions.get(i).cloned())
        .collect()
}

/// Identifier-like words of jq text (`map`, `@base64`, `ltrimstr`), anywhere in it.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || (c == '@' && word.is_empty()) {
            word.push(c);
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The text between each pair of double quotes of a debug form.
fn quoted_words(debug: &str) -> Vec<String> {
    debug
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(expr: &str) -> Vec<&'static str> {
        definitions_for(expr).iter().map(|d| d.name).collect()
    }

    #[test]
    fn a_filter_gets_the_definitions_it_names_and_what_they_need() {
        assert!(names(".a == 1").is_empty(), "{:?}", names(".a == 1"));
        let map = names("map(. + 1)");
        assert!(map.contains(&"map"), "{map:?}");
        let select = names("[.[] | select(.ok)] | length > 0");
        assert!(select.contains(&"select"), "{select:?}");
        // `true` is a definition (`0 == 0`).
        assert!(names("true").contains(&"true"));
        // Whatever the whole library needs is reachable from some word.
        let every = library().definitions.len();
        let all_words: String = library()
            .definitions
            .iter()
            .map(|d| format!("{} ", d.name))
            .collect();
        assert_eq!(definitions_for(&all_words).len(), every);
    }

    #[test]
    fn names_are_the_library_s_names_sorted() {
        let mut defined: Vec<&str> = library().definitions.iter().map(|d| d.name).collect();
        defined.sort_unstable();
        defined.dedup();
        assert_eq!(NAMES, defined.as_slice());
    }

    #[test]
    fn words_include_format_names_and_skip_punctuation() {
        assert_eq!(
            words(r#"@base64 "x\(.a)" | ltrimstr("v")"#),
            ["@base64", "x", "a", "ltrimstr", "v"]
        );
    }
}
