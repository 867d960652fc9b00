//! The shell-template lexer (`spur_guards::shell_template`) on any text: the input is shell
//! text in which each byte 0x01 is a template (a hole). It must never panic, give one
//! placement per hole, never skip a hole (`Missed`), place holes given in any order alike,
//! and whatever `render` accepts must
//! survive its own second reading (never `Unconfirmed`) and be exactly the input with each
//! hole's reference at its offset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use spur_guards::shell_template::{place, render, Place, Refusal};

const NAME: &str = "SPUR_VAR_x";

fuzz_target!(|data: &[u8]| {
    let with_holes = String::from_utf8_lossy(data);
    let mut text = String::new();
    let mut holes = Vec::new();
    for c in with_holes.chars() {
        if c == '\u{1}' {
            holes.push(text.len());
        } else {
            text.push(c);
        }
    }
    let places = place(&text, &holes);
    assert_eq!(places.len(), holes.len());
    for p in &places {
        assert_ne!(p, &Err(Refusal::Missed), "a hole was skipped in {text:?} at {holes:?}");
        assert_ne!(p, &Err(Refusal::BadRange));
    }
    // Holes given in another order are placed the same (templates at one offset keep the
    // order given: the first after a `\` is escaped, the next is not, so only distinct
    // offsets are reordered).
    if holes.windows(2).all(|w| w[0] != w[1]) {
        let mut reversed = holes.clone();
        reversed.reverse();
        let mut back = place(&text, &reversed);
        back.reverse();
        assert_eq!(back, places);
    }

    let references: Vec<(usize, &str)> = holes.iter().map(|&h| (h, NAME)).collect();
    match render(&text, &references) {
        Ok(rendered) => {
            assert!(places.iter().all(Result::is_ok));
            // Every reference is there, and the text around them is the input's.
            // The rendered text is the input with each hole's reference at its offset.
            let mut expected = String::new();
            let mut cursor = 0;
            for (&hole, p) in holes.iter().zip(places.iter().flatten()) {
                expected.push_str(&text[cursor..hole]);
                expected.push_str(&p.reference(NAME));
                cursor = hole;
            }
            expected.push_str(&text[cursor..]);
            assert_eq!(rendered, expected, "render changed the text around its references");
            assert!(!places.contains(&Ok(Place::Comment)) || rendered.contains('#'));
        }
        Err(refused) => {
            assert!(refused.index < holes.len());
            assert_ne!(
                refused.refusal,
                Refusal::Unconfirmed,
                "the second reading disagreed with the first in {text:?} at {holes:?}"
            );
            assert!(places.iter().any(Result::is_err));
        }
    }
});
