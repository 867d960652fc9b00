//! Evidence anchors: the `file:line` / `file:start-end` citations in an evidence cell, and
//! the check that each names a real file under the project root and lines that exist in it.
//!
//! Scanning first takes complete citations out of the text, then looks at what is left for
//! other subjects (globs, directory summaries, bare paths), so a citation's filename is never
//! read a second time as a separate subject.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::store::bounded_read::{open_regular, ReadError};

/// A `file:line` or `file:start-end` citation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Citation {
    pub(crate) path: String,
    pub(crate) start: LineNumber,
    pub(crate) end: LineNumber,
}

/// A cited line number; `Huge` when it does not fit a `usize` (always out of range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineNumber {
    At(usize),
    Huge,
}

impl std::fmt::Display for LineNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::At(n) => write!(f, "{n}"),
            Self::Huge => f.write_str("(a number too large)"),
        }
    }
}

impl std::fmt::Display for Citation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "{}:{}", self.path, self.start)
        } else {
            write!(f, "{}:{}-{}", self.path, self.start, self.end)
        }
    }
}

/// Everything an evidence cell cites or mentions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EvidenceScan {
    pub(crate) citations: Vec<Citation>,
    /// Glob patterns (`src/*.rs`, `src/*.rs:3`): not anchors.
    pub(crate) globs: Vec<String>,
    /// Paths mentioned without a line: `dir/` (a directory summary) or `dir/file.ext`.
    pub(crate) bare_paths: Vec<String>,
}

const GLOB_CHARS: [char; 4] = ['*', '?', '[', '{'];

/// Find the citations, globs and bare paths in an evidence cell.
pub(crate) fn scan_evidence(evidence: &str) -> EvidenceScan {
    let mut scan = EvidenceScan::default();
    for raw in evidence.split(|c: char| {
        c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';' | '<' | '>')
    }) {
        let token = raw.trim_end_matches(['.', ':', '!', ']', '}']);
        let token = token.trim_start_matches('[');
        if token.is_empty() || token.contains("://") || token.starts_with("//") {
            continue;
        }
        if let Some(citation) = citation(token) {
            scan.citations.push(citation);
            continue;
        }
        let (path_part, has_line) = match token.split_once(':') {
            Some((path, rest)) if rest.starts_with(|c: char| c.is_ascii_digit()) => (path, true),
            _ => (token, false),
        };
        if !looks_like_path(path_part) {
            continue;
        }
        if path_part.contains(GLOB_CHARS) {
            scan.globs.push(token.to_owned());
        } else if !has_line
            && (path_part.ends_with('/') || has_extension(path_part))
            && path_part.contains('/')
        {
            scan.bare_paths.push(path_part.to_owned());
        }
    }
    scan
}

/// `path:12`, `path:3-9`, `path:12:5` (column ignored) → a citation; globs are not.
fn citation(token: &str) -> Option<Citation> {
    let (path, spec) = token.split_once(':')?;
    if path.contains(GLOB_CHARS) || !looks_like_path(path) {
        return None;
    }
    let spec = match spec.split_once(':') {
        Some((lines, column))
            if !column.is_empty() && column.bytes().all(|b| b.is_ascii_digit()) =>
        {
            lines
        }
        Some(_) => return None,
        None => spec,
    };
    let (start, end) = match spec.split_once('-') {
        Some((start, end)) => (start, end),
        None => (spec, spec),
    };
    let number = |text: &str| -> Option<LineNumber> {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| {
            text.parse::<usize>()
                .map_or(LineNumber::Huge, LineNumber::At)
        })
    };
    Some(Citation {
        path: path.to_owned(),
        start: number(start)?,
        end: number(end)?,
    })
}

/// A path-looking token: path characters only, a letter, and a `/` or a `.`.
fn looks_like_path(text: &str) -> bool {
    text.chars().any(char::is_alphabetic)
        && (text.contains('/') || text.contains('.'))
        && text.chars().all(|c| {
            c.is_alphanumeric()
                || matches!(c, '/' | '.' | '_' | '-' | '+' | '@' | '~')
                || GLOB_CHARS.contains(&c)
                || matches!(c, ']' | '}')
        })
}

fn has_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !ext.is_empty() && ext.chars().all(char::is_alphanumeric)
    })
}

/// Why a citation or mention is not a concrete existing anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AnchorProblem {
    /// The path names no file under the project root.
    FileMissing { path: String },
    /// The path is a directory, not a file.
    Directory { path: String },
    /// The path leaves the project root (absolute elsewhere, `..`, or a symlink out).
    OutsideProject { path: String },
    /// The line or range does not exist in the file.
    LineOutOfRange { citation: String, lines: usize },
}

/// What a path names, once looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    File { lines: usize },
    Directory,
    Missing,
    Outside,
    Unreadable(String),
}

