//! Pipeline loader + checker: any text loads to a pipeline or a diagnostic without a
//! panic; a loaded pipeline is checked, its transition graph built and drawn, and every
//! diagnostic renders (spans stay inside the text) — as `spur check` and `spur graph` do.
#![no_main]

use libfuzzer_sys::fuzz_target;
use miette::{GraphicalReportHandler, GraphicalTheme};
use spur_engine::graph::{to_dot, to_mermaid, TransitionGraph};
use spur_engine::pipeline::{load, CheckedPipeline};
use spur_engine::source::SourceFile;

fn render(diagnostic: &dyn miette::Diagnostic) {
    let mut out = String::new();
    let _ = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, diagnostic);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = SourceFile::new("fuzz.yaml", text);
    let loaded = match load(&source) {
        Ok(loaded) => loaded,
        Err(failure) => {
            render(&failure);
            let _ = failure.to_json();
            return;
        }
    };
    let graph = TransitionGraph::new(&loaded.pipeline);
    let _ = to_dot(&loaded.pipeline, &graph);
    let _ = to_mermaid(&loaded.pipeline, &graph);
    let _ = graph.unreachable_states();
    let _ = graph.states_that_cannot_terminate();
    let diagnostics = match CheckedPipeline::new(loaded) {
        Ok((_checked, warnings)) => warnings,
        Err(errors) => errors,
    };
    for d in &diagnostics {
        render(d);
        let json = d.to_json();
        let _ = json;
    }
});
