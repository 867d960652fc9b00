//! Which task acceptance criterion an answer's AC cell names. Accepted forms: the exact
//! checklist label, the bare title, `Scenario: <title>`, the title with (a subset of) its
//! bracket tags, a declared `AC-N` or checklist-token alias, and a linked scenario title.
//! Anything else — a paraphrase — resolves to nothing; a form shared by two criteria is
//! ambiguous.

use std::collections::{BTreeSet, HashMap};

use super::ac_label::{collapse, strip_links, strip_scenario_prefix, AcLabel};
use super::table::unwrap_code;
use super::task_file::TaskAc;

/// What an AC cell resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Exactly one criterion (index into the task's list).
    One(usize),
    /// No criterion.
    Unresolved,
    /// Several criteria share the form.
    Ambiguous(Vec<usize>),
    /// One criterion, but the cell adds bracket tags the task does not give it (an answer
    /// cannot exempt a criterion from the evidence rule by tagging it).
    UndeclaredTags { index: usize, tags: Vec<String> },
}

/// Every accepted form of every criterion, looked up in one step.
#[derive(Debug, Clone)]
pub(crate) struct AcIndex<'t> {
    criteria: &'t [TaskAc],
    forms: HashMap<String, BTreeSet<usize>>,
}

impl<'t> AcIndex<'t> {
    pub(crate) fn new(criteria: &'t [TaskAc]) -> Self {
        let mut forms: HashMap<String, BTreeSet<usize>> = HashMap::new();
        let mut add = |form: String, index: usize| {
            if !form.is_empty() {
                forms.entry(form).or_default().insert(index);
            }
        };
        for (index, ac) in criteria.iter().enumerate() {
            add(ac.label.clone(), index);
            add(ac.written.clone(), index);
            let title = &ac.parts.title;
            if !title.is_empty() {
                let plain = collapse(&strip_links(title));
                add(scenario_form(title), index);
                add(scenario_form(&plain), index);
                add(title.clone(), index);
                add(plain, index);
            }
            for alias in &ac.parts.aliases {
                add(alias.clone(), index);
            }
            for scenario in &ac.parts.scenarios {
                add(scenario.clone(), index);
                add(scenario_form(scenario), index);
            }
        }
        Self { criteria, forms }
    }

    /// Resolve an answer's AC cell.
    pub(crate) fn resolve(&self, cell: &str) -> Resolution {
        let written = collapse(unwrap_code(cell));
        if written.is_empty() {
            return Resolution::Unresolved;
        }
        if let Some(found) = self.lookup(&written) {
            return one_or_many(found);
        }
        let parts = AcLabel::parse(&written);
        let by_alias = parts.aliases.iter().filter_map(|a| self.lookup(a)).fold(
            None,
            |acc: Option<BTreeSet<usize>>, set| {
                Some(acc.map_or(set.clone(), |acc| acc.union(&set).copied().collect()))
            },
        );
        let by_title = if parts.title.is_empty() {
            None
        } else {
            Some(self.lookup(&parts.title).unwrap_or_default())
        };
        let found = match (by_alias, by_title, parts.aliases.is_empty()) {
            (Some(alias), Some(title), _) => alias.intersection(&title).copied().collect(),
            (Some(alias), None, _) => alias,
            (None, Some(_), false) => BTreeSet::new(),
            (None, Some(title), true) => title,
            (None, None, _) => BTreeSet::new(),
        };
        match one_or_many(found) {
            Resolution::One(index) => {
                let declared = &self.criteria.get(index).map(|c| &c.parts.tags);
                let extra: Vec<String> = parts
                    .tags
                    .iter()
                    .filter(|t| !declared.is_some_and(|d| d.contains(t)))
                    .cloned()
                    .collect();
                if extra.is_empty() {
                    Resolution::One(index)
                } else {
                    Resolution::UndeclaredTags { index, tags: extra }
                }
            }
            other => other,
        }
    }

    fn lookup(&self, form: &str) -> Option<BTreeSet<usize>> {
        let key = match strip_scenario_prefix(form) {
            Some(rest) => scenario_form(rest),
            None => match super::ac_label::ac_number(form) {
                Some(alias) => alias,
                None => form.to_owned(),
            },
        };
        self.forms.get(&key).cloned()
    }

