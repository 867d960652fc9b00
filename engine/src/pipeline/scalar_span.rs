//! Where a piece of a YAML string value sits in the source file. A plain scalar's text is
//! the source slice; a quoted one without escapes is the slice minus its quotes. For those,
//! a byte range inside the value maps exactly. For folded, block or escaped scalars the
//! value differs from the source: a range maps to the same text when that text occurs in
//! the source slice as often as in the value, else to the whole value.

use crate::source::{Located, SourceFile, Span};

/// Maps byte ranges of a string value to spans in its source file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScalarSpan<'a> {
    value: &'a str,
    whole: Span,
    /// The source slice of the node, when known.
    slice: Option<&'a str>,
    /// Offset of the value's first byte when the value is the slice verbatim.
    exact: Option<usize>,
}

impl<'a> ScalarSpan<'a> {
    pub(crate) fn new(value: &'a Located<String>, source: Option<&'a SourceFile>) -> Self {
        let whole = value.span;
        let slice = source.and_then(|s| s.text().get(whole.offset..whole.end()));
        let exact = slice.and_then(|slice| {
            if slice == value.value {
                Some(whole.offset)
            } else {
                let quoted = slice.len() >= 2
                    && (slice.starts_with('"') && slice.ends_with('"')
                        || slice.starts_with('\'') && slice.ends_with('\''));
                (quoted && slice.get(1..slice.len() - 1) == Some(value.value.as_str()))
                    .then_some(whole.offset + 1)
            }
        });
        Self {
            value: &value.value,
            whole,
            slice,
            exact,
        }
    }

    /// The source span of `value[start..end]`.
    pub(crate) fn range(&self, start: usize, end: usize) -> Span {
        let end = end.min(self.value.len());
        let start = start.min(end);
        if let Some(base) = self.exact {
            return Span::new(base + start, end - start);
        }
        let (Some(slice), Some(piece), Some(before)) = (
            self.slice,
            self.value.get(start..end),
            self.value.get(..start),
        ) else {
            return self.whole;
        };
        if piece.is_empty() {
            return self.whole;
        }
        let nth = before.matches(piece).count();
        let in_value = self.value.matches(piece).count();
        let in_slice: Vec<usize> = slice.match_indices(piece).map(|(i, _)| i).collect();
        match in_slice.get(nth) {
            Some(i) if in_slice.len() == in_value => Span::new(self.whole.offset + i, piece.len()),
            _ => self.whole,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(text: &str, start: usize, end: usize, value: &str) -> (SourceFile, Located<String>) {
        (
            SourceFile::new("p.yaml", text.to_owned()),
            Located::new(value.to_owned(), Span::new(start, end - start)),
        )
    }

    #[test]
    fn maps_plain_and_quoted_scalars_exactly() {
        let (file, v) = located("a: x ${y}\n", 3, 9, "x ${y}");
        assert_eq!(
            ScalarSpan::new(&v, Some(&file)).range(2, 6),
            Span::new(5, 4)
        );
        let (file, v) = located("a: 'x ${y}'\n", 3, 11, "x ${y}");
        assert_eq!(
            ScalarSpan::new(&v, Some(&file)).range(2, 6),
            Span::new(6, 4)
        );
    }

    #[test]
    fn maps_folded_scalars_by_unique_text_else_whole() {
        let text = "a: >-\n  x\n  ${y}\n";
        let (file, v) = located(text, 8, text.len(), "x ${y}");
        assert_eq!(
            ScalarSpan::new(&v, Some(&file)).range(2, 6),
            Span::new(12, 4)
        );
        let text = "a: \"\\t${y}\"\n";
        let (file, v) = located(text, 3, text.len() - 1, "\t${y}");
        // unique text still found although the value is escaped
        assert_eq!(
            ScalarSpan::new(&v, Some(&file)).range(1, 5),
            Span::new(6, 4)
        );
        assert_eq!(ScalarSpan::new(&v, Some(&file)).range(0, 1), v.span);
    }
}
