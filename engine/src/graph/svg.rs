//! SVG, drawn in Rust (no Graphviz at run time): the layered layout of `layout.rs`, one box
//! per state and one curve per transition, labelled with its guard. With a run's path, the
//! transitions it took and the states it visited are drawn in blue and the state it is in
//! (or ended in) is ringed in orange. Every element carries a class (`state`, `edge`,
//! `visited`, `taken`, `current`, …) and every state a `data-state` attribute, so a page can
//! style or find them; colors are attributes too, so the file stands alone.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::layout::{box_label, layout, Placed, MARGIN, NODE_HEIGHT};
use super::{transition_label, TransitionGraph};
use crate::pipeline::Pipeline;

/// The part of a run drawn over its pipeline: the transitions it took, in order, and the
/// state it is in or ended in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunPath {
    /// Indices into the pipeline's `transitions`, as the run took them.
    pub taken: Vec<usize>,
    /// The state the run is in (or ended in), when it entered one.
    pub current: Option<String>,
}

const BLUE: &str = "#1565c0";
const ORANGE: &str = "#ef6c00";
const GRAY: &str = "#555555";

/// The pipeline as an SVG document, with `path` (a run's) drawn over it when given.
pub fn to_svg(pipeline: &Pipeline, graph: &TransitionGraph, path: Option<&RunPath>) -> String {
    let placed = layout(pipeline, graph);
    let taken: BTreeSet<usize> = path
        .map(|p| p.taken.iter().copied().collect())
        .unwrap_or_default();
    let mut visited: BTreeSet<usize> = BTreeSet::new();
    if let Some(p) = path {
        if !p.taken.is_empty() || p.current.is_some() {
            visited.extend(graph.initial());
        }
        for &t in &p.taken {
            if let Some(tr) = pipeline.transitions.get(t) {
                visited.extend(graph.state_index(&tr.from.value));
                visited.extend(graph.state_index(&tr.to.value));
            }
        }
    }
    let current = path
        .and_then(|p| p.current.as_deref())
        .and_then(|id| graph.state_index(id));
    visited.extend(current);

    let mut out = String::new();
    let (w, h) = (placed.width, placed.height + 16.0);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="spur-graph" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" font-family="Helvetica, Arial, sans-serif" font-size="13">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&pipeline.name.value));
    let _ = writeln!(
        out,
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{GRAY}"/></marker><marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{BLUE}"/></marker></defs>"#
    );
    if let Some(start) = graph.initial().and_then(|i| placed.states.get(i)) {
        let (cx, top) = (start.center_x(), start.y);
        let _ = writeln!(
            out,
            r#"<g class="start"><circle cx="{cx:.1}" cy="{:.1}" r="4" fill="{GRAY}"/><line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{top:.1}" stroke="{GRAY}" marker-end="url(#arrow)"/></g>"#,
            top - MARGIN + 6.0,
            top - MARGIN + 10.0
        );
    }
    let right_edge = placed.width - 80.0 + MARGIN;
    for (t, transition) in pipeline.transitions.iter().enumerate() {
        let (Some(from), Some(to)) = (
            graph.state_index(&transition.from.value),
            graph.state_index(&transition.to.value),
        ) else {
            continue;
        };
        let (Some(a), Some(b)) = (placed.states.get(from), placed.states.get(to)) else {
            continue;
        };
        let (d, label_at) = edge_path(a, b, from == to, right_edge, t);
        let is_taken = taken.contains(&t);
        let mut class = String::from("edge");
        if is_taken {
            class.push_str(" taken");
        }
        if graph.is_shadowed(t) {
            class.push_str(" shadowed");
        }
        let (stroke, width, marker) = if is_taken {
            (BLUE, 2.5, "arrow-taken")
        } else {
            (GRAY, 1.2, "arrow")
        };
        let dash = if graph.is_shadowed(t) {
            r#" stroke-dasharray="3 3""#
        } else {
            ""
        };
        let label = transition_label(pipeline, graph, t);
        let _ = write!(
            out,
            r#"<g class="{class}" data-transition="{t}"><title>{} → {}{}{}</title><path d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}"{dash} marker-end="url(#{marker})"/>"#,
            escape(&transition.from.value),
            escape(&transition.to.value),
            if label.is_empty() { "" } else { ": " },
            escape(&label),
        );
        if !label.is_empty() {
            let short = box_label(&label);
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#333" paint-order="stroke" stroke="#fff" stroke-width="3">{}</text>"##,
                label_at.0,
                label_at.1,
                escape(&short)
            );
        }
        out.push_str("</g>\n");
    }
    for (i, state) in pipeline.states.iter().enumerate() {
        let Some(p) = placed.states.get(i) else {
            continue;
        };
        let mut class = String::from("state");
        let (mut fill, mut stroke, mut width) = ("#ffffff", GRAY, 1.2);
        if graph.is_terminal(i) && graph.is_failure(i) {
            class.push_str(" terminal failure");
            (fill, stroke) = ("#ffcdd2", "#c62828");
        } else if graph.is_terminal(i) {
            class.push_str(" terminal success");
            (fill, stroke) = ("#c8e6c9", "#2e7d32");
        }
        if state.pause {
            class.push_str(" pause");
        }
        if Some(i) == graph.initial() {
            class.push_str(" initial");
        }
        if visited.contains(&i) {
            class.push_str(" visited");
            if !graph.is_terminal(i) {
                fill = "#e3f2fd";
            }
            (stroke, width) = (BLUE, 2.0);
        }
        let is_current = current == Some(i);
        if is_current {
            class.push_str(" current");
            (stroke, width) = (ORANGE, 4.0);
        }
        let dash = if state.pause {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r##"<g class="{class}" data-state="{}"><title>{}{}</title><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{NODE_HEIGHT:.0}" rx="8" fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#111">{}</text>"##,
            escape(&state.id.value),
            escape(&state.id.value),
            if is_current { " (current)" } else { "" },
            p.x,
            p.y,
            p.width,
            p.center_x(),
            p.y + NODE_HEIGHT / 2.0 + 4.5,
            escape(&box_label(&state.id.value)),
        );
        if is_current {
            let _ = write!(
                out,
                r#"<text class="current-mark" x="{:.1}" y="{:.1}" font-size="11" fill="{ORANGE}">◀ here</text>"#,
                p.x + p.width + 6.0,
                p.y + NODE_HEIGHT / 2.0 + 4.0
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

/// The curve of one transition and where its label goes. Downward edges go from the bottom
/// of one box to the top of the other; upward and sideways ones bend out to the right of
/// the drawing (each transition a little further, so parallel ones stay apart); a
/// self-loop is a small loop on the box's right.
fn edge_path(
    a: &Placed,
    b: &Placed,
    self_loop: bool,
    right_edge: f64,
    t: usize,
) -> (String, (f64, f64)) {
    if self_loop {
        let (x, y) = (a.x + a.width, a.y + NODE_HEIGHT / 2.0);
        let d = format!(
            "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            x,
            y - 8.0,
            x + 40.0,
            y - 30.0,
            x + 40.0,
            y + 30.0,
            x,
            y + 8.0
        );
        return (d, (x + 30.0, y - 18.0));
    }
    if b.layer > a.layer {
        let (x1, y1) = (a.center_x(), a.y + NODE_HEIGHT);
        let (x2, y2) = (b.center_x(), b.y);
        let mid = (y1 + y2) / 2.0;
        let d = format!("M{x1:.1},{y1:.1} C{x1:.1},{mid:.1} {x2:.1},{mid:.1} {x2:.1},{y2:.1}");
        // Near the target, where edges that leave one box have parted.
        return (d, (x1 * 0.3 + x2 * 0.7, y1 * 0.3 + y2 * 0.7));
    }
    let bend = right_edge + 12.0 + (t % 6) as f64 * 9.0;
    let (x1, y1) = (a.x + a.width, a.y + NODE_HEIGHT / 2.0 + 5.0);
    let (x2, y2) = (b.x + b.width, b.y + NODE_HEIGHT / 2.0 - 5.0);
    let d = format!("M{x1:.1},{y1:.1} C{bend:.1},{y1:.1} {bend:.1},{y2:.1} {x2:.1},{y2:.1}");
    (d, (bend - 4.0, (y1 + y2) / 2.0))
}

/// Text for XML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(
            escape("<script>a&\"b'</script>"),
            "&lt;script&gt;a&amp;&quot;b&#39;&lt;/script&gt;"
        );
        assert_eq!(escape("x\u{1}y"), "x y");
    }
}
