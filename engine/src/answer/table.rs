//! One Markdown table row split into cells, the way a verifier's answer writes them.
//! Tolerant of column padding, trailing spaces, escaped pipes (`\|`) and inline code spans
//! (a `|` inside a closed code span never splits a cell); an unterminated code span is
//! literal text, as in CommonMark.

use std::collections::HashMap;

/// A table row: its trimmed cells, and whether it ended with a closing `|`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) cells: Vec<String>,
    /// `false` when the row lacks its closing pipe — an interrupted or truncated row.
    pub(crate) terminated: bool,
}

/// Split `line` into cells when it is a table row (starts with `|` after indentation).
pub(crate) fn split_row(line: &str) -> Option<Row> {
    let trimmed = line.trim();
    let body = trimmed.strip_prefix('|')?;
    let closers = CodeSpanClosers::of(body);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut terminated = false;
    let mut iter = body.char_indices().peekable();
    while let Some((at, c)) = iter.next() {
        terminated = false;
        match c {
            '\\' if iter.peek().map(|&(_, n)| n) == Some('|') => {
                iter.next();
                cell.push('|');
            }
            '|' => {
                cells.push(cell.trim().to_owned());
                cell.clear();
                terminated = true;
            }
            '`' => {
                let run = backtick_run(body, at);
                match closers.closing(at, run) {
                    Some(close) => {
                        let span_end = close + run;
                        let span = body.get(at..span_end).unwrap_or("");
                        cell.push_str(&span.replace("\\|", "|"));
                        while iter.peek().is_some_and(|&(i, _)| i < span_end) {
                            iter.next();
                        }
                    }
                    None => {
                        for _ in 0..run {
                            cell.push('`');
                        }
                        while iter.peek().is_some_and(|&(i, _)| i < at + run) {
                            iter.next();
                        }
                    }
                }
            }
            other => cell.push(other),
        }
    }
    if !terminated {
        cells.push(cell.trim().to_owned());
    }
    Some(Row { cells, terminated })
}

/// Whether `row` is a delimiter row (`|---|:--:|`).
pub(crate) fn is_delimiter(row: &Row) -> bool {
    !row.cells.is_empty()
        && row.cells.iter().all(|cell| {
            let inner = cell.strip_prefix(':').unwrap_or(cell);
            let inner = inner.strip_suffix(':').unwrap_or(inner);
            !inner.is_empty() && inner.chars().all(|c| c == '-')
        })
}

/// A cell's value with one wrapping inline code span removed: `` `R1` `` → `R1`.
pub(crate) fn unwrap_code(cell: &str) -> &str {
    let cell = cell.trim();
    let run = cell.chars().take_while(|&c| c == '`').count();
    if run == 0 || cell.len() < 2 * run + 1 {
        return cell;
    }
    let (Some(ticks), Some(rest)) = (cell.get(..run), cell.get(run..)) else {
        return cell;
    };
    match rest.strip_suffix(ticks) {
        Some(inner) if !inner.contains('`') && !inner.trim().is_empty() => inner.trim(),
        _ => cell,
    }
}

fn backtick_run(text: &str, at: usize) -> usize {
    text.get(at..)
        .map_or(0, |rest| rest.bytes().take_while(|&b| b == b'`').count())
}

/// Where each backtick run of a given length starts, so finding a code span's closer is a
/// binary search rather than a rescan (a hostile line of unmatched runs stays linear-ish).
struct CodeSpanClosers {
    by_len: HashMap<usize, Vec<usize>>,
}

