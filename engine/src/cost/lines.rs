//! Output as lines, read as it arrives in chunks and bounded: a line longer than the bound
//! is not kept whole, only its head (to say what it was), so a child printing one endless
//! line costs spur no more than the bound.

/// A line of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// A whole line, without its newline.
    Whole(&'a [u8]),
    /// A line longer than the bound: its first bytes, and how long it was.
    TooLong { head: &'a [u8], len: usize },
}

/// How many bytes of a too-long line are kept.
const HEAD: usize = 64;

/// Splits chunks into lines, none kept longer than `max` bytes.
#[derive(Debug)]
pub(crate) struct LineBuffer {
    max: usize,
    partial: Vec<u8>,
    /// The length of the current line when it outgrew `max` (then `partial` holds its head).
    overflow: Option<usize>,
}

impl LineBuffer {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            partial: Vec::new(),
            overflow: None,
        }
    }

    /// Take `bytes`; `each` is called with every line they complete.
    pub(crate) fn push(&mut self, mut bytes: &[u8], each: &mut dyn FnMut(Line<'_>)) {
        while !bytes.is_empty() {
            let (piece, rest, ends) = match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => (
                    bytes.get(..i).unwrap_or_default(),
                    bytes.get(i + 1..).unwrap_or_default(),
                    true,
                ),
                None => (bytes, &[][..], false),
            };
            self.take(piece);
            if ends {
                self.end(each);
            }
            bytes = rest;
        }
    }

    /// The output ended: a last line without a newline counts.
    pub(crate) fn finish(&mut self, each: &mut dyn FnMut(Line<'_>)) {
        if !self.partial.is_empty() || self.overflow.is_some() {
            self.end(each);
        }
    }

    fn take(&mut self, piece: &[u8]) {
        if let Some(len) = &mut self.overflow {
            *len = len.saturating_add(piece.len());
            return;
        }
        if self.partial.len() + piece.len() > self.max {
            let len = self.partial.len() + piece.len();
            let room = HEAD.saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(piece.get(..room.min(piece.len())).unwrap_or_default());
            self.partial.truncate(HEAD);
            self.overflow = Some(len);
        } else {
            self.partial.extend_from_slice(piece);
        }
    }

    fn end(&mut self, each: &mut dyn FnMut(Line<'_>)) {
        let line = self.partial.strip_suffix(b"\r").unwrap_or(&self.partial);
        match self.overflow.take() {
            Some(len) => each(Line::TooLong { head: line, len }),
            None => each(Line::Whole(line)),
        }
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        let mut buffer = LineBuffer::new(max);
        let mut each = |line: Line<'_>| {
            out.push(match line {
                Line::Whole(l) => String::from_utf8_lossy(l).into_owned(),
                Line::TooLong { head, len } => {
                    format!("long({len}):{}", String::from_utf8_lossy(head))
                }
            })
        };
        for chunk in chunks {
            buffer.push(chunk, &mut each);
        }
        buffer.finish(&mut each);
        out
    }

    #[test]
    fn joins_chunks_and_bounds_a_long_line() {
        assert_eq!(
            lines(100, &[b"ab", b"c\nd", b"e\r\n", b"f"]),
            ["abc", "de", "f"]
        );
        let long = vec![b'x'; 500];
        let got = lines(100, &[&long, &long, b"\nok\n"]);
        assert_eq!(got.len(), 2);
        assert!(got[0].starts_with("long(1000):xxx"), "{}", got[0]);
        assert_eq!(got[0].len(), "long(1000):".len() + HEAD);
        assert_eq!(got[1], "ok");
    }
}