    /// The criterion an unresolved cell most likely meant, for a "did you mean" hint.
    pub(crate) fn closest(&self, cell: &str) -> Option<usize> {
        let written = collapse(unwrap_code(cell));
        let parts = AcLabel::parse(&written);
        let probe = if parts.title.is_empty() {
            written.as_str()
        } else {
            parts.title.as_str()
        };
        let probe = strip_scenario_prefix(probe).unwrap_or(probe);
        // A suggestion is for a near miss; a huge cell is not one, and edit distance on it
        // would be slow.
        if probe.len() > MAX_SUGGESTION_PROBE {
            return None;
        }
        self.criteria
            .iter()
            .enumerate()
            .map(|(i, ac)| {
                let title = strip_scenario_prefix(&ac.parts.title).unwrap_or(&ac.parts.title);
                (i, strsim::normalized_levenshtein(probe, title))
            })
            .filter(|&(_, score)| score >= 0.5)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
}

/// The longest AC cell (in bytes) a "did you mean" suggestion is computed for.
const MAX_SUGGESTION_PROBE: usize = 200;

fn scenario_form(title: &str) -> String {
    format!("Scenario: {title}")
}

fn one_or_many(found: BTreeSet<usize>) -> Resolution {
    let mut found: Vec<usize> = found.into_iter().collect();
    match found.len() {
        0 => Resolution::Unresolved,
        1 => Resolution::One(found.remove(0)),
        _ => Resolution::Ambiguous(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::task_file::parse_task_file;
    use std::path::Path;

    fn criteria() -> Vec<TaskAc> {
        parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 x\n## Acceptance Criteria\n\
             - [ ] AC-1: CLI emits JSON\n\
             - [ ] [advisory] Docs mention the flag\n\
             - [ ] `no-panic`: Hostile answers give a clear result\n\
             - [ ] [Scenario: Quiet mode](features/cli.feature)\n\
             - [ ] Shared title\n\
             - [ ] Shared title [non-core]\n",
        )
        .unwrap()
        .acceptance
    }

    #[test]
    fn accepts_every_documented_form() {
        let acs = criteria();
        let index = AcIndex::new(&acs);
        for (cell, want) in [
            ("AC-1: CLI emits JSON", 0),
            ("CLI emits JSON", 0),
            ("Scenario: CLI emits JSON", 0),
            ("scenario:   CLI emits JSON", 0),
            ("AC-1", 0),
            ("`AC-1`", 0),
            ("ac-1", 0),
            ("[AC-1] CLI emits JSON", 0),
            ("AC-1 — CLI emits JSON", 0),
            ("[advisory] Docs mention the flag", 1),
            ("Docs mention the flag", 1),
            ("Docs mention the flag [advisory]", 1),
            ("no-panic", 2),
            ("`no-panic`", 2),
            ("Hostile answers give a clear result", 2),
            ("Scenario: Quiet mode", 3),
            ("Quiet mode", 3),
            ("[Scenario: Quiet mode](features/cli.feature)", 3),
            ("Shared title [non-core]", 5),
        ] {
            assert_eq!(index.resolve(cell), Resolution::One(want), "{cell}");
        }
    }

    #[test]
    fn paraphrases_do_not_resolve_but_suggest_the_closest() {
        let acs = criteria();
        let index = AcIndex::new(&acs);
        assert_eq!(index.resolve("CLI outputs JSON"), Resolution::Unresolved);
        assert_eq!(index.closest("CLI outputs JSON"), Some(0));
        assert_eq!(
            index.resolve("Something else entirely, really"),
            Resolution::Unresolved
        );
        assert_eq!(index.closest("Something else entirely, really"), None);
        assert_eq!(index.closest(&"x".repeat(1000)), None);
        assert_eq!(index.resolve("AC-9"), Resolution::Unresolved);
        assert_eq!(index.resolve(""), Resolution::Unresolved);
    }

    #[test]
    fn an_alias_and_a_title_that_disagree_do_not_resolve() {
        let acs = criteria();
        let index = AcIndex::new(&acs);
        assert!(matches!(
            index.resolve("AC-1: Docs mention the flag"),
            Resolution::Unresolved
        ));
    }

    #[test]
    fn a_title_shared_by_two_criteria_is_ambiguous() {
        let acs = criteria();
        let index = AcIndex::new(&acs);
        assert_eq!(
            index.resolve("Shared title"),
            Resolution::Ambiguous(vec![4, 5])
        );
    }

    #[test]
    fn an_answer_cannot_add_an_exempting_tag() {
        let acs = criteria();
        let index = AcIndex::new(&acs);
        assert_eq!(
            index.resolve("[advisory] CLI emits JSON"),
            Resolution::UndeclaredTags {
                index: 0,
                tags: vec!["advisory".to_owned()]
            }
        );
    }
}