/// Checks anchors against the project tree, reading each cited file once.
#[derive(Debug)]
pub struct AnchorChecker {
    root: PathBuf,
    canonical_root: PathBuf,
    seen: HashMap<String, Target>,
}

impl AnchorChecker {
    /// A checker for anchors under `project_root` (an error if it cannot be canonicalised).
    pub fn new(project_root: &Path) -> io::Result<Self> {
        Ok(Self {
            root: project_root.to_path_buf(),
            canonical_root: project_root.canonicalize()?,
            seen: HashMap::new(),
        })
    }

    /// Whether `citation` is a concrete existing `file:line` / `file:start-end`.
    pub(crate) fn check_citation(&mut self, citation: &Citation) -> Result<(), AnchorProblem> {
        let lines = match self.target(&citation.path) {
            Target::File { lines } => lines,
            other => return Err(problem(&citation.path, other)),
        };
        let in_range = match (citation.start, citation.end) {
            (LineNumber::At(start), LineNumber::At(end)) => {
                start >= 1 && start <= end && end <= lines
            }
            _ => false,
        };
        if in_range {
            Ok(())
        } else {
            Err(AnchorProblem::LineOutOfRange {
                citation: citation.to_string(),
                lines,
            })
        }
    }

    /// Check a path mentioned without a line: it must exist, and a directory is a summary,
    /// not an anchor.
    pub(crate) fn check_bare_path(&mut self, path: &str) -> Result<(), AnchorProblem> {
        match self.target(path) {
            Target::File { .. } => Ok(()),
            other => Err(problem(path, other)),
        }
    }

    fn target(&mut self, path: &str) -> Target {
        if let Some(found) = self.seen.get(path) {
            return found.clone();
        }
        let found = self.look_up(path);
        self.seen.insert(path.to_owned(), found.clone());
        found
    }

    fn look_up(&self, path: &str) -> Target {
        let joined = self.root.join(path);
        let canonical = match joined.canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return if Path::new(path).is_absolute() && !joined.starts_with(&self.root) {
                    Target::Outside
                } else {
                    Target::Missing
                };
            }
            Err(e) => return Target::Unreadable(e.to_string()),
        };
        if !canonical.starts_with(&self.canonical_root) {
            return Target::Outside;
        }
        match fs::metadata(&canonical) {
            Ok(meta) if meta.is_dir() => Target::Directory,
            // Opened and checked again on the descriptor: a FIFO swapped in is refused.
            Ok(_) => match open_regular(&canonical).and_then(count_lines) {
                Ok(lines) => Target::File { lines },
                Err(e) => Target::Unreadable(e.to_string()),
            },
            Err(e) => Target::Unreadable(e.to_string()),
        }
    }
}

fn problem(path: &str, target: Target) -> AnchorProblem {
    let path = path.to_owned();
    match target {
        Target::Directory => AnchorProblem::Directory { path },
        Target::Outside => AnchorProblem::OutsideProject { path },
        Target::Missing | Target::Unreadable(_) | Target::File { .. } => {
            AnchorProblem::FileMissing { path }
        }
    }
}

