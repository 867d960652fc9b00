//! Where each state sits in a drawing, without Graphviz: a layered layout. A state's layer is
//! its distance (in transitions) from the initial state, states no path reaches go below the
//! rest; within a layer, states keep declaration order, then one pass orders each layer by
//! the mean position of its parents, which undoes most crossings of a pipeline's
//! mostly-forward flow. Back edges and self-loops are the drawer's business.

use std::collections::VecDeque;

use super::TransitionGraph;
use crate::pipeline::Pipeline;

/// Width of one character of a label, in SVG units (a 13px sans-serif, roughly).
const CHAR_WIDTH: f64 = 7.6;
/// Padding left and right of a label inside its box.
const PAD_X: f64 = 14.0;
/// Height of a state's box.
pub(crate) const NODE_HEIGHT: f64 = 34.0;
/// Space between two boxes of a layer.
const GAP_X: f64 = 110.0;
/// Space between two layers (edges and their labels go here).
const GAP_Y: f64 = 64.0;
/// The margin around the drawing.
pub(crate) const MARGIN: f64 = 24.0;
/// Longest label drawn in a box, in characters (the cut adds `…`).
pub(crate) const LABEL_CHARS: usize = 28;

/// One state's box: its top-left corner and its size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Placed {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) width: f64,
    pub(crate) layer: usize,
}

impl Placed {
    pub(crate) fn center_x(&self) -> f64 {
        self.x + self.width / 2.0
    }
}

/// The boxes of every state (by state index) and the size of the whole drawing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub(crate) states: Vec<Placed>,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

