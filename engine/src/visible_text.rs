//! Whether a text holds something a person can read: at least one character that is not
//! whitespace, a control character or a default-ignorable code point (zero-width spaces
//! and joiners, the byte-order mark, bidirectional controls, variation selectors, Hangul
//! fillers, tags). A force reason of only such characters looks empty in every log.

/// Whether `text` has at least one visible character.
pub(crate) fn has_visible_char(text: &str) -> bool {
    text.chars().any(is_visible)
}

fn is_visible(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || is_default_ignorable(c))
}

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt, 15.1).
fn is_default_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_texts_have_no_visible_char() {
        for text in [
            "",
            "   ",
            "\t\r\n",
            "\u{200b}",
            "\u{feff}",
            "\u{200c}\u{200d}\u{2060}",
            "\u{00ad}",
            "\u{180e}",
            "\u{fe0f}",
            "\u{202e}\u{2066}",
            "\u{3164}\u{ffa0}",
            "\u{e0041}",
            "\u{0000}\u{0007}\u{001b}\u{007f}\u{0085}",
            "\u{00a0}\u{2003}\u{3000}",
        ] {
            assert!(!has_visible_char(text), "{text:?}");
        }
    }

    #[test]
    fn one_visible_char_is_enough() {
        for text in ["a", " x ", "\u{200b}ok", "é", "中", "🙂", "-", "\u{0301}"] {
            assert!(has_visible_char(text), "{text:?}");
        }
    }
}
