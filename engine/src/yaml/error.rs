//! Why a YAML text did not become a node tree: a syntax error, a limit reached, a second
//! document, an alias with no anchor. Each reader words these for its own file; the
//! [`fmt::Display`] form is the plain fact, for readers with no wording of their own.

use std::fmt;

use crate::source::Span;

/// Why a document could not be parsed into a node tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// YAML syntax error.
    Syntax { message: String, span: Span },
    /// Nested deeper than [`super::Limits::max_depth`].
    TooDeep { span: Span },
    /// More nodes (alias expansions included) or aliases than allowed.
    TooLarge { span: Span },
    /// More than one document.
    MultipleDocuments { span: Span },
    /// `*name` with no `&name` before it.
    UnknownAnchor { name: String, span: Span },
}

impl ParseError {
    /// Where the parse stopped.
    pub(crate) fn span(&self) -> Span {
        match self {
            Self::Syntax { span, .. }
            | Self::TooDeep { span }
            | Self::TooLarge { span }
            | Self::MultipleDocuments { span }
            | Self::UnknownAnchor { span, .. } => *span,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax { message, .. } => f.write_str(message),
            Self::TooDeep { .. } => f.write_str("the YAML is nested too deeply"),
            Self::TooLarge { .. } => {
                f.write_str("the YAML expands to too many nodes or aliases (an alias bomb?)")
            }
            Self::MultipleDocuments { .. } => {
                f.write_str("a second YAML document starts here; the file holds one")
            }
            Self::UnknownAnchor { name, .. } => write!(f, "alias `*{name}` names no anchor"),
        }
    }
}
