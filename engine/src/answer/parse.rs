//! The answer parser: a verifier's Markdown answer → its `Verdict:` line and the rows of its
//! requirements table (`| Req | Status | Evidence |`) and acceptance-criteria table
//! (`| AC | Status | Evidence Type | Evidence |`). Structure only: what the cells mean is the
//! lint's business. Fenced code blocks are skipped, so an answer may quote example tables.

use super::diagnostic::AnswerDiagnostic;
use super::table::{self, Row};
use crate::diagnostic::Code;

/// The verdict an answer declares on its `Verdict:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeclaredVerdict {
    Pass,
    Partial,
    Fail,
}

impl DeclaredVerdict {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Partial => "PARTIAL",
            Self::Fail => "FAIL",
        }
    }
}

/// The `Verdict:` line and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VerdictLine {
    pub(crate) verdict: DeclaredVerdict,
    pub(crate) line: usize,
}

/// A row of the requirements table, cells as written (trimmed, pipes unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequirementRow {
    pub(crate) line: usize,
    pub(crate) text: String,
    pub(crate) id: String,
    pub(crate) status: String,
    pub(crate) evidence: String,
}

/// A row of the acceptance-criteria table, cells as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AcRow {
    pub(crate) line: usize,
    pub(crate) text: String,
    pub(crate) id: String,
    pub(crate) status: String,
    pub(crate) evidence_type: String,
    pub(crate) evidence: String,
}

/// A parsed answer: what it declares, and the structural problems found on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    pub(crate) verdict_line: Option<VerdictLine>,
    pub(crate) requirements: Vec<RequirementRow>,
    pub(crate) acceptance: Vec<AcRow>,
    /// The line of the requirements / AC table header, when there is one.
    pub(crate) requirements_table: Option<usize>,
    pub(crate) acceptance_table: Option<usize>,
    pub(crate) diagnostics: Vec<AnswerDiagnostic>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableKind {
    Requirements,
    Acceptance,
    /// A table whose header starts like ours but does not match it exactly.
    Mismatched,
    Other,
}

const REQUIREMENTS_HEADER: [&str; 3] = ["req", "status", "evidence"];
const ACCEPTANCE_HEADER: [&str; 4] = ["ac", "status", "evidence type", "evidence"];

impl TableKind {
    fn of(header: &Row) -> Self {
        let names: Vec<String> = header
            .cells
            .iter()
            .map(|c| {
                table::unwrap_code(c)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            })
            .collect();
        if names == REQUIREMENTS_HEADER {
            return Self::Requirements;
        }
        if names == ACCEPTANCE_HEADER {
            return Self::Acceptance;
        }
        let first = names.first().map(String::as_str).unwrap_or("");
        if matches!(
            first,
            "req" | "requirement" | "requirements" | "ac" | "acceptance criteria" | "criterion"
        ) {
            Self::Mismatched
        } else {
            Self::Other
        }
    }

    const fn width(self) -> usize {
        match self {
            Self::Requirements => REQUIREMENTS_HEADER.len(),
            Self::Acceptance => ACCEPTANCE_HEADER.len(),
            Self::Mismatched | Self::Other => 0,
        }
    }
}

