//! Templates in shell text (a shell action's or a shell guard's `command`, the only options
//! spur hands to `sh -c`): each placeholder becomes a reference to an environment variable
//! that carries its value, quoted for its place (`spur_guards::shell_template`); no value
//! is ever pasted into the command. The checker renders the same text the runner does (a
//! rendering depends only on the text, never on values), so a template `spur check`
//! accepts is never refused at run time.
//!
//! Every placeholder has its own carrier, under a name spur reserves: `${vars.x}` →
//! `SPUR_VAR_x`, `${env.X}` → `SPUR_ENV_X`, the built-ins → `SPUR_RUN_ID` (`${runId}`,
//! `${run}`), `SPUR_STATE` (`${state}`, `${node}`), `SPUR_ITERATION`, `SPUR_WORKFLOW`
//! (`${workflow}`, `${task}`), `SPUR_RUNTIME`. They are set last in the step's environment, so a
//! step's `env:`, a var named `PATH`, or the script assigning `x` cannot change what a
//! placeholder stands for.

use spur_guards::shell_template::{self, Refusal};

use crate::template::{Builtin, Segment, Template};

/// The environment variable that carries a placeholder's value to a shell step.
pub(crate) fn carrier(segment: &Segment) -> Option<String> {
    Some(match segment {
        Segment::Literal(_) => return None,
        Segment::Var(name) => format!("SPUR_VAR_{}", name.value),
        Segment::Env(name) => format!("SPUR_ENV_{}", name.value),
        Segment::Builtin(b) => builtin_variable(b.value).to_owned(),
    })
}

/// The variable a pipeline author can write by hand for the same value: the var's own
/// environment variable, the environment variable, or the `SPUR_*` of a built-in.
pub(crate) fn by_hand(segment: &Segment) -> Option<String> {
    Some(match segment {
        Segment::Literal(_) => return None,
        Segment::Var(name) | Segment::Env(name) => name.value.clone(),
        Segment::Builtin(b) => builtin_variable(b.value).to_owned(),
    })
}

fn builtin_variable(builtin: Builtin) -> &'static str {
    match builtin {
        Builtin::Workflow | Builtin::Task => "SPUR_WORKFLOW",
        Builtin::RunId | Builtin::Run => "SPUR_RUN_ID",
        Builtin::State | Builtin::Node => "SPUR_STATE",
        Builtin::Iteration => "SPUR_ITERATION",
        Builtin::Runtime => "SPUR_RUNTIME",
    }
}

/// A placeholder that cannot be placed: the segment and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unplaceable<'t> {
    pub(crate) segment: &'t Segment,
    pub(crate) refusal: Refusal,
}

/// The command `sh -c` runs for `template`, with a reference in place of each placeholder.
pub(crate) fn render(template: &Template) -> Result<String, Unplaceable<'_>> {
    let mut text = String::new();
    let mut placeholders: Vec<(usize, &Segment, String)> = Vec::new();
    for segment in &template.segments {
        match segment {
            Segment::Literal(s) => text.push_str(s),
            other => {
                if let Some(name) = carrier(other) {
                    placeholders.push((text.len(), other, name));
                }
            }
        }
    }
    let references: Vec<(usize, &str)> = placeholders
        .iter()
        .map(|(at, _, name)| (*at, name.as_str()))
        .collect();
    shell_template::render(&text, &references).map_err(|refused| {
        let segment = placeholders
            .get(refused.index)
            .map(|(_, s, _)| *s)
            .or_else(|| template.segments.first())
            .unwrap_or(&EMPTY);
        Unplaceable {
            segment,
            refusal: refused.refusal,
        }
    })
}

static EMPTY: Segment = Segment::Literal(String::new());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Located, Span};

    fn render_text(text: &str) -> Result<String, Refusal> {
        let t = Template::parse(&Located::new(text.to_owned(), Span::default())).unwrap();
        render(&t).map_err(|u| u.refusal)
    }

    #[test]
    fn every_placeholder_becomes_a_reference_to_its_carrier() {
        assert_eq!(
            render_text("echo ${vars.x} \"${env.HOME}\" '${runId}' ${state}${iteration} # ${workflow}")
                .unwrap(),
            "echo \"${SPUR_VAR_x}\" \"${SPUR_ENV_HOME}\" ''\"${SPUR_RUN_ID}\"'' \"${SPUR_STATE}\"\"${SPUR_ITERATION}\" # \"${SPUR_WORKFLOW}\""
        );
    }

    #[test]
    fn the_issue_vectors_are_references_or_refused() {
        assert_eq!(
            render_text("echo \\${vars.x}"),
            Err(Refusal::AfterBackslash)
        );
        assert_eq!(
            render_text("echo \"\\${vars.x}\""),
            Err(Refusal::AfterBackslash)
        );
        assert_eq!(
            render_text("echo \"$(case a in a) echo ${vars.x};; esac)\"").unwrap(),
            "echo \"$(case a in a) echo \"${SPUR_VAR_x}\";; esac)\""
        );
        assert_eq!(
            render_text("echo $'${vars.x}'"),
            Err(Refusal::DollarSingleQuote)
        );
    }
}
