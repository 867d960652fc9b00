//! The live view of a run on stderr: one line per state, action and transition. On a
//! terminal the running action shows a spinner and its elapsed time (redrawn in place by a
//! small ticker thread); otherwise plain lines, one per event (what tests and logs see).
//! Also answers hitl questions when both stdin and stderr are terminals.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use spur_engine::run::actions::HitlQuestion;
use spur_engine::run::journal::{Event, Phase, Record};
use spur_engine::run::RunObserver;

/// Set once a signal ends the run: no spinner draws again (the notice owns the line).
static SILENCED: AtomicBool = AtomicBool::new(false);

/// Stop every spinner from drawing again.
pub fn silence() {
    SILENCED.store(true, Ordering::SeqCst);
}

pub struct Progress {
    /// The run's id, once the runner said it.
    run_id: Option<String>,
    tty: bool,
    quiet: bool,
    ticker: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Progress {
    /// `quiet`: print nothing (e.g. `--json` with `--quiet`); stderr otherwise.
    pub fn new(quiet: bool) -> Self {
        Self {
            run_id: None,
            tty: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            quiet,
            ticker: None,
        }
    }

    fn line(&mut self, text: &str) {
        self.stop_ticker();
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    fn stop_ticker(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            stop.store(true, Ordering::SeqCst);
            let _ = handle.join();
            eprint!("\r\x1b[2K");
        }
    }

    fn start_ticker(&mut self, label: String) {
        if !self.tty || self.quiet {
            return;
        }
        self.stop_ticker();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let started = Instant::now();
        let handle = std::thread::spawn(move || {
            const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
            let mut frame = 0;
            while !flag.load(Ordering::SeqCst) && !SILENCED.load(Ordering::SeqCst) {
                let elapsed = started.elapsed().as_secs_f32();
                let spin = FRAMES.get(frame % FRAMES.len()).copied().unwrap_or('*');
                eprint!("\r\x1b[2K  {spin} {label} {elapsed:.1}s");
                let _ = std::io::stderr().flush();
                frame += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        self.ticker = Some((stop, handle));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_ticker();
    }
}

impl RunObserver for Progress {
    fn run_id(&mut self, run_id: &str) {
        self.run_id = Some(run_id.to_owned());
    }

    fn record(&mut self, record: &Record) {
        match &record.event {
            Event::RunStarted { pipeline_name, .. } => {
                let id = self.run_id.as_deref().unwrap_or("?");
                self.line(&format!("spur: running {pipeline_name} (run {id})"));
            }
            Event::Retried { state, .. } => {
                let id = self.run_id.as_deref().unwrap_or("?");
                self.line(&format!("spur: retrying run {id} from {state}"));
            }
            Event::StateEntered { state, iteration } => {
                self.line(&format!("● {state} (iteration {iteration})"));
            }
            Event::ActionStarted { kind, phase, .. } => {
                let label = match phase {
                    Phase::Enter => kind.clone(),
                    Phase::Exit => format!("{kind} (onExit)"),
                };
                self.start_ticker(label);
            }
            Event::ActionFinished {
                kind,
                ok,
                error,
                duration_ms,
                message,
                ..
            } => {
                let secs = *duration_ms as f64 / 1000.0;
                let text = if *ok {
                    match message {
                        Some(m) => format!("  ✓ {kind}: {m} ({secs:.2}s)"),
                        None => format!("  ✓ {kind} ({secs:.2}s)"),
                    }
                } else {
                    format!(
                        "  ✗ {kind}: {} ({secs:.2}s)",
                        super::run_failure::without_kind(
                            kind,
                            error.as_deref().unwrap_or("failed")
                        )
                    )
                };
                self.line(&text);
            }
            Event::GuardEvaluated {
                to,
                kind,
                passed,
                detail,
                ..
            } => {
                if !passed {
                    let why = detail
                        .as_deref()
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    self.line(&format!("  · {kind} guard → {to} did not pass{why}"));
                }
            }
            Event::Transition { from, to, .. } => {
                self.line(&format!("  → {from} → {to}"));
            }
            Event::Paused { state, prompt, .. } => {
                let what = prompt
                    .as_deref()
                    .map(|p| format!(": {p}"))
                    .unwrap_or_default();
                self.line(&format!("⏸ paused at {state}{what}"));
            }
            Event::Resumed { answer, .. } => {
                let what = answer
                    .as_deref()
                    .map(|a| format!(" with answer {a:?}"))
                    .unwrap_or_default();
                let id = self.run_id.as_deref().unwrap_or("?");
                self.line(&format!("spur: resuming run {id}{what}"));
            }
            Event::DoneGate {
                decision,
                verdict,
                message,
                forced,
                ..
            } => {
                let v = verdict.as_deref().unwrap_or("-");
                let m = message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                let how = if *forced {
                    ", forced by --force-done"
                } else {
                    ""
                };
                self.line(&format!("  done gate: {decision} (verdict {v}{how}){m}"));
            }
            Event::Interrupted { state } => self.line(&format!("interrupted at {state}")),
            Event::RunFinished { .. } => self.stop_ticker(),
            // A lifecycle instance's records: never written by a run.
            Event::ActionProcess { .. }
            | Event::LifecycleBound { .. }
            | Event::TransitionRequested { .. }
            | Event::Reseeded { .. }
            | Event::TransitionDenied { .. } => {}
        }
    }

    fn ask(&mut self, question: &HitlQuestion) -> Option<String> {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return None;
        }
        self.stop_ticker();
        loop {
            eprint!("? {} [{}] ", question.prompt, question.shown_choices("/"));
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            match std::io::stdin().read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Some(answer) = question.answer_for(line.trim()) {
                return Some(answer);
            }
            eprintln!("  answer one of: {}", question.shown_choices(", "));
        }
    }
}