/// Parse an answer's text. Never fails: every problem becomes a diagnostic.
pub fn parse_answer(text: &str) -> Answer {
    let mut answer = Answer::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut loose_verdict: Option<(usize, String)> = None;
    let mut fence: Option<(char, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 1;
        let line = lines.get(i).copied().unwrap_or("");
        if let Some(open) = fence {
            if closes_fence(line, open) {
                fence = None;
            }
            i += 1;
            continue;
        }
        if let Some(open) = opens_fence(line) {
            fence = Some(open);
            i += 1;
            continue;
        }
        if let Some(header) = table::split_row(line) {
            let delimiter = lines.get(i + 1).and_then(|l| table::split_row(l));
            let is_table = delimiter
                .as_ref()
                .is_some_and(|d| table::is_delimiter(d) && d.cells.len() == header.cells.len());
            let kind = TableKind::of(&header);
            if !is_table {
                if matches!(kind, TableKind::Requirements | TableKind::Acceptance) {
                    answer.diagnostics.push(
                        AnswerDiagnostic::new(
                            Code::AnswerMalformedTable,
                            "this table header is not followed by a delimiter row of the same width",
                        )
                        .at_row(line_no, line)
                        .with_help("put a row like `|----|--------|----------|` right under the header"),
                    );
                }
                i += 1;
                continue;
            }
            i = answer.read_table(&lines, i, kind);
            continue;
        }
        answer.read_prose_line(line_no, line, &mut loose_verdict);
        i += 1;
    }
    if answer.verdict_line.is_none()
        && !answer
            .diagnostics
            .iter()
            .any(|d| d.code == Code::AnswerInvalidVerdictLine)
    {
        let mut diagnostic = AnswerDiagnostic::new(
            Code::AnswerMissingVerdictLine,
            "the answer has no `Verdict: PASS|PARTIAL|FAIL` line",
        );
        diagnostic = match loose_verdict {
            Some((line, text)) => diagnostic.at_row(line, &text).with_help(format!(
                "line {line} looks like a verdict; write it exactly as `Verdict: PASS`, `Verdict: PARTIAL` or `Verdict: FAIL` on a line of its own"
            )),
            None => diagnostic.with_help(
                "start the answer with `Verdict: PARTIAL` and replace it once every row is certified",
            ),
        };
        answer.diagnostics.push(diagnostic);
    }
    answer
}

impl Answer {
    /// Read the table whose header is at `start`; returns the index of the first line after it.
    fn read_table(&mut self, lines: &[&str], start: usize, kind: TableKind) -> usize {
        let header_line = start + 1;
        let header_text = lines.get(start).copied().unwrap_or("");
        let mut keep = true;
        match kind {
            TableKind::Requirements | TableKind::Acceptance => {
                let seen = if kind == TableKind::Requirements {
                    &mut self.requirements_table
                } else {
                    &mut self.acceptance_table
                };
                if seen.is_some() {
                    keep = false;
                    self.diagnostics.push(
                        AnswerDiagnostic::new(
                            Code::AnswerDuplicateTable,
                            "a second table of this kind; its rows are ignored",
                        )
                        .at_row(header_line, header_text)
                        .with_help("put every row in one table"),
                    );
                } else {
                    *seen = Some(header_line);
                }
            }
            TableKind::Mismatched => {
                keep = false;
                self.diagnostics.push(
                    AnswerDiagnostic::new(
                        Code::AnswerTableHeaderMismatch,
                        "this table header is neither `| Req | Status | Evidence |` nor `| AC | Status | Evidence Type | Evidence |`; its rows are ignored",
                    )
                    .at_row(header_line, header_text)
                    .with_help("use exactly these column names, in this order"),
                );
            }
            TableKind::Other => keep = false,
        }
        let mut i = start + 2;
        while let Some(line) = lines.get(i) {
            let Some(row) = table::split_row(line) else {
                break;
            };
            if keep {
                self.read_row(i + 1, line, row, kind);
            }
            i += 1;
        }
        i
    }

