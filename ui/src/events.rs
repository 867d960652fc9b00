//! `/events`: server-sent events. Each journal record is pushed as it is written, as an
//! event named `record` whose data is `{runId, seq, at, event, record}`. The server watches
//! the journals (their sizes, a few times a second: they are appended by other processes,
//! and a stat costs nothing); the page holds one connection and never polls. `?run=RUN`
//! follows one run from `after` (the last seq the page shows); without it, every run, from
//! what exists when the stream opens.
//!
//! With a Restate engine the records are the server's: the server asks it for the records
//! of each run not yet finished, twice a second (it has no size to look at first).

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use spur_engine::run::journal::{Event, Record};
use spur_engine::run::RunId;
use spur_engine::store::state_dir::StateDir;

use crate::source::{self, Engine};

/// How often the journals are looked at.
const TICK: Duration = Duration::from_millis(200);
/// How often the engine is asked (each look is a request per unfinished run).
const ENGINE_TICK: Duration = Duration::from_millis(500);
/// A comment line this often finds a client that has gone away.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What one stream follows.
pub(crate) enum Follow {
    /// One run, from the record after `after`.
    Run { id: RunId, after: u64 },
    /// Every run.
    All,
}

/// Serve the stream on `out` (the raw connection) until the client goes away.
pub(crate) fn stream(out: &mut dyn Write, state_dir: &StateDir, engine: &Engine, follow: Follow) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n: spur ui\n\n";
    if out
        .write_all(head.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return;
    }
    // Per run: what was looked at last (the journal's size; on the engine, whether the
    // run had finished) and the last seq sent.
    let mut seen: HashMap<RunId, (u64, u64)> = HashMap::new();
    match &follow {
        Follow::Run { id, after } => {
            seen.insert(id.clone(), (0, *after));
        }
        Follow::All => {
            for id in run_ids(state_dir, engine) {
                let records = source::read(state_dir, engine, &id)
                    .map(|c| c.records)
                    .unwrap_or_default();
                let last = records.last().map_or(0, |r| r.seq);
                seen.insert(id.clone(), (marker(state_dir, engine, &id, &records), last));
            }
        }
    }
    let tick = match engine {
        Engine::Local => TICK,
        Engine::Restate { .. } => ENGINE_TICK,
    };
    let mut quiet_since = Instant::now();
    loop {
        if let Follow::All = follow {
            for id in run_ids(state_dir, engine) {
                seen.entry(id).or_insert((0, 0));
            }
        }
        let mut sent = false;
        for (id, (looked, last)) in &mut seen {
            let now = match engine {
                Engine::Local => journal_size(state_dir, id),
                Engine::Restate { .. } if *looked == FINISHED => continue,
                Engine::Restate { .. } => 0,
            };
            if matches!(engine, Engine::Local) && now == *looked {
                continue;
            }
            let Ok(content) = source::read(state_dir, engine, id) else {
                continue;
            };
            *looked = marker(state_dir, engine, id, &content.records);
            let from = *last;
            for record in content.records.iter().filter(|r| r.seq > from) {
                if out.write_all(event(id, record).as_bytes()).is_err() {
                    return;
                }
                *last = record.seq;
                sent = true;
            }
        }
        if sent {
            if out.flush().is_err() {
                return;
            }
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= KEEP_ALIVE {
            if out
                .write_all(b": keep-alive\n\n")
                .and_then(|()| out.flush())
                .is_err()
            {
                return;
            }
            quiet_since = Instant::now();
        }
        std::thread::sleep(tick);
    }
}

/// On the engine: a run whose last record ends it, never read again.
const FINISHED: u64 = 1;

/// What is looked at to tell whether a run has new records: the journal's size locally;
/// on the engine, whether it has finished (an unfinished run is read again each tick).
fn marker(state_dir: &StateDir, engine: &Engine, id: &RunId, records: &[Record]) -> u64 {
    match engine {
        Engine::Local => journal_size(state_dir, id),
        Engine::Restate { .. } => u64::from(matches!(
            records.last().map(|r| &r.event),
            Some(Event::RunFinished { .. })
        )),
    }
}

/// One `record` event.
fn event(id: &RunId, record: &Record) -> String {
    let data = serde_json::json!({
        "runId": id.as_str(),
        "seq": record.seq,
        "at": record.at,
        "event": record.event.name(),
        "record": record,
    });
    format!("event: record\ndata: {data}\n\n")
}

fn run_ids(state_dir: &StateDir, engine: &Engine) -> Vec<RunId> {
    if let Engine::Restate { ingress } = engine {
        return spur_restate::client::runs(ingress)
            .unwrap_or_default()
            .iter()
            .filter_map(|id| RunId::parse(id).ok())
            .collect();
    }
    std::fs::read_dir(state_dir.runs_dir())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| RunId::parse(&e.file_name().to_string_lossy()).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn journal_size(state_dir: &StateDir, id: &RunId) -> u64 {
    std::fs::metadata(state_dir.runs_dir().join(id.as_str()).join("journal.jsonl"))
        .map(|m| m.len())
        .unwrap_or(0)
}
