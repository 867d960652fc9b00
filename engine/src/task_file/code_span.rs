//! Inline code spans as CommonMark reads them: a run of N backticks opens a span that the
//! next run of exactly N backticks closes; an unmatched run is literal text. The first
//! non-blank span of a criterion is the command it names.

/// The contents of the first non-blank code span in `text`, with one leading and one
/// trailing space stripped when both are there (CommonMark's rule).
pub(crate) fn first_code_span(text: &str) -> Option<&str> {
    code_spans(text).find(|span| !span.trim().is_empty())
}

/// Every code span of `text`, in order.
fn code_spans(text: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || loop {
        let rest = text.get(at..)?;
        let open = rest.find('`')?;
        let run = backtick_run(rest.get(open..)?);
        let body_start = at + open + run;
        match closing_run(text.get(body_start..)?, run) {
            Some(len) => {
                at = body_start + len + run;
                return text.get(body_start..body_start + len).map(strip_one_space);
            }
            None => at = body_start,
        }
    })
}

/// How many backticks `text` starts with.
fn backtick_run(text: &str) -> usize {
    text.bytes().take_while(|&b| b == b'`').count()
}

/// The offset in `body` of the first run of exactly `run` backticks.
fn closing_run(body: &str, run: usize) -> Option<usize> {
    let mut at = 0;
    while let Some(found) = body.get(at..)?.find('`') {
        let start = at + found;
        let len = backtick_run(body.get(start..)?);
        if len == run {
            return Some(start);
        }
        at = start + len;
    }
    None
}

fn strip_one_space(span: &str) -> &str {
    match span.strip_prefix(' ').and_then(|s| s.strip_suffix(' ')) {
        Some(inner) if !inner.trim().is_empty() => inner,
        _ => span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_span() {
        assert_eq!(
            first_code_span("`grep -q 'hello, world' greeting.txt` passes, then `x`"),
            Some("grep -q 'hello, world' greeting.txt")
        );
        assert_eq!(first_code_span("run `` a`b `` now"), Some("a`b"));
        assert_eq!(first_code_span("no code here"), None);
    }

    #[test]
    fn unmatched_and_blank_runs_are_not_spans() {
        assert_eq!(first_code_span("a ```yaml fence (not closed)"), None);
        assert_eq!(first_code_span("`` then `late`"), Some("late"));
        assert_eq!(
            first_code_span("` ` blank, then `./check`"),
            Some("./check")
        );
        assert_eq!(first_code_span("`"), None);
        assert_eq!(first_code_span("é`ü`"), Some("ü"));
    }
}
