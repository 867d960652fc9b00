//! [`CheckedPipeline`]: a pipeline that loaded and checked without errors. The runner takes
//! it, so it cannot be handed a pipeline with unknown states, undefined template names or
//! jq that does not compile. It indexes states.

use std::collections::HashMap;

use super::check;
use crate::diagnostic::Diagnostic;
use crate::pipeline::load::Loaded;
use crate::pipeline::model::{Pipeline, State, Transition};

/// A pipeline with no error diagnostics.
#[derive(Debug, Clone)]
pub struct CheckedPipeline {
    pipeline: Pipeline,
    /// State id → index into `pipeline.states`.
    index: HashMap<String, usize>,
    /// State index → transition indices from it, in declaration order.
    outgoing: Vec<Vec<usize>>,
    initial: usize,
}

impl CheckedPipeline {
    /// Check a loaded pipeline. `Ok` carries the warnings and notes; `Err` every finding
    /// (at least one error).
    pub fn new(loaded: Loaded) -> Result<(CheckedPipeline, Vec<Diagnostic>), Vec<Diagnostic>> {
        let Loaded {
            pipeline,
            mut diagnostics,
        } = loaded;
        diagnostics.extend(check(&pipeline));
        super::sort(&mut diagnostics);
        if diagnostics.iter().any(Diagnostic::is_error) {
            return Err(diagnostics);
        }
        let index: HashMap<String, usize> = pipeline
            .states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.value.clone(), i))
            .collect();
        let mut outgoing = vec![Vec::new(); pipeline.states.len()];
        for (t, transition) in pipeline.transitions.iter().enumerate() {
            if let Some(&from) = index.get(&transition.from.value) {
                outgoing[from].push(t);
            }
        }
        let Some(&initial) = index.get(&pipeline.initial_state.value) else {
            // check() reports an unknown initial state as an error; unreachable here.
            return Err(diagnostics);
        };
        Ok((
            CheckedPipeline {
                pipeline,
                index,
                outgoing,
                initial,
            },
            diagnostics,
        ))
    }

    /// The pipeline as loaded.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Index of the initial state in `pipeline.states`.
    pub fn initial_state(&self) -> usize {
        self.initial
    }

    /// Index of the state with id `id`.
    pub fn state_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The state at `index` in `pipeline.states`.
    pub fn state(&self, index: usize) -> Option<&State> {
        self.pipeline.states.get(index)
    }

    /// Transitions out of state `index`, in declaration order (the order they are tried).
    pub fn transitions_from(&self, index: usize) -> impl Iterator<Item = (usize, &Transition)> {
        self.outgoing
            .get(index)
            .into_iter()
            .flatten()
            .filter_map(|&t| self.pipeline.transitions.get(t).map(|tr| (t, tr)))
    }

    /// Index of the target state of transition `transition`.
    pub fn target(&self, transition: usize) -> Option<usize> {
        let t = self.pipeline.transitions.get(transition)?;
        self.state_index(&t.to.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::pipeline::load;
    use crate::source::SourceFile;

    const CLEAN: &str = "name: p\ninitialState: a\nvars:\n  wbs: \"1\"\nstates:\n  - id: a\n    onEnter:\n      - kind: shell\n        options:\n          command: echo ${vars.wbs}\n  - id: b\n  - id: c\ntransitions:\n  - from: a\n    to: c\n    guard: { kind: never }\n  - from: a\n    to: b\n";

    #[test]
    fn indexes_states_and_transitions_in_declaration_order() {
        let source = SourceFile::new("p.yaml", CLEAN);
        let (checked, warnings) = CheckedPipeline::new(load(&source).unwrap()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let a = checked.state_index("a").unwrap();
        assert_eq!(a, checked.initial_state());
        let targets: Vec<usize> = checked
            .transitions_from(a)
            .filter_map(|(t, _)| checked.target(t))
            .collect();
        assert_eq!(targets, [2, 1]);
        assert_eq!(checked.state(a).unwrap().id.value, "a");
    }

    #[test]
    fn refuses_a_pipeline_with_errors() {
        let source = SourceFile::new("p.yaml", CLEAN.replace("to: b", "to: bb"));
        let errors = CheckedPipeline::new(load(&source).unwrap()).unwrap_err();
        assert!(errors.iter().any(|d| d.code == Code::CheckUnknownState));
    }
}