impl CodeSpanClosers {
    fn of(text: &str) -> Self {
        let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'`' {
                let start = i;
                while i < bytes.len() && bytes[i] == b'`' {
                    i += 1;
                }
                by_len.entry(i - start).or_default().push(start);
            } else {
                i += 1;
            }
        }
        Self { by_len }
    }

    /// Start of the first run of exactly `len` backticks after the run opening at `open`.
    fn closing(&self, open: usize, len: usize) -> Option<usize> {
        let starts = self.by_len.get(&len)?;
        let next = starts.partition_point(|&s| s <= open);
        starts.get(next).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(line: &str) -> Vec<String> {
        split_row(line).unwrap().cells
    }

    #[test]
    fn splits_padded_cells_and_ignores_trailing_spaces() {
        let row = split_row("|  R1 |MET|   `a.rs:1`   |   ").unwrap();
        assert_eq!(row.cells, ["R1", "MET", "`a.rs:1`"]);
        assert!(row.terminated);
    }

    #[test]
    fn escaped_pipe_stays_in_its_cell() {
        assert_eq!(cells(r"| R1 | MET | a \| b |"), ["R1", "MET", "a | b"]);
    }

    #[test]
    fn pipe_inside_a_closed_code_span_does_not_split() {
        assert_eq!(
            cells("| R1 | MET | `a | b` and `c \\| d` |"),
            ["R1", "MET", "`a | b` and `c | d`"]
        );
    }

    #[test]
    fn double_backtick_spans_close_only_on_the_same_run_length() {
        assert_eq!(cells("| x | ``a ` | b`` |"), ["x", "``a ` | b``"]);
    }

    #[test]
    fn unterminated_code_span_is_literal() {
        assert_eq!(
            cells("| R1 | MET | `oops | x |"),
            ["R1", "MET", "`oops", "x"]
        );
    }

    #[test]
    fn row_without_closing_pipe_is_unterminated() {
        let row = split_row("| R1 | MET | a.rs:1").unwrap();
        assert_eq!(row.cells, ["R1", "MET", "a.rs:1"]);
        assert!(!row.terminated);
    }

    #[test]
    fn non_rows_and_delimiters() {
        assert!(split_row("R1 | MET").is_none());
        assert!(is_delimiter(&split_row("|---|:--:|---:|").unwrap()));
        assert!(!is_delimiter(&split_row("| R1 | --- |").unwrap()));
        assert!(!is_delimiter(&split_row("|  |").unwrap()));
    }

    #[test]
    fn unwraps_one_code_span() {
        assert_eq!(unwrap_code(" `R1` "), "R1");
        assert_eq!(unwrap_code("``AC-1``"), "AC-1");
        assert_eq!(unwrap_code("`a` and `b`"), "`a` and `b`");
        assert_eq!(unwrap_code("`"), "`");
        assert_eq!(unwrap_code("``"), "``");
    }

    #[test]
    fn multibyte_text_never_panics() {
        assert_eq!(cells("| é | `ü|` | ß"), ["é", "`ü|`", "ß"]);
    }

    proptest::proptest! {
        /// Arbitrary text never panics any of the cell-level readers, and what they return
        /// keeps their promises: trimmed cells split at pipes, delimiter rows of dashes,
        /// unwrapped code and scanned evidence taken from the cell, tidy labels, links that
        /// only ever shorten a cell, answer lines that exist.
        #[test]
        fn arbitrary_text_never_panics(text in "[|`\\\\ a-zé:*/.\\[\\](){}\\-0-9]{0,80}|.{0,80}") {
            use crate::answer::ac_label::{collapse, strip_links, AcLabel};
            use proptest::{prop_assert, prop_assert_eq};

            let row = split_row(&text);
            prop_assert_eq!(row.is_some(), text.trim().starts_with('|'));
            if let Some(row) = row {
                prop_assert!(row.cells.len() <= text.matches('|').count(), "{:?}", row);
                prop_assert!(!row.terminated || text.trim().ends_with('|'), "{:?}", row);
                let dashes = |c: &String| !c.is_empty() && c.chars().all(|ch| "-:".contains(ch));
                if is_delimiter(&row) {
                    prop_assert!(row.cells.iter().all(dashes), "{:?}", row);
                }
                for cell in &row.cells {
                    prop_assert_eq!(cell.as_str(), cell.trim());
                    let unwrapped = unwrap_code(cell);
                    prop_assert!(cell.contains(unwrapped), "{:?} from {:?}", unwrapped, cell);
                    prop_assert_eq!(unwrapped.is_empty(), cell.is_empty());
                    let scan = crate::answer::anchor::scan_evidence(cell);
                    let paths = scan.citations.iter().map(|c| &c.path);
                    for found in paths.chain(&scan.globs).chain(&scan.bare_paths) {
                        prop_assert!(!found.is_empty(), "{:?}", scan);
                        prop_assert!(cell.contains(found.as_str()), "{:?} in {:?}", found, cell);
                    }
                    let label = AcLabel::parse(cell);
                    prop_assert_eq!(&label.title, &collapse(&label.title));
                    prop_assert!(label.tags.iter().all(|t| *t == t.to_lowercase()), "{:?}", label);
                    prop_assert!(label.aliases.iter().all(|a| !a.is_empty()), "{:?}", label);
                    let unlinked = strip_links(cell);
                    prop_assert!(unlinked.len() <= cell.len());
                    if !cell.contains("](") {
                        prop_assert_eq!(&unlinked, cell);
                    }
                }
            }
            let answer = crate::answer::parse::parse_answer(&text);
            let lines = text.lines().count();
            if lines <= 1 {
                // A table needs a header and a delimiter row under it.
                prop_assert!(answer.requirements.is_empty() && answer.acceptance.is_empty());
            }
            let at = answer
                .requirements
                .iter()
                .map(|r| r.line)
                .chain(answer.acceptance.iter().map(|r| r.line))
                .chain(answer.verdict_line.iter().map(|v| v.line))
                .chain(answer.requirements_table)
                .chain(answer.acceptance_table)
                .chain(answer.diagnostics.iter().filter_map(|d| d.line));
            for line in at {
                prop_assert!((1..=lines).contains(&line), "line {} of {}", line, lines);
            }
        }
    }
}