/// The most of a cited file that is read to count its lines.
const MAX_CITED_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Lines in a file: newline count, plus one for a last line without a newline.
fn count_lines(file: fs::File) -> Result<usize, ReadError> {
    let mut file = file.take(MAX_CITED_FILE_BYTES + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 0;
    let mut last = b'\n';
    let mut read: u64 = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if read > MAX_CITED_FILE_BYTES {
            return Err(ReadError::TooLarge {
                cap: MAX_CITED_FILE_BYTES,
                size: None,
            });
        }
        let chunk = buf.get(..n).unwrap_or(&[]);
        lines += chunk.iter().filter(|&&b| b == b'\n').count();
        last = chunk.last().copied().unwrap_or(last);
    }
    Ok(if last == b'\n' { lines } else { lines + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(n: usize) -> LineNumber {
        LineNumber::At(n)
    }

    fn cite(path: &str, start: usize, end: usize) -> Citation {
        Citation {
            path: path.to_owned(),
            start: at(start),
            end: at(end),
        }
    }

    #[test]
    fn finds_line_and_range_citations_in_prose_and_code() {
        let scan = scan_evidence(
            "see `src/a.rs:12` and (tests/b_c.rs:3-9), also docs/x.md:4:2; ./Makefile:1.",
        );
        assert_eq!(
            scan.citations,
            [
                cite("src/a.rs", 12, 12),
                cite("tests/b_c.rs", 3, 9),
                cite("docs/x.md", 4, 4),
                cite("./Makefile", 1, 1)
            ]
        );
        assert!(scan.globs.is_empty() && scan.bare_paths.is_empty());
    }

    #[test]
    fn a_citation_filename_is_never_a_separate_subject() {
        let scan = scan_evidence("`engine/src/retry_classifier.rs:10-12` covers retry_classifier");
        assert_eq!(scan.citations.len(), 1);
        assert!(scan.bare_paths.is_empty());
        assert!(scan.globs.is_empty());
    }

    #[test]
    fn globs_with_or_without_lines_are_not_anchors() {
        let scan = scan_evidence("`src/services/*.ts` and src/**/*.rs:3 and src/{a,b}.rs");
        assert!(scan.citations.is_empty());
        assert_eq!(scan.globs, ["src/services/*.ts", "src/**/*.rs:3", "src/{a"]);
    }

    #[test]
    fn urls_times_ratios_and_words_are_ignored() {
        let scan = scan_evidence(
            "https://example.com:8080/x at 12:30, ratio 3.5:1, and/or I/O, R1:2, e.g. this",
        );
        assert_eq!(scan, EvidenceScan::default());
    }

    #[test]
    fn bare_paths_and_directory_summaries_are_collected() {
        let scan = scan_evidence("the retry classifiers in engine/src/ and tests/x.rs");
        assert_eq!(scan.bare_paths, ["engine/src/", "tests/x.rs"]);
    }

    #[test]
    fn huge_line_numbers_do_not_overflow() {
        let scan = scan_evidence("a.rs:99999999999999999999999");
        assert_eq!(scan.citations[0].start, LineNumber::Huge);
    }

    fn project() -> (tempfile::TempDir, AnchorChecker) {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("src")).unwrap();
        fs::write(tmp.path().join("src/a.rs"), "one\ntwo\nthree\n").unwrap();
        fs::write(tmp.path().join("src/no_newline.rs"), "one\ntwo").unwrap();
        fs::write(tmp.path().join("src/empty.rs"), "").unwrap();
        let checker = AnchorChecker::new(tmp.path()).unwrap();
        (tmp, checker)
    }

    #[test]
    fn lines_and_ranges_must_exist_in_the_file() {
        let (_tmp, mut checker) = project();
        assert_eq!(checker.check_citation(&cite("src/a.rs", 1, 3)), Ok(()));
        assert_eq!(checker.check_citation(&cite("src/a.rs", 3, 3)), Ok(()));
        assert_eq!(
            checker.check_citation(&cite("src/no_newline.rs", 2, 2)),
            Ok(())
        );
        for bad in [
            cite("src/a.rs", 4, 4),
            cite("src/a.rs", 0, 1),
            cite("src/a.rs", 3, 2),
            cite("src/a.rs", 2, 9),
            cite("src/empty.rs", 1, 1),
        ] {
            assert!(
                matches!(
                    checker.check_citation(&bad),
                    Err(AnchorProblem::LineOutOfRange { .. })
                ),
                "{bad}"
            );
        }
        let huge = Citation {
            path: "src/a.rs".into(),
            start: LineNumber::Huge,
            end: LineNumber::Huge,
        };
        assert!(checker.check_citation(&huge).is_err());
    }

    #[test]
    fn missing_files_directories_and_escapes_are_rejected() {
        let (tmp, mut checker) = project();
        assert_eq!(
            checker.check_citation(&cite("src/nope.rs", 1, 1)),
            Err(AnchorProblem::FileMissing {
                path: "src/nope.rs".into()
            })
        );
        assert_eq!(
            checker.check_citation(&cite("src", 1, 1)),
            Err(AnchorProblem::Directory { path: "src".into() })
        );
        assert_eq!(
            checker.check_bare_path("src/"),
            Err(AnchorProblem::Directory {
                path: "src/".into()
            })
        );
        let outside = tempfile::NamedTempFile::new().unwrap();
        let outside_path = outside.path().display().to_string();
        assert!(matches!(
            checker.check_citation(&cite(&outside_path, 1, 1)),
            Err(AnchorProblem::OutsideProject { .. })
        ));
        let name = tmp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(matches!(
            checker.check_citation(&cite(&format!("../{name}/src/a.rs"), 1, 1)),
            Ok(())
        ));
        assert!(matches!(
            checker.check_bare_path("../../etc/passwd.x"),
            Err(AnchorProblem::FileMissing { .. } | AnchorProblem::OutsideProject { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_project_is_outside() {
        let (tmp, mut checker) = project();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "x\n").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            tmp.path().join("link.txt"),
        )
        .unwrap();
        assert!(matches!(
            checker.check_citation(&cite("link.txt", 1, 1)),
            Err(AnchorProblem::OutsideProject { .. })
        ));
    }

    #[test]
    fn a_cited_fifo_is_missing_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe.rs"))
            .status()
            .unwrap();
        assert!(made.success());
        let mut checker = AnchorChecker::new(dir.path()).unwrap();
        assert!(matches!(
            checker.check_citation(&cite("pipe.rs", 1, 1)),
            Err(AnchorProblem::FileMissing { .. })
        ));
    }
}
