//! Escaping `${vars.X}` substitutions for the quoting context they sit in, so
//! that whatever a var value contains, `sh` sees exactly that literal text as one word part
//! and never runs any of it.
//!
//! `context_at` scans POSIX `sh` quoting up to a byte offset: backslash escapes, `'…'`,
//! `"…"`, `$( … )` and backticks (a new quoting level, also inside `"…"`), `${ … }`,
//! `#` comments and here-documents. `escape` produces the text to insert there and
//! [`render_shell`] applies a whole set of substitutions.
//!
//! Limits (documented in the book): `case … in pat)` parentheses inside `$( … )` are not
//! matched specially (an unbalanced `)` ends the substitution early in our scan, erring
//! towards the outer context); arithmetic `$(( … ))` is treated as code, where a quoted
//! value is a syntax error, never code. A value that contains a newline cannot be placed
//! inside a here-document (a line of it could end the document): that is an error, and the
//! fix is to use the environment variable (`$NAME`) instead.

use std::fmt;
use std::ops::Range;

/// Where a substitution sits in shell text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuoteContext {
    /// Plain code: `echo ${vars.x}`, also inside `$( … )`.
    Unquoted,
    /// Inside `"…"`.
    DoubleQuoted,
    /// Inside `'…'`.
    SingleQuoted,
    /// Inside backticks (one more layer of backslash processing).
    Backquoted,
    /// After a `#` comment start: the value is inert, but must not end the line.
    Comment,
    /// Inside a here-document body; `expanding` is false for `<<'EOF'` (quoted delimiter).
    HereDoc { expanding: bool },
}

/// A value that cannot be placed safely where it was asked to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellEscapeError {
    /// A newline in a value substituted inside a here-document.
    NewlineInHereDoc,
    /// The value would make a here-document line equal to its delimiter, ending it early.
    DelimiterInHereDoc(String),
    /// A substitution range outside the command, not on a char boundary, or overlapping.
    BadRange(Range<usize>),
}

impl fmt::Display for ShellEscapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellEscapeError::NewlineInHereDoc => write!(
                f,
                "a value containing a newline cannot be substituted inside a here-document \
                 (a line of it could end the document); use the environment variable $NAME instead"
            ),
            ShellEscapeError::DelimiterInHereDoc(delimiter) => write!(
                f,
                "the value would make a here-document line read `{delimiter}` and end the \
                 document early; use the environment variable $NAME instead"
            ),
            ShellEscapeError::BadRange(r) => {
                write!(
                    f,
                    "substitution range {}..{} is not valid in the command",
                    r.start, r.end
                )
            }
        }
    }
}

impl std::error::Error for ShellEscapeError {}

/// Text that, inserted into shell code in context `ctx`, makes `sh` see exactly `value`.
pub(crate) fn escape(value: &str, ctx: QuoteContext) -> Result<String, ShellEscapeError> {
    Ok(match ctx {
        QuoteContext::Unquoted => single_quoted_word(value),
        QuoteContext::SingleQuoted => value.replace('\'', r"'\''"),
        QuoteContext::DoubleQuoted => backslash(value, &['$', '`', '"', '\\']),
        // Inside backticks the shell first removes one level of backslashes before `\`,
        // `` ` `` and `$`, then parses the text as code: quote for code, then for that layer.
        QuoteContext::Backquoted => backslash(&single_quoted_word(value), &['$', '`', '\\', '"']),
        QuoteContext::Comment => value.replace(['\n', '\r'], " "),
        QuoteContext::HereDoc { expanding } => {
            if value.contains('\n') {
                return Err(ShellEscapeError::NewlineInHereDoc);
            }
            if expanding {
                backslash(value, &['$', '`', '\\'])
            } else {
                value.to_owned()
            }
        }
    })
}

fn single_quoted_word(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    out.push_str(&value.replace('\'', r"'\''"));
    out.push('\'');
    out
}

