//! HTML as the pages write it: every value from a file goes through [`escape`], and every
//! page through [`page`] (one layout, one stylesheet, the script as a file of its own so
//! the content security policy can refuse inline script).

use std::fmt::Write;

/// Text for HTML content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    escape_into(&mut out, text);
    out
}

/// [`escape`], appended to `out`.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// A path segment for a link (`/runs/ID`): anything but unreserved characters percent-encoded.
pub(crate) fn url_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

const STYLE: &str = r#"
body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{background:#263238;color:#eceff1;padding:.6rem 1.2rem;display:flex;gap:1.4rem;align-items:center}
header a{color:#eceff1;text-decoration:none}header a.here{font-weight:700;text-decoration:underline}
header .brand{font-weight:700;letter-spacing:.05em}
main{padding:1rem 1.2rem}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e0e0e0;font-size:.9rem;vertical-align:top}
th{background:#eceff1}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.82rem}
pre{background:#263238;color:#eceff1;padding:.5rem;overflow:auto;max-height:16rem;white-space:pre-wrap}
.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.8rem;background:#e0e0e0}
.o-done,.o-completed{background:#c8e6c9}.o-failed{background:#ffcdd2}.o-paused{background:#fff3cd}
.o-running{background:#bbdefb}.o-interrupted{background:#e1bee7}
.question{background:#fff3cd;border:1px solid #f0c36d;padding:.7rem 1rem;margin:.8rem 0;border-radius:.4rem}
.question button{margin-right:.5rem;font-size:1rem;padding:.3rem .9rem}
.graph{background:#fff;border:1px solid #e0e0e0;overflow:auto;padding:.4rem}
.board{display:flex;gap:.8rem;align-items:flex-start;overflow-x:auto}
.column{background:#eceff1;border-radius:.4rem;padding:.5rem;min-width:13rem;flex:1}
.card{background:#fff;border-radius:.3rem;padding:.4rem .5rem;margin:.4rem 0;box-shadow:0 1px 2px #0002;font-size:.88rem}
.tampered{color:#b71c1c;font-weight:700}
.ok{color:#2e7d32;font-weight:700}.bad{color:#b71c1c;font-weight:700}
form.filters{margin:.5rem 0 1rem;display:flex;gap:.6rem;align-items:end;flex-wrap:wrap}
.timeline li{margin:.15rem 0;font-size:.88rem}
.muted{color:#757575}
"#;

/// Which page a header link is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Runs,
    Tasks,
    Audit,
}

/// A whole page: the header with the sections, `title` and `body` (already HTML). `live`:
/// the `/events` query the page's script listens on (`None`: no live updates).
pub(crate) fn page(section: Section, title: &str, body: &str, live: Option<&str>) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    out.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(out, "<title>{} — spur</title>", escape(title));
    let _ = write!(out, "<style>{STYLE}</style>");
    out.push_str("<script src=\"/ui.js\" defer></script></head>");
    match live {
        Some(query) => {
            let _ = write!(out, "<body data-events=\"{}\">", escape(query));
        }
        None => out.push_str("<body>"),
    }
    out.push_str("<header><span class=\"brand\">spur</span>");
    for (s, href, name) in [
        (Section::Runs, "/", "Runs"),
        (Section::Tasks, "/tasks", "Tasks"),
        (Section::Audit, "/audit", "Audit"),
    ] {
        let here = if s == section { " class=\"here\"" } else { "" };
        let _ = write!(out, "<a href=\"{href}\"{here}>{name}</a>");
    }
    out.push_str("</header><main>");
    out.push_str(body);
    out.push_str("</main></body></html>\n");
    out
}

/// The outcome as a colored badge.
pub(crate) fn outcome_badge(outcome: &str) -> String {
    let class: String = outcome
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!(
        "<span class=\"badge o-{class}\" data-outcome=\"{}\">{}</span>",
        escape(outcome),
        escape(outcome)
    )
}

/// The page's script: live updates over server-sent events, no polling loop.
pub(crate) const SCRIPT: &str = r#"// spur ui: live updates. The server pushes each journal record as it is written
// (/events, server-sent events); a record that changes what the page shows reloads it.
(function () {
  var query = document.body && document.body.getAttribute('data-events');
  if (query === null || !window.EventSource) { return; }
  var source = new EventSource('/events' + query);
  var timer = null;
  var reloadSoon = function () {
    if (timer) { return; }
    timer = setTimeout(function () { window.location.reload(); }, 300);
  };
  source.addEventListener('record', function (e) {
    var record;
    try { record = JSON.parse(e.data); } catch (_) { return; }
    var list = document.getElementById('timeline');
    if (list && record.runId === list.getAttribute('data-run')) {
      var li = document.createElement('li');
      li.textContent = '#' + record.seq + ' ' + record.at + ' ' + record.event;
      list.appendChild(li);
    }
    if (record.event !== 'guard-evaluated' && record.event !== 'action-process') {
      reloadSoon();
    }
  });
})();
"#;
