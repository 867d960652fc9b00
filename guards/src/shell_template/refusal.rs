//! Why a template cannot be placed in shell text: one variant per kind of position the
//! lexer refuses, each with the words `spur check` shows.

use std::fmt;

/// A position in shell text where spur will not put a reference to a value, because the
/// shell would not read it as exactly that value under both dash and bash as `sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `\${…}`: the backslash makes the `$` literal.
    AfterBackslash,
    /// `$${…}`: the `$` before the reference would join it (`$$`, or bash's `$"…"`).
    AfterDollar,
    /// Inside `$'…'`.
    DollarSingleQuote,
    /// Inside `$"…"`.
    DollarDoubleQuote,
    /// Inside `$((…))`, `((…))` or `$[…]`.
    Arithmetic,
    /// Inside `[[ … ]]`.
    BashConditional,
    /// Inside `${…}` (the word of `${x:-…}`, the pattern of `${x#…}`, …).
    ParameterExpansion,
    /// Inside backquotes.
    Backquote,
    /// In the body of a here-document whose delimiter is quoted.
    QuotedHereDoc,
    /// In the delimiter word of a here-document.
    HereDocDelimiter,
    /// In an array subscript (`name[…]=`) or after one in the same word.
    Subscript,
    /// An argument of a command that reads it as code, arithmetic or a variable name.
    CommandArgument {
        /// The command as written (`eval`, `sh -c`, `printf -v`, …).
        command: String,
        /// What it does with the argument.
        does: &'static str,
    },
    /// After a construct that dash and bash read differently, or that spur does not model:
    /// from there on spur cannot tell where the shell stands.
    After(&'static str),
    /// So deep in substitutions that the quotes its reference brings would pass the lexer's
    /// depth bound, so the second reading could not confirm them.
    TooDeep,
    /// In text the shell never finishes reading (an unclosed quote or substitution).
    Unterminated,
    /// A hole outside the text or not on a character boundary, or a variable name that is
    /// not a shell name (a caller's error, refused rather than guessed).
    BadRange,
    /// The lexer went past the hole without placing it (a bug in spur, refused rather
    /// than guessed; the fuzz target looks for it).
    Missed,
    /// Reading the rendered text again did not find the reference where it was put (a bug
    /// in spur, refused rather than run; the fuzz target looks for it).
    Unconfirmed,
}

impl Refusal {
    /// Whether quoting the reference as `"$X"` by hand would be just as unsafe: the
    /// position itself reads the value as code, arithmetic or a name.
    pub fn value_is_read_as_code(&self) -> bool {
        matches!(
            self,
            Refusal::Arithmetic
                | Refusal::BashConditional
                | Refusal::Subscript
                | Refusal::CommandArgument { .. }
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::AfterBackslash => f.write_str(
                "it follows a backslash, which makes its `$` literal: the shell would print the \
                 reference instead of the value",
            ),
            Refusal::AfterDollar => f.write_str(
                "it follows a `$`, which would join the reference (`$$` is a process id, and \
                 bash reads `$\"…\"` as a translated string)",
            ),
            Refusal::DollarSingleQuote => f.write_str(
                "it is inside `$'…'`, which bash reads as a string with backslash escapes and \
                 dash as `$` followed by a single-quoted string: they disagree on where it ends",
            ),
            Refusal::DollarDoubleQuote => {
                f.write_str("it is inside `$\"…\"`, which bash translates before expanding it")
            }
            Refusal::Arithmetic => f.write_str(
                "it is inside arithmetic (`$((…))`, `((…))`, `$[…]`), where bash evaluates a \
                 value as an expression: `a[$(cmd)]` in a value runs cmd",
            ),
            Refusal::BashConditional => f.write_str(
                "it is inside `[[ … ]]`, which dash does not have and where bash evaluates \
                 arithmetic operands as expressions (`a[$(cmd)]` runs cmd)",
            ),
            Refusal::ParameterExpansion => f.write_str(
                "it is inside `${…}`, where the word is a pattern or an alternative value read \
                 with quoting rules that differ between dash and bash",
            ),
            Refusal::Backquote => f.write_str(
                "it is inside backquotes, whose text the shell reads twice (backslashes first), \
                 differently in dash and bash inside double quotes",
            ),
            Refusal::QuotedHereDoc => f.write_str(
                "it is in a here-document with a quoted delimiter, where nothing is expanded: \
                 the reference would arrive as its own text",
            ),
            Refusal::HereDocDelimiter => {
                f.write_str("it is in a here-document delimiter, which the shell never expands")
            }
            Refusal::Subscript => f.write_str(
                "it is in an array subscript (`name[…]`), which bash evaluates as arithmetic",
            ),
            Refusal::CommandArgument { command, does } => {
                write!(f, "it is an argument of `{command}`, which {does}")
            }
            Refusal::After(what) => write!(
                f,
                "it comes after {what}; from there on spur cannot tell how the shell reads the \
                 text"
            ),
            Refusal::TooDeep => f.write_str(
                "it is nested too deep in substitutions for spur to check the quotes it would \
                 add",
            ),
            Refusal::Unterminated => f.write_str(
                "it is in text the shell never finishes reading (an unclosed quote, substitution \
                 or here-document)",
            ),
            Refusal::BadRange => f.write_str("its offset or variable name is not valid"),
            Refusal::Missed => f.write_str("spur's shell lexer went past it (a bug in spur)"),
            Refusal::Unconfirmed => f.write_str(
                "reading the rendered command again did not find the reference where it was \
                 put (a bug in spur)",
            ),
        }
    }
}