fn backslash(value: &str, specials: &[char]) -> String {
    let mut out = String::with_capacity(value.len() + 4);
    for c in value.chars() {
        if specials.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Replace each `range` of `command` (e.g. the span of a `${vars.x}` template) with its
/// value, escaped for the quoting context at the start of the range. Ranges may come in any
/// order but must not overlap.
pub fn render_shell(
    command: &str,
    substitutions: &[(Range<usize>, String)],
) -> Result<String, ShellEscapeError> {
    let mut sorted: Vec<&(Range<usize>, String)> = substitutions.iter().collect();
    sorted.sort_by_key(|(range, _)| range.start);
    let scan = scan(command, sorted.iter().map(|(r, _)| r.start));
    let mut out = String::with_capacity(command.len());
    let mut in_heredoc = Vec::new();
    let mut cursor = 0;
    for ((range, value), ctx) in sorted.into_iter().zip(scan.contexts) {
        let valid = range.start >= cursor
            && range.start <= range.end
            && command.is_char_boundary(range.start)
            && command.is_char_boundary(range.end)
            && range.end <= command.len();
        let (Some(before), true) = (command.get(cursor..range.start), valid) else {
            return Err(ShellEscapeError::BadRange(range.clone()));
        };
        out.push_str(before);
        if matches!(ctx, QuoteContext::HereDoc { .. }) {
            in_heredoc.push(out.len());
        }
        out.push_str(&escape(value, ctx)?);
        cursor = range.end;
    }
    out.push_str(command.get(cursor..).unwrap_or_default());
    // A value without newlines can still complete a line that reads as the delimiter.
    for at in in_heredoc {
        let start = out[..at].rfind('\n').map_or(0, |p| p + 1);
        let end = out[at..].find('\n').map_or(out.len(), |p| at + p);
        let line = out[start..end].trim_start_matches('\t');
        if let Some(delimiter) = scan.delimiters.iter().find(|d| d.as_str() == line) {
            return Err(ShellEscapeError::DelimiterInHereDoc(delimiter.clone()));
        }
    }
    Ok(out)
}

/// The quoting context at `offset` in `command` (code before it is scanned; text after it
/// is irrelevant).
#[cfg(test)]
pub(crate) fn context_at(command: &str, offset: usize) -> QuoteContext {
    scan(command, std::iter::once(offset))
        .contexts
        .pop()
        .unwrap_or(QuoteContext::Unquoted)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Frame {
    Code,
    CommandSubst {
        parens: u32,
    },
    Backtick,
    /// `${ … }`; `in_double` when it opened inside `"…"`.
    Param {
        in_double: bool,
    },
    Double,
    Single,
    Comment,
}

struct PendingHereDoc {
    delimiter: String,
    strip_tabs: bool,
    expanding: bool,
}

struct Scan {
    contexts: Vec<QuoteContext>,
    /// Every here-document delimiter seen up to the last offset.
    delimiters: Vec<String>,
}

/// Contexts at each of `offsets` (ascending), in one pass.
fn scan(command: &str, offsets: impl Iterator<Item = usize>) -> Scan {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut stack = vec![Frame::Code];
    let mut pending: Vec<PendingHereDoc> = Vec::new();
    // Some(body context) while inside here-document bodies.
    let mut heredoc: Option<(usize, QuoteContext)> = None;
    let mut delimiters = Vec::new();
    let mut i = 0;
    for offset in offsets {
        while i < offset.min(bytes.len()) {
            if let Some((end, _)) = heredoc {
                if offset < end {
                    break;
                }
                i = end;
                heredoc = None;
                continue;
            }
            i = step(bytes, i, &mut stack, &mut pending, &mut heredoc);
            delimiters.extend(pending.iter().map(|d| d.delimiter.clone()));
        }
        let ctx = match heredoc {
            Some((end, ctx)) if i <= offset && offset < end => ctx,
            _ => frame_context(&stack),
        };
        out.push(ctx);
    }
    delimiters.sort();
    delimiters.dedup();
    Scan {
        contexts: out,
        delimiters,
    }
}

fn frame_context(stack: &[Frame]) -> QuoteContext {
    match stack.last() {
        Some(Frame::Double) | Some(Frame::Param { in_double: true }) => QuoteContext::DoubleQuoted,
        Some(Frame::Single) => QuoteContext::SingleQuoted,
        Some(Frame::Comment) => QuoteContext::Comment,
        _ if stack.contains(&Frame::Backtick) => QuoteContext::Backquoted,
        _ => QuoteContext::Unquoted,
    }
}

fn at_word_start(bytes: &[u8], i: usize) -> bool {
    i == 0
        || matches!(
            bytes.get(i - 1),
            Some(b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
        )
}

/// Advance one token from `i`; returns the next index.
fn step(
    bytes: &[u8],
    i: usize,
    stack: &mut Vec<Frame>,
    pending: &mut Vec<PendingHereDoc>,
    heredoc: &mut Option<(usize, QuoteContext)>,
) -> usize {
    let c = bytes.get(i).copied().unwrap_or(b'\n');
    let next = bytes.get(i + 1).copied();
    let top = stack.last().copied().unwrap_or(Frame::Code);
    match top {
        Frame::Single => {
            if c == b'\'' {
                stack.pop();
            }
            i + 1
        }
        Frame::Comment => {
            if c == b'\n' {
                stack.pop();
                return newline(bytes, i, pending, heredoc);
            }
            i + 1
        }
        Frame::Double => match c {
            b'\\' => i + 2,
            b'"' => {
                stack.pop();
                i + 1
            }
            b'$' if next == Some(b'(') => {
                stack.push(Frame::CommandSubst { parens: 0 });
                i + 2
            }
            b'$' if next == Some(b'{') => {
                stack.push(Frame::Param { in_double: true });
                i + 2
            }
            b'`' => {
                stack.push(Frame::Backtick);
                i + 1
            }
            _ => i + 1,
        },
        Frame::Code | Frame::CommandSubst { .. } | Frame::Backtick | Frame::Param { .. } => match c
        {
            b'\\' => i + 2,
            b'\'' => {
                stack.push(Frame::Single);
                i + 1
            }
            b'"' => {
                stack.push(Frame::Double);
                i + 1
            }
            b'`' if top == Frame::Backtick => {
                stack.pop();
                i + 1
            }
            b'`' => {
                stack.push(Frame::Backtick);
                i + 1
            }
            b'$' if next == Some(b'(') => {
                stack.push(Frame::CommandSubst { parens: 0 });
                i + 2
            }
            b'$' if next == Some(b'{') => {
                stack.push(Frame::Param { in_double: false });
                i + 2
            }
            b'}' if matches!(top, Frame::Param { .. }) => {
                stack.pop();
                i + 1
            }
            b'(' => {
                if let Some(Frame::CommandSubst { parens }) = stack.last_mut() {
                    *parens += 1;
                }
                i + 1
            }
            b')' => {
                if let Some(Frame::CommandSubst { parens }) = stack.last_mut() {
                    if *parens == 0 {
                        stack.pop();
                    } else {
                        *parens -= 1;
                    }
                }
                i + 1
            }
            b'#' if at_word_start(bytes, i) && !matches!(top, Frame::Param { .. }) => {
                stack.push(Frame::Comment);
                i + 1
            }
            b'<' if next == Some(b'<') && bytes.get(i + 2) != Some(&b'<') => {
                heredoc_operator(bytes, i + 2, pending)
            }
            b'\n' => newline(bytes, i, pending, heredoc),
            _ => i + 1,
        },
    }
}

/// Parse `[-] WORD` after `<<`; returns the index after the word.
fn heredoc_operator(bytes: &[u8], mut i: usize, pending: &mut Vec<PendingHereDoc>) -> usize {
    let strip_tabs = bytes.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut delimiter = Vec::new();
    let mut expanding = true;
    let mut quote: Option<u8> = None;
    while let Some(&c) = bytes.get(i) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => delimiter.push(c),
            (None, b'\'' | b'"') => {
                quote = Some(c);
                expanding = false;
            }
            (None, b'\\') => {
                expanding = false;
                if let Some(&escaped) = bytes.get(i + 1) {
                    delimiter.push(escaped);
                    i += 1;
                }
            }
            (None, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')') => break,
            (None, c) => delimiter.push(c),
        }
        i += 1;
    }
    if !delimiter.is_empty() {
        pending.push(PendingHereDoc {
            delimiter: String::from_utf8_lossy(&delimiter).into_owned(),
            strip_tabs,
            expanding,
        });
    }
    i
}

/// At a newline in code: start the first pending here-document body, if any.
fn newline(
    bytes: &[u8],
    i: usize,
    pending: &mut Vec<PendingHereDoc>,
    heredoc: &mut Option<(usize, QuoteContext)>,
) -> usize {
    let body_start = i + 1;
    if pending.is_empty() {
        return body_start;
    }
    // Bodies follow one another; treat them as one region whose context is the first's
    // (mixed quoted/unquoted bodies on one line are rare; the stricter one wins).
    let expanding = pending.iter().all(|h| h.expanding);
    let mut cursor = body_start;
    for doc in pending.drain(..) {
        cursor = body_end(bytes, cursor, &doc);
    }
    *heredoc = Some((cursor, QuoteContext::HereDoc { expanding }));
    body_start
}

/// Index just after the delimiter line of a body starting at `start`.
fn body_end(bytes: &[u8], start: usize, doc: &PendingHereDoc) -> usize {
    let mut line_start = start;
    while line_start < bytes.len() {
        let line_end = bytes[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| line_start + p);
        let mut line = &bytes[line_start..line_end];
        if doc.strip_tabs {
            while let [b'\t', rest @ ..] = line {
                line = rest;
            }
        }
        if line == doc.delimiter.as_bytes() {
            return (line_end + 1).min(bytes.len());
        }
        line_start = line_end + 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_of(template: &str) -> QuoteContext {
        let at = template.find("@@").unwrap();
        context_at(template, at)
    }

    #[test]
    fn detects_the_basic_contexts() {
        assert_eq!(ctx_of("echo @@"), QuoteContext::Unquoted);
        assert_eq!(ctx_of(r#"echo "a @@""#), QuoteContext::DoubleQuoted);
        assert_eq!(ctx_of("echo 'a @@'"), QuoteContext::SingleQuoted);
        assert_eq!(ctx_of("echo 'a' @@"), QuoteContext::Unquoted);
        assert_eq!(ctx_of(r#"echo "it's @@""#), QuoteContext::DoubleQuoted);
        assert_eq!(ctx_of(r#"echo \' @@"#), QuoteContext::Unquoted);
        assert_eq!(ctx_of(r#"echo "\" @@""#), QuoteContext::DoubleQuoted);
    }

    #[test]
    fn command_substitution_opens_a_new_level_inside_double_quotes() {
        assert_eq!(ctx_of(r#"echo "$(printf %s @@)""#), QuoteContext::Unquoted);
        assert_eq!(
            ctx_of(r#"echo "$(printf %s "@@")""#),
            QuoteContext::DoubleQuoted
        );
        assert_eq!(ctx_of(r#"echo "$(f (x)) @@""#), QuoteContext::DoubleQuoted);
        assert_eq!(ctx_of("echo `printf %s @@`"), QuoteContext::Backquoted);
        assert_eq!(ctx_of(r#"echo "${x:-@@}""#), QuoteContext::DoubleQuoted);
    }

    #[test]
    fn detects_comments_and_here_documents() {
        assert_eq!(ctx_of("true # @@"), QuoteContext::Comment);
        assert_eq!(ctx_of("true # c\necho @@"), QuoteContext::Unquoted);
        assert_eq!(ctx_of("echo a#@@"), QuoteContext::Unquoted);
        assert_eq!(
            ctx_of("cat <<EOF\nhi @@\nEOF\n"),
            QuoteContext::HereDoc { expanding: true }
        );
        assert_eq!(
            ctx_of("cat <<'EOF'\nhi @@\nEOF\n"),
            QuoteContext::HereDoc { expanding: false }
        );
        assert_eq!(
            ctx_of("cat <<EOF\nhi\nEOF\necho @@"),
            QuoteContext::Unquoted
        );
        assert_eq!(
            ctx_of("cat <<-EOF\nhi\n\tEOF\necho '@@'"),
            QuoteContext::SingleQuoted
        );
    }

    #[test]
    fn escapes_per_context() {
        let v = r#"a'b"c$d`e\f"#;
        assert_eq!(
            escape(v, QuoteContext::Unquoted).unwrap(),
            r#"'a'\''b"c$d`e\f'"#
        );
        assert_eq!(
            escape(v, QuoteContext::SingleQuoted).unwrap(),
            r#"a'\''b"c$d`e\f"#
        );
        assert_eq!(
            escape(v, QuoteContext::DoubleQuoted).unwrap(),
            r#"a'b\"c\$d\`e\\f"#
        );
        assert_eq!(escape("", QuoteContext::Unquoted).unwrap(), "''");
        assert_eq!(escape("a\nb", QuoteContext::Comment).unwrap(), "a b");
        assert_eq!(
            escape("a\nb", QuoteContext::HereDoc { expanding: true }),
            Err(ShellEscapeError::NewlineInHereDoc)
        );
    }

    #[test]
    fn renders_several_substitutions_in_any_order() {
        let cmd = r#"echo ${vars.a} "${vars.b}" '${vars.c}'"#;
        let a = cmd.find("${vars.a}").unwrap();
        let b = cmd.find("${vars.b}").unwrap();
        let c = cmd.find("${vars.c}").unwrap();
        let subs = vec![
            (c..c + 9, "it's".to_owned()),
            (a..a + 9, "x y".to_owned()),
            (b..b + 9, "$HOME".to_owned()),
        ];
        assert_eq!(
            render_shell(cmd, &subs).unwrap(),
            r#"echo 'x y' "\$HOME" 'it'\''s'"#
        );
    }

    #[test]
    fn rejects_overlapping_or_out_of_bounds_ranges() {
        let subs = vec![(0..4, "x".to_owned()), (2..6, "y".to_owned())];
        assert!(matches!(
            render_shell("echo hello", &subs),
            Err(ShellEscapeError::BadRange(_))
        ));
        let subs = vec![(5..50, "x".to_owned())];
        assert!(render_shell("echo hello", &subs).is_err());
    }
}