    fn read_row(&mut self, line_no: usize, text: &str, row: Row, kind: TableKind) {
        let width = kind.width();
        if row.cells.len() != width {
            self.diagnostics.push(
                AnswerDiagnostic::new(
                    Code::AnswerWrongColumnCount,
                    format!(
                        "this row has {} cells; the table has {width} columns, so the row is ignored",
                        row.cells.len()
                    ),
                )
                .at_row(line_no, text)
                .with_help("escape a literal pipe as `\\|`"),
            );
            return;
        }
        if !row.terminated {
            self.diagnostics.push(
                AnswerDiagnostic::new(
                    Code::AnswerIncompleteRow,
                    "this row does not end with `|`: it may have been cut off while being written",
                )
                .at_row(line_no, text)
                .with_help("finish the row with a closing `|` once its evidence is complete"),
            );
        }
        let mut cells = row.cells.into_iter();
        let mut next = || cells.next().unwrap_or_default();
        match kind {
            TableKind::Requirements => self.requirements.push(RequirementRow {
                line: line_no,
                text: text.trim().to_owned(),
                id: next(),
                status: next(),
                evidence: next(),
            }),
            TableKind::Acceptance => self.acceptance.push(AcRow {
                line: line_no,
                text: text.trim().to_owned(),
                id: next(),
                status: next(),
                evidence_type: next(),
                evidence: next(),
            }),
            TableKind::Mismatched | TableKind::Other => {}
        }
    }

    fn read_prose_line(&mut self, line_no: usize, line: &str, loose: &mut Option<(usize, String)>) {
        let trimmed = line.trim();
        let Some(value) = trimmed.strip_prefix("Verdict:") else {
            if loose.is_none() && looks_like_verdict(trimmed) {
                *loose = Some((line_no, trimmed.to_owned()));
            }
            return;
        };
        let verdict = match value.trim() {
            "PASS" => DeclaredVerdict::Pass,
            "PARTIAL" => DeclaredVerdict::Partial,
            "FAIL" => DeclaredVerdict::Fail,
            other => {
                self.diagnostics.push(
                    AnswerDiagnostic::new(
                        Code::AnswerInvalidVerdictLine,
                        format!("`{}` is not a verdict", super::diagnostic::shorten(other)),
                    )
                    .at_row(line_no, line)
                    .with_help("the verdict is exactly one of PASS, PARTIAL, FAIL (upper case)"),
                );
                return;
            }
        };
        match self.verdict_line {
            Some(first) => self.diagnostics.push(
                AnswerDiagnostic::new(
                    Code::AnswerDuplicateVerdictLine,
                    format!(
                        "a second `Verdict:` line (the first is on line {})",
                        first.line
                    ),
                )
                .at_row(line_no, line)
                .with_help("keep one `Verdict:` line and replace it in place"),
            ),
            None => {
                self.verdict_line = Some(VerdictLine {
                    verdict,
                    line: line_no,
                })
            }
        }
    }
}

/// `**Verdict:** PASS`, `## Verdict: PASS`, `verdict: pass` — close, but not the contract.
fn looks_like_verdict(line: &str) -> bool {
    let plain: String = line
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '#' | '`' | '>'))
        .collect();
    let plain = plain.trim().to_lowercase();
    plain
        .strip_prefix("verdict")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix(':'))
        .is_some_and(|rest| {
            let rest = rest.trim();
            ["pass", "partial", "fail"]
                .iter()
                .any(|v| rest.starts_with(v))
        })
}

fn opens_fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|&c| c == '`' || c == '~')?;
    let run = trimmed.chars().take_while(|&x| x == c).count();
    (run >= 3).then_some((c, run))
}

