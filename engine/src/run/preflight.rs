//! Checks made after vars are resolved and before anything runs: every `${vars.X}` a
//! template uses must have a value (declared, given with --var/--vars, or set by an action
//! of the pipeline before use). `spur check` warns about undeclared vars; a run refuses to
//! start with them rather than ever render an empty string.

use std::collections::BTreeSet;

use crate::pipeline::{OptionValue, Options, Pipeline};
use crate::source::{Located, Span};
use crate::template::{Segment, Template};

use super::vars::Vars;

/// Every var name a template of the pipeline uses (`${vars.X}` in any option).
pub(crate) fn template_vars(pipeline: &Pipeline) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for state in &pipeline.states {
        for action in state.on_enter.iter().chain(&state.on_exit) {
            collect(&action.options, &mut used);
        }
    }
    for transition in &pipeline.transitions {
        if let Some(guard) = &transition.guard {
            collect(&guard.options, &mut used);
        }
    }
    used
}

/// The var names templates use that have no value and no action that sets them, sorted.
pub(crate) fn unset_template_vars(pipeline: &Pipeline, vars: &Vars) -> Vec<String> {
    let mut known: BTreeSet<String> = vars.keys().cloned().collect();
    known.insert("__hitlAnswer".to_owned());
    known.insert("__hitlInput".to_owned());
    let mut used = BTreeSet::new();
    for state in &pipeline.states {
        for action in state.on_enter.iter().chain(&state.on_exit) {
            // The vars it sets, as written.
            for var in action.kind.value.vars_set() {
                known.insert(var.value.clone());
            }
            collect(&action.options, &mut used);
        }
    }
    for transition in &pipeline.transitions {
        if let Some(guard) = &transition.guard {
            collect(&guard.options, &mut used);
        }
    }
    used.difference(&known).cloned().collect()
}

/// Whether the run's task var `wbs` is empty while a template uses it: `${vars.wbs}` would
/// render as nothing ("task :"), and the run would have no task to certify.
pub(crate) fn empty_task_var(pipeline: &Pipeline, vars: &Vars) -> bool {
    if vars.get("wbs").map(String::as_str) != Some("") {
        return false;
    }
    let mut used = BTreeSet::new();
    for state in &pipeline.states {
        for action in state.on_enter.iter().chain(&state.on_exit) {
            collect(&action.options, &mut used);
        }
    }
    for transition in &pipeline.transitions {
        if let Some(guard) = &transition.guard {
            collect(&guard.options, &mut used);
        }
    }
    used.contains("wbs")
}

fn collect(options: &Options, used: &mut BTreeSet<String>) {
    for (_, value) in &options.entries {
        collect_value(value, used);
    }
}

fn collect_value(value: &OptionValue, used: &mut BTreeSet<String>) {
    match value {
        OptionValue::String(s) => {
            if let Ok(t) = Template::parse(&Located::new(s.value.clone(), Span::default())) {
                for segment in t.segments {
                    if let Segment::Var(name) = segment {
                        used.insert(name.value);
                    }
                }
            }
        }
        OptionValue::List(items, _) => items.iter().for_each(|i| collect_value(i, used)),
        OptionValue::Map(m) => collect(m, used),
        _ => {}
    }
}
