//! Templates in shell text: each must sit where spur can put a reference to its value with
//! certainty under dash and bash as `sh` (`crate::shell_text`); every other position is an
//! error here, never a surprise at run time. Shell text is the `command` of shell actions
//! and shell guards (nested ones in `all`/`any`/`not` too): nothing else reaches `sh -c`.

use super::Context;
use spur_guards::shell_template::Refusal;

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::action_kind::ActionKind;
use crate::pipeline::guard_kind::{GuardKind, NestedGuard, NestedGuards};
use crate::pipeline::model::Guard;
use crate::pipeline::templated::{ShellText, Templated};
use crate::shell_text;
use crate::template::{Segment, Template};

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for action in p.actions() {
        if let ActionKind::Shell(options) = &action.kind.value {
            command(cx, &options.command);
        }
    }
    for t in &p.transitions {
        if let Some(guard) = &t.guard {
            guard_commands(cx, guard);
        }
    }
}

fn guard_commands(cx: &mut Context<'_>, guard: &Guard) {
    match &guard.kind.value {
        GuardKind::Shell(options) => command(cx, &options.command),
        GuardKind::All(c) | GuardKind::Any(c) | GuardKind::Not(c) => {
            let nested: Vec<&NestedGuard> = match &c.guards {
                NestedGuards::List(items) => items.iter().collect(),
                NestedGuards::Single(item) => vec![item],
                NestedGuards::Invalid => Vec::new(),
            };
            for item in nested {
                if let NestedGuard::Guard(g) = item {
                    guard_commands(cx, g);
                }
            }
        }
        _ => {}
    }
}

fn command(cx: &mut Context<'_>, option: &Templated<ShellText>) {
    let Some(text) = option.written_str() else {
        return;
    };
    if !text.value.contains("${") {
        return;
    }
    let p = cx.pipeline;
    // A malformed placeholder is reported by `templates.rs`.
    let Ok(template) = Template::parse_in(text, &p.source) else {
        return;
    };
    let Err(unplaceable) = shell_text::render(&template) else {
        return;
    };
    let (span, written) = match unplaceable.segment {
        Segment::Var(v) => (v.span, format!("${{vars.{}}}", v.value)),
        Segment::Env(v) => (v.span, format!("${{env.{}}}", v.value)),
        Segment::Builtin(b) => (b.span, format!("${{{}}}", b.value.as_str())),
        Segment::Literal(_) => (text.span, "a template".to_owned()),
    };
    let by_hand = shell_text::by_hand(unplaceable.segment).unwrap_or_else(|| "NAME".into());
    let help = match &unplaceable.refusal {
        Refusal::CommandArgument { command, .. } => format!(
            "`{command}` reads the value as code or a name however it is quoted: pass it as data instead (an argument or a file the code reads), checked first if it must be a name"
        ),
        r if r.value_is_read_as_code() => format!(
            "no quoting makes a value safe there: check it first in your shell text (e.g. `case \"${by_hand}\" in ''|*[!0-9]*) exit 1;; esac`), then use \"${by_hand}\""
        ),
        _ => format!(
            "use \"${by_hand}\" in your shell text instead (see the book's Shell safety page)"
        ),
    };
    let d = Diagnostic::error(
        Code::CheckShellTemplate,
        &p.source,
        span,
        format!(
            "`{written}` cannot be placed in shell text here: {}",
            unplaceable.refusal
        ),
    )
    .label("spur cannot place a reference here with certainty")
    .help(help);
    cx.push(d);
}
