//! Secrets kept out of spur's records (book: *Secrets*): the values of the vars and
//! environment variables a pipeline or `.spur/config.yaml` marks secret are replaced by
//! [`MARKER`] wherever spur records or prints them — journal records, action logs, `spur
//! trace`, `spur runs`, JSON output, error messages.
//!
//! Redaction is by value: every occurrence of every secret value is covered, overlapping
//! occurrences (of one secret or of two) included, and each maximal covered run of bytes
//! becomes one marker. So no secret survives in the text between markers, whatever the
//! order or overlap of the secrets. Values shorter than [`MIN_SECRET_BYTES`] are not
//! searched for in text (they would blank out unrelated words and, by the gaps, tell what
//! they are); they are still redacted where spur records them as a secret var's value.

use std::borrow::Cow;

use aho_corasick::AhoCorasick;

/// What stands in for a secret value.
pub const MARKER: &str = "[redacted]";

/// The shortest value searched for in text: shorter ones are redacted only where they are
/// recorded as a secret's own value.
pub const MIN_SECRET_BYTES: usize = 4;

/// Replaces secret values in text. An empty redactor changes nothing.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// The automaton over the searched values; `None` when there is none.
    searcher: Option<AhoCorasick>,
}

impl Redactor {
    /// A redactor for these values; empty values and values shorter than
    /// [`MIN_SECRET_BYTES`] are not searched for.
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.as_ref().to_owned())
            .filter(|v| v.len() >= MIN_SECRET_BYTES)
            .collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        // Building fails only past the automaton's size limits, far beyond any set of
        // secrets; without one nothing would be redacted, so fall back to the slow path.
        let searcher = if values.is_empty() {
            None
        } else {
            AhoCorasick::new(&values).ok()
        };
        Self { searcher }
    }

    /// Whether this redactor changes anything.
    pub fn is_empty(&self) -> bool {
        self.searcher.is_none()
    }

    /// `text` with every secret value replaced by [`MARKER`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.redact_bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Matches of UTF-8 values in UTF-8 text begin and end on character boundaries,
            // and the marker is UTF-8: the result is UTF-8.
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// `bytes` (e.g. a log file) with every secret value replaced by [`MARKER`].
    pub fn bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        self.redact_bytes(bytes)
    }

    fn redact_bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        let Some(searcher) = &self.searcher else {
            return Cow::Borrowed(bytes);
        };
        // Every occurrence, overlapping ones too, as byte ranges; merged into runs.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for m in searcher.find_overlapping_iter(bytes) {
            let (start, end) = (m.start(), m.end());
            match runs.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => runs.push((start, end)),
            }
        }
        if runs.is_empty() {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut at = 0;
        for (start, end) in runs {
            out.extend_from_slice(bytes.get(at..start).unwrap_or_default());
            out.extend_from_slice(MARKER.as_bytes());
            at = end;
        }
        out.extend_from_slice(bytes.get(at..).unwrap_or_default());
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_occurrence_becomes_one_marker() {
        let r = Redactor::new(["s3cr3t-value"]);
        assert_eq!(
            r.text("a s3cr3t-value b s3cr3t-values3cr3t-value"),
            "a [redacted] b [redacted]"
        );
        assert_eq!(r.text("nothing here"), "nothing here");
    }

    #[test]
    fn overlapping_secrets_are_covered_whole() {
        let r = Redactor::new(["abcd", "cdef"]);
        assert_eq!(r.text("xabcdefx"), "x[redacted]x");
        let r = Redactor::new(["aaaa"]);
        assert_eq!(r.text("baaaaab"), "b[redacted]b");
        let r = Redactor::new(["token", "tokenized-long"]);
        assert_eq!(r.text("tokenized-long token"), "[redacted] [redacted]");
    }

    #[test]
    fn short_and_empty_values_are_not_searched() {
        let r = Redactor::new(["", "abc"]);
        assert!(r.is_empty());
        assert_eq!(r.text("abc"), "abc");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_redacted_too() {
        let r = Redactor::new(["pass-word"]);
        assert_eq!(
            r.bytes(b"\xff pass-word \xfe").as_ref(),
            b"\xff [redacted] \xfe"
        );
    }

    fn secrets() -> impl Strategy<Value = Vec<String>> {
        // A small alphabet so that secrets overlap each other and the text often.
        prop::collection::vec("[ab\\[\\]é]{4,8}", 1..4)
    }

    proptest! {
        /// No secret survives between the markers, whatever the secrets' overlap and
        /// order, and text without a secret is left as it is.
        #[test]
        fn no_secret_survives(
            secrets in secrets(),
            pieces in prop::collection::vec(("[ab\\[\\]é ]{0,6}", any::<prop::sample::Index>()), 0..8),
        ) {
            let mut text = String::new();
            for (filler, pick) in &pieces {
                text.push_str(filler);
                text.push_str(&secrets[pick.index(secrets.len())]);
            }
            let r = Redactor::new(&secrets);
            let out = r.text(&text);
            for segment in out.split(MARKER) {
                for secret in &secrets {
                    prop_assert!(!segment.contains(secret.as_str()),
                        "{secret:?} survives in {segment:?} of {out:?}");
                }
            }
            let marker_free = !secrets.iter().any(|s| text.contains(s.as_str()));
            if marker_free {
                prop_assert_eq!(out.as_ref(), text.as_str());
            }
        }

        /// What is not a secret is kept, in order: removing the markers from the output
        /// leaves a subsequence of the input.
        #[test]
        fn the_rest_is_kept_in_order(secrets in secrets(), text in "[ab\\[\\]é ]{0,40}") {
            let r = Redactor::new(&secrets);
            let out = r.text(&text);
            let kept: String = out.split(MARKER).collect();
            let mut rest = text.chars();
            for c in kept.chars() {
                prop_assert!(rest.any(|d| d == c), "{kept:?} is not kept from {text:?}");
            }
        }
    }
}
