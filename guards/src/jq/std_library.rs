//! jaq's standard library (the jq definitions of jaq-core, jaq-std and jaq-json), lexed and
//! parsed once per process. Every compile starts from a clone of these definitions instead of
//! parsing the library's text again, which was most of the cost of compiling a short filter.

use std::sync::OnceLock;

use jaq_core::load::parse::Def;

static DEFINITIONS: OnceLock<Vec<Def<&'static str>>> = OnceLock::new();

/// The library's definitions, for `jaq_core::load::Loader::new`.
pub(crate) fn definitions() -> impl Iterator<Item = Def<&'static str>> {
    DEFINITIONS
        .get_or_init(|| {
            jaq_core::defs()
                .chain(jaq_std::defs())
                .chain(jaq_json::defs())
                .collect()
        })
        .iter()
        .cloned()
}