fn closes_fence(line: &str, (c, run): (char, usize)) -> bool {
    let trimmed = line.trim();
    trimmed.chars().take_while(|&x| x == c).count() >= run && trimmed.chars().all(|x| x == c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(answer: &Answer) -> Vec<Code> {
        answer.diagnostics.iter().map(|d| d.code).collect()
    }

    const CLEAN: &str = "\
Verdict: PASS

## Requirements

| Req | Status | Evidence |
|-----|--------|----------|
| R1  | MET    | `src/a.rs:1` |
| `R2` | PARTIAL | a \\| b |

### Acceptance Criteria Verification

| AC | Status | Evidence Type | Evidence |
|----|--------|---------------|----------|
| Scenario: CLI emits JSON | MET | test | `tests/cli.rs:4` |
";

    #[test]
    fn reads_verdict_line_and_both_tables() {
        let answer = parse_answer(CLEAN);
        assert_eq!(codes(&answer), []);
        assert_eq!(
            answer.verdict_line,
            Some(VerdictLine {
                verdict: DeclaredVerdict::Pass,
                line: 1
            })
        );
        assert_eq!(answer.requirements.len(), 2);
        assert_eq!(answer.requirements[0].line, 7);
        assert_eq!(answer.requirements[1].id, "`R2`");
        assert_eq!(answer.requirements[1].evidence, "a | b");
        assert_eq!(answer.acceptance[0].id, "Scenario: CLI emits JSON");
        assert_eq!(answer.acceptance[0].evidence_type, "test");
        assert_eq!(answer.acceptance[0].line, 14);
    }

    #[test]
    fn header_names_are_case_and_padding_insensitive() {
        let answer = parse_answer(
            "Verdict: FAIL\n|  req | STATUS|Evidence  |\n|-|-|-|\n| R1 | UNMET | none |\n",
        );
        assert_eq!(answer.requirements_table, Some(2));
        assert_eq!(answer.requirements.len(), 1);
    }

    #[test]
    fn tables_inside_code_fences_are_ignored() {
        let text = "Verdict: PASS\n```md\n| Req | Status | Evidence |\n|---|---|---|\n| R9 | MET | x |\nVerdict: FAIL\n```\n";
        let answer = parse_answer(text);
        assert!(answer.requirements.is_empty());
        assert_eq!(codes(&answer), []);
    }

    #[test]
    fn missing_verdict_line_points_at_a_near_miss() {
        let answer = parse_answer("**Verdict:** PASS\n");
        assert_eq!(codes(&answer), [Code::AnswerMissingVerdictLine]);
        assert_eq!(answer.diagnostics[0].line, Some(1));
        assert!(answer.diagnostics[0]
            .help
            .as_deref()
            .unwrap()
            .contains("line 1"));
    }

    #[test]
    fn invalid_and_duplicate_verdict_lines() {
        let answer = parse_answer("Verdict: pass\n");
        assert_eq!(codes(&answer), [Code::AnswerInvalidVerdictLine]);
        let answer = parse_answer("Verdict: PARTIAL\n\nVerdict: PASS\n");
        assert_eq!(codes(&answer), [Code::AnswerDuplicateVerdictLine]);
        assert_eq!(
            answer.verdict_line.unwrap().verdict,
            DeclaredVerdict::Partial
        );
    }

    #[test]
    fn wrong_width_rows_are_dropped_and_unterminated_rows_flagged() {
        let text = "Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | MET |\n| R2 | MET | a.rs:1\n";
        let answer = parse_answer(text);
        assert_eq!(
            codes(&answer),
            [Code::AnswerWrongColumnCount, Code::AnswerIncompleteRow]
        );
        assert_eq!(answer.requirements.len(), 1);
        assert_eq!(answer.requirements[0].id, "R2");
        assert_eq!(answer.diagnostics[0].line, Some(4));
    }

    #[test]
    fn mismatched_header_duplicate_table_and_missing_delimiter() {
        let text = "Verdict: PASS\n| Req | Status |\n|---|---|\n| R1 | MET |\n\n| Req | Status | Evidence |\n|---|---|---|\n\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | MET | x |\n\n| AC | Status | Evidence Type | Evidence |\n| x | MET | test | y |\n";
        let answer = parse_answer(text);
        assert_eq!(
            codes(&answer),
            [
                Code::AnswerTableHeaderMismatch,
                Code::AnswerDuplicateTable,
                Code::AnswerMalformedTable
            ]
        );
        assert!(answer.requirements.is_empty());
        assert_eq!(answer.acceptance_table, None);
    }

    #[test]
    fn other_tables_are_ignored() {
        let answer = parse_answer("Verdict: PASS\n| Check | Result |\n|---|---|\n| lint | ok |\n");
        assert_eq!(codes(&answer), []);
    }
}
