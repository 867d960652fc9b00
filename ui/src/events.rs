//! `/events`: server-sent events. Each journal record is pushed as it is written, as an
//! event named `record` whose data is `{runId, seq, at, event, record}`. The server watches
//! the journals (their sizes, a few times a second: they are appended by other processes,
//! and a stat costs nothing); the page holds one connection and never polls. `?run=RUN`
//! follows one run from `after` (the last seq the page shows); without it, every run, from
//! what exists when the stream opens.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use spur_engine::run::journal::Record;
use spur_engine::run::runs_list::read_run;
use spur_engine::run::RunId;
use spur_engine::store::state_dir::StateDir;

/// How often the journals are looked at.
const TICK: Duration = Duration::from_millis(200);
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
pub(crate) fn stream(out: &mut dyn Write, state_dir: &StateDir, follow: Follow) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n: spur ui\n\n";
    if out
        .write_all(head.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return;
    }
    // Per run: the journal's size last looked at and the last seq sent.
    let mut seen: HashMap<RunId, (u64, u64)> = HashMap::new();
    match &follow {
        Follow::Run { id, after } => {
            seen.insert(id.clone(), (0, *after));
        }
        Follow::All => {
            for id in run_ids(state_dir) {
                let size = journal_size(state_dir, &id);
                let last = read_run(state_dir, &id)
                    .ok()
                    .and_then(|c| c.records.last().map(|r| r.seq))
                    .unwrap_or(0);
                seen.insert(id, (size, last));
            }
        }
    }
    let mut quiet_since = Instant::now();
    loop {
        if let Follow::All = follow {
            for id in run_ids(state_dir) {
                seen.entry(id).or_insert((0, 0));
            }
        }
        let mut sent = false;
        for (id, (size, last)) in &mut seen {
            let now = journal_size(state_dir, id);
            if now == *size {
                continue;
            }
            *size = now;
            let Ok(content) = read_run(state_dir, id) else {
                continue;
            };
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
        std::thread::sleep(TICK);
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

fn run_ids(state_dir: &StateDir) -> Vec<RunId> {
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
