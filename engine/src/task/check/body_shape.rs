//! What a section body looks like, as the format rules ask it: only placeholders, a
//! `file:line` citation, a P1–P4 findings table, R-numbered items, a checklist, a last
//! `Verdict:`. Plain string scanning, the reference's rules one for one.

/// Only placeholders: nothing left once HTML comments, `> TBD` lines and blanks are gone.
pub(crate) fn is_placeholder(body: &str) -> bool {
    without_comments(body)
        .lines()
        .all(|line| line.trim().is_empty() || is_tbd(line))
}

fn is_tbd(line: &str) -> bool {
    line.trim()
        .strip_prefix('>')
        .is_some_and(|rest| rest.trim().eq_ignore_ascii_case("tbd"))
}

/// `body` with every `<!-- … -->` removed (an unclosed one runs to the end).
pub(crate) fn without_comments(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find("<!--") {
        out.push_str(rest.get(..start).unwrap_or(""));
        let after = rest.get(start + 4..).unwrap_or("");
        rest = match after.find("-->") {
            Some(end) => after.get(end + 3..).unwrap_or(""),
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// At least one `file:line` citation: a code span `` `path:12` `` / `` `path:3-9` ``, a
/// bare `name.ext:12`, or a table row with a file path and a line number in adjacent cells.
pub(crate) fn has_file_line_citation(body: &str) -> bool {
    code_spans(body).any(ends_with_line_ref)
        || has_bare_file_line(body)
        || has_adjacent_file_line_cells(body)
}

/// The contents of single-backtick code spans on each line.
fn code_spans(body: &str) -> impl Iterator<Item = &str> {
    body.lines().flat_map(|line| {
        line.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
    })
}

/// `path:12` or `path:3-9`, with a non-empty path.
fn ends_with_line_ref(text: &str) -> bool {
    let Some((path, lines)) = text.rsplit_once(':') else {
        return false;
    };
    !path.is_empty() && is_line_spec(lines)
}

/// `12` or `3-9`.
fn is_line_spec(text: &str) -> bool {
    let (first, second) = match text.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(first) && second.is_none_or(digits)
}

/// A bare `x.ext:12`: a character that is neither blank nor a backtick, `.`, word
/// characters, `:`, a digit.
fn has_bare_file_line(body: &str) -> bool {
    let bytes = body.as_bytes();
    for (i, _) in body.match_indices(':') {
        if !bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let mut j = i;
        while j > 0
            && bytes
                .get(j - 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            j -= 1;
        }
        if j == i || j < 2 || bytes.get(j - 1) != Some(&b'.') {
            continue;
        }
        if bytes
            .get(j - 2)
            .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'`')
        {
            return true;
        }
    }
    false
}

const SOURCE_EXTENSIONS: &[&str] = &[
    "ts", "tsx", "js", "jsx", "mjs", "cjs", "md", "yaml", "yml", "json", "css", "html", "sql",
    "sh", "toml", "rs", "py", "go",
];

/// A table row with a file path in one cell and a line number (or range) in the next.
fn has_adjacent_file_line_cells(body: &str) -> bool {
    body.lines().filter(|l| l.contains('|')).any(|line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        cells.windows(2).any(|pair| {
            let [file, line] = pair else {
                return false;
            };
            let file = file.replace('`', "");
            let is_file = file.rsplit_once('.').is_some_and(|(_, ext)| {
                SOURCE_EXTENSIONS
                    .iter()
                    .any(|e| e.eq_ignore_ascii_case(ext))
            });
            is_file && is_line_spec(line)
        })
    })
}

/// A table cell with no content: blank, a run of dashes, or `n/a`.
fn is_placeholder_cell(cell: &str) -> bool {
    let c = cell.trim();
    c.is_empty()
        || c.chars().all(|ch| matches!(ch, '—' | '–' | '-'))
        || c.eq_ignore_ascii_case("n/a")
        || c.eq_ignore_ascii_case("na")
}

/// `P1`…`P4` at the start of a cell, not followed by another word character (`P12`).
fn is_priority_cell(cell: &str) -> bool {
    let c = cell.trim_start();
    let mut chars = c.chars();
    chars.next() == Some('P')
        && chars.next().is_some_and(|d| ('1'..='4').contains(&d))
        && !chars
            .next()
            .is_some_and(|n| n.is_alphanumeric() || n == '_')
}

/// A findings table: a row with a `P1`–`P4` cell and some other cell with content.
pub(crate) fn has_populated_priority_table(body: &str) -> bool {
    body.lines().any(|line| {
        let cells: Vec<&str> = line.split('|').collect();
        if cells.len() < 3 {
            return false;
        }
        let Some(severity) = cells.iter().position(|c| is_priority_cell(c)) else {
            return false;
        };
        cells
            .iter()
            .enumerate()
            .any(|(i, c)| i != severity && !is_placeholder_cell(c))
    })
}

/// The shipped Review scaffold: guidance prose and an empty-cell P-table, nothing else.
pub(crate) fn is_review_scaffold(body: &str) -> bool {
    if is_placeholder(body) {
        return true;
    }
    if has_populated_priority_table(body) {
        return false;
    }
    let mut saw_empty_row = false;
    for line in body.lines().filter(|l| l.contains('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let separator = cells
            .iter()
            .all(|c| c.is_empty() || c.trim_matches(':').chars().all(|ch| ch == '-'));
        let empty_p_row = cells
            .iter()
            .all(|c| is_placeholder_cell(c) || is_bare_priority(c))
            && cells.iter().any(|c| is_bare_priority(c));
        let header = cells.iter().any(|c| {
            let lower = c.to_lowercase();
            ["severity", "file", "finding", "recommendation"]
                .iter()
                .any(|w| lower.contains(w))
        });
        if empty_p_row {
            saw_empty_row = true;
        } else if !separator && !header {
            return false;
        }
    }
    saw_empty_row
}

fn is_bare_priority(cell: &str) -> bool {
    matches!(cell.trim(), "P1" | "P2" | "P3" | "P4")
}

/// Review prose with no table at all (tolerated where Review is optional).
pub(crate) fn is_prose_only_review(body: &str) -> bool {
    if is_placeholder(body) {
        return true;
    }
    if has_populated_priority_table(body) {
        return false;
    }
    !without_comments(body).contains('|')
}

/// `- [ ] R1. …`, `R2 …`, `**R3.** …`: a line that is an R-numbered item.
pub(crate) fn is_r_item(line: &str) -> bool {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix(['-', '*']) {
        rest = after.trim_start();
    }
    for checkbox in ["[ ]", "[x]", "[X]"] {
        if let Some(after) = rest.strip_prefix(checkbox) {
            rest = after.trim_start();
        }
    }
    let marks = rest.len() - rest.trim_start_matches(['*', '_']).len();
    if marks > 2 {
        return false;
    }
    rest = rest.get(marks..).unwrap_or("");
    let Some(after_r) = rest.strip_prefix('R') else {
        return false;
    };
    let digits = after_r.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let mut tail = after_r.get(digits..).unwrap_or("");
    tail = tail.strip_prefix('.').unwrap_or(tail);
    let marks = tail.len() - tail.trim_start_matches(['*', '_']).len();
    if marks > 2 {
        return false;
    }
    tail.get(marks..)
        .is_some_and(|t| t.starts_with([' ', '\t']))
}

/// The text of the last `Verdict:` in `body` (`PASS`, `PARTIAL — request-changes`), up to
/// a `*`, parenthesis or line end.
pub(crate) fn last_verdict(body: &str) -> Option<String> {
    let mut found = None;
    for (i, _) in body.match_indices("Verdict") {
        let after = body.get(i + "Verdict".len()..).unwrap_or("");
        if after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let after = after.trim_start_matches(['*', ' ', '\t', ':', '：']);
        let end = after.find(['*', '(', ')', '\n']).unwrap_or(after.len());
        let text = after.get(..end).unwrap_or("").trim();
        if !text.is_empty() {
            found = Some(text.to_owned());
        }
    }
    found
}

/// Byte offsets (into `body`) of the lines that are unchecked boxes, `- [ ] …`.
pub(crate) fn unchecked_boxes(body: &str) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let rest = line.trim_start();
        if rest
            .strip_prefix(['-', '*'])
            .and_then(|r| r.strip_prefix(" [ ]"))
            .is_some_and(|r| r.starts_with([' ', '\t']))
        {
            offsets.push(offset);
        }
        offset += line.len();
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_comments_tbd_and_blanks() {
        assert!(is_placeholder("\n<!-- fill in\nlater -->\n> TBD\n  \n"));
        assert!(!is_placeholder("<!-- x --> real"));
        assert!(!is_placeholder("> TBD soon"));
    }

    #[test]
    fn file_line_citations_in_their_three_forms() {
        assert!(has_file_line_citation("see `src/a.rs:12`"));
        assert!(has_file_line_citation("see `src/a.rs:3-9` for it"));
        assert!(has_file_line_citation("changed src/a.rs:12 and more"));
        assert!(has_file_line_citation("| `src/a.ts` | 42 | fixed |"));
        for no in [
            "no citation",
            "`a:b`",
            "`:12`",
            "ratio 1:2",
            "`x` line 4",
            "| a | 1 |",
        ] {
            assert!(!has_file_line_citation(no), "{no}");
        }
    }

    #[test]
    fn priority_tables_and_scaffolds() {
        let table = "| Priority | Dimension | Location | Finding |\n|---|---|---|---|\n| P4 | — | — | No findings |\n";
        assert!(has_populated_priority_table(table));
        let scaffold = "Reflect.\n\n| Severity | File | Finding | Recommendation |\n|---|---|---|---|\n| P1 | | | |\n| P2 | — | n/a | |\n";
        assert!(!has_populated_priority_table(scaffold));
        assert!(is_review_scaffold(scaffold));
        assert!(!is_review_scaffold("just prose"));
        assert!(is_prose_only_review("just prose"));
        assert!(!is_prose_only_review("| half | table |"));
        assert!(!has_populated_priority_table("| P12 | x | y |"));
    }

    #[test]
    fn r_items_verdicts_and_boxes() {
        for yes in [
            "- [ ] R1. x",
            "R2 y",
            "**R3.** z",
            "* [x] R10. w",
            "- R4. a",
        ] {
            assert!(is_r_item(yes), "{yes}");
        }
        for no in ["Requirement R1.", "R1x", "- [ ] AC-1 x", "R. x"] {
            assert!(!is_r_item(no), "{no}");
        }
        assert_eq!(
            last_verdict("Verdict: FAIL\n**Verdict:** PARTIAL — request-changes (see)\n")
                .as_deref(),
            Some("PARTIAL — request-changes")
        );
        assert_eq!(
            last_verdict("- Verdict: PASS (from verdict artifact)").as_deref(),
            Some("PASS")
        );
        assert_eq!(last_verdict("Verdicts: none"), None);
        assert_eq!(
            unchecked_boxes("- [x] a\n- [ ] b\n  * [ ] c\n- [ ]d\n"),
            [8, 16]
        );
    }
}
