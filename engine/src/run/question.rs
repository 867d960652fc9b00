//! The question a paused run waits on, read back from its journal and its pipeline, as
//! `spur continue --answer` will check the answer (for `spur ui`'s buttons).

use super::actions::HitlQuestion;
use super::journal::{PauseKind, Record};
use super::plan::render_ctx;
use super::replay;
use crate::pipeline::Pipeline;

/// What a paused run asks: an hitl action's question with its choices (none: free text),
/// or, for a `pause: true` state, `None` in [`Pending::question`] (it goes on without an
/// answer). `None` overall when the run is not paused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The state it paused in.
    pub state: String,
    /// The question, for an hitl pause.
    pub question: Option<HitlQuestion>,
}

/// The pause the run whose journal holds `records` waits on, if it waits. The choices are
/// the action's own, rendered with the run's vars; when they cannot be rendered here (an
/// option naming the environment), the recorded prompt is shown with free text, and
/// `spur continue` still checks the answer.
pub fn pending(pipeline: &Pipeline, records: &[Record], run_id: &str) -> Option<Pending> {
    let position = replay::replay(records)?;
    if position.finished.is_some() {
        return None;
    }
    let (kind, action, prompt) = position.paused.clone()?;
    let state = position.state.clone()?;
    if kind == PauseKind::State {
        return Some(Pending {
            state,
            question: None,
        });
    }
    let asked = pipeline
        .states
        .iter()
        .find(|s| s.id.value == state)
        .and_then(|s| action.and_then(|i| s.on_enter.get(i)))
        .and_then(|a| {
            let render = render_ctx(
                pipeline,
                &position.vars,
                run_id,
                &state,
                position.iteration,
                &[],
            );
            HitlQuestion::of(&a.kind.value, &render).ok()
        });
    let question = asked.unwrap_or_else(|| HitlQuestion {
        prompt: prompt.unwrap_or_else(|| "Continue?".to_owned()),
        choices: Vec::new(),
    });
    Some(Pending {
        state,
        question: Some(question),
    })
}