/// A label as drawn in a box: at most [`LABEL_CHARS`] characters.
pub(crate) fn box_label(id: &str) -> String {
    if id.chars().count() <= LABEL_CHARS {
        return id.to_owned();
    }
    let mut cut: String = id.chars().take(LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Lay `pipeline`'s states out in layers from the initial state.
pub(crate) fn layout(pipeline: &Pipeline, graph: &TransitionGraph) -> Layout {
    let n = pipeline.states.len();
    let layers = layer_of_each_state(pipeline, graph, n);
    let layer_count = layers.iter().copied().max().map_or(0, |m| m + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (state, &layer) in layers.iter().enumerate() {
        if let Some(row) = rows.get_mut(layer) {
            row.push(state);
        }
    }
    let parents = parents_of_each_state(pipeline, graph, n);
    // One barycenter pass, top to bottom: a state's place is the mean place of its parents
    // in the layer above (states without one keep their place).
    let mut place = vec![0.0_f64; n];
    for row in &mut rows {
        for (i, &s) in row.iter().enumerate() {
            if let Some(p) = place.get_mut(s) {
                *p = i as f64;
            }
        }
    }
    for l in 1..rows.len() {
        let keyed: Vec<(f64, usize)> = rows
            .get(l)
            .map(|row| {
                row.iter()
                    .map(|&s| {
                        let above: Vec<f64> = parents
                            .get(s)
                            .into_iter()
                            .flatten()
                            .filter(|&&p| layers.get(p) == Some(&(l - 1)))
                            .filter_map(|&p| place.get(p).copied())
                            .collect();
                        let key = if above.is_empty() {
                            place.get(s).copied().unwrap_or(0.0)
                        } else {
                            above.iter().sum::<f64>() / above.len() as f64
                        };
                        (key, s)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut keyed = keyed;
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if let Some(row) = rows.get_mut(l) {
            *row = keyed.iter().map(|&(_, s)| s).collect();
            for (i, &s) in row.iter().enumerate() {
                if let Some(p) = place.get_mut(s) {
                    *p = i as f64;
                }
            }
        }
    }

    let widths: Vec<f64> = pipeline
        .states
        .iter()
        .map(|s| box_label(&s.id.value).chars().count() as f64 * CHAR_WIDTH + 2.0 * PAD_X)
        .collect();
    let row_width = |row: &Vec<usize>| -> f64 {
        let boxes: f64 = row.iter().filter_map(|&s| widths.get(s)).sum();
        boxes + GAP_X * row.len().saturating_sub(1) as f64
    };
    let widest = rows.iter().map(row_width).fold(0.0_f64, f64::max);
    let mut states = vec![
        Placed {
            x: 0.0,
            y: 0.0,
            width: 0.0,
            layer: 0,
        };
        n
    ];
    for (l, row) in rows.iter().enumerate() {
        // Each row centered under the widest.
        let mut x = MARGIN + (widest - row_width(row)) / 2.0;
        let y = MARGIN + l as f64 * (NODE_HEIGHT + GAP_Y);
        for &s in row {
            let width = widths.get(s).copied().unwrap_or(2.0 * PAD_X);
            if let Some(placed) = states.get_mut(s) {
                *placed = Placed {
                    x,
                    y,
                    width,
                    layer: l,
                };
            }
            x += width + GAP_X;
        }
    }
    // Room on the right for back edges, which bend out past the widest row.
    let width = widest + 2.0 * MARGIN + 80.0;
    let height = 2.0 * MARGIN + layer_count as f64 * (NODE_HEIGHT + GAP_Y) - GAP_Y;
    Layout {
        states,
        width,
        height: height.max(2.0 * MARGIN),
    }
}

/// Breadth-first distance from the initial state; states it never reaches go one layer
/// below the deepest reached one.
fn layer_of_each_state(pipeline: &Pipeline, graph: &TransitionGraph, n: usize) -> Vec<usize> {
    let mut layer: Vec<Option<usize>> = vec![None; n];
    let mut queue = VecDeque::new();
    if let Some(initial) = graph.initial() {
        if let Some(slot) = layer.get_mut(initial) {
            *slot = Some(0);
            queue.push_back(initial);
        }
    }
    while let Some(s) = queue.pop_front() {
        let next = layer.get(s).copied().flatten().map_or(0, |l| l + 1);
        for &t in graph.outgoing(s) {
            let Some(to) = pipeline
                .transitions
                .get(t)
                .and_then(|t| graph.state_index(&t.to.value))
            else {
                continue;
            };
            if let Some(slot @ None) = layer.get_mut(to) {
                *slot = Some(next);
                queue.push_back(to);
            }
        }
    }
    let below = layer.iter().flatten().max().map_or(0, |m| m + 1);
    layer.into_iter().map(|l| l.unwrap_or(below)).collect()
}

fn parents_of_each_state(
    pipeline: &Pipeline,
    graph: &TransitionGraph,
    n: usize,
) -> Vec<Vec<usize>> {
    let mut parents = vec![Vec::new(); n];
    for t in &pipeline.transitions {
        if let (Some(from), Some(to)) = (
            graph.state_index(&t.from.value),
            graph.state_index(&t.to.value),
        ) {
            if let Some(list) = parents.get_mut(to) {
                list.push(from);
            }
        }
    }
    parents
}

#[cfg(test)]
mod tests {
    use super::layout;
    use crate::graph::TransitionGraph;
    use crate::pipeline::load;
    use crate::source::SourceFile;

    #[test]
    fn states_are_layered_by_distance_and_unreached_ones_go_last() {
        let text = "name: l\ninitialState: a\n\
            states: [{id: a}, {id: b}, {id: c}, {id: lost}]\n\
            transitions:\n\
            \x20 - {from: a, to: b}\n\
            \x20 - {from: b, to: c}\n\
            \x20 - {from: c, to: a}\n\
            \x20 - {from: a, to: c}\n";
        let pipeline = load(&SourceFile::new("l.yaml", text.to_owned()))
            .map(|l| l.pipeline)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let graph = TransitionGraph::new(&pipeline);
        let placed = layout(&pipeline, &graph);
        let layers: Vec<usize> = placed.states.iter().map(|p| p.layer).collect();
        assert_eq!(
            layers,
            vec![0, 1, 1, 2],
            "c is one step from a; lost is below all"
        );
        let (b, c) = (placed.states[1], placed.states[2]);
        assert!(b.x + b.width <= c.x, "boxes of one layer do not overlap");
        assert!(placed.height > placed.states[3].y);
    }
}
