//! Templates in shell text, fail-closed. A template's value is never pasted into the
//! command: spur passes it in an environment variable and puts a *reference* to that
//! variable where the template was, quoted for the place — `"${N}"` in code, `${N}` inside
//! `"…"` and in an expanding here-document, `'"${N}"'` inside `'…'` (close, reference,
//! reopen). The shell expands a reference once, to the value as it is, and never reads the
//! result as code. Where the lexer (`lexer.rs`) cannot say with certainty how dash and bash
//! as `sh` read the place, the template is refused ([`Refusal`]); `spur check` reports it.
//!
//! The text given here is the command with its templates taken out; a template is a
//! *hole*, a byte offset between two characters of that text.
//!
//! ```
//! use spur_guards::shell_template::{render, Place, place};
//!
//! // `echo ${vars.x} "a ${vars.x}" 'b ${vars.x}'` with the templates taken out:
//! let text = "echo  \"a \" 'b '";
//! let holes = [5, 9, 14];
//! assert_eq!(
//!     place(text, &holes),
//!     vec![Ok(Place::Code), Ok(Place::DoubleQuoted), Ok(Place::SingleQuoted)]
//! );
//! let references: Vec<(usize, &str)> = holes.iter().map(|&h| (h, "SPUR_VAR_x")).collect();
//! assert_eq!(
//!     render(text, &references).unwrap(),
//!     r#"echo "${SPUR_VAR_x}" "a ${SPUR_VAR_x}" 'b '"${SPUR_VAR_x}"''"#
//! );
//! ```

mod commands;
mod lexer;
mod refusal;

pub use refusal::Refusal;

/// Where a hole sits, as both shells read the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Unquoted code: a word, a redirection target, a `case` pattern, inside `$(…)`.
    Code,
    /// Inside `"…"`.
    DoubleQuoted,
    /// Inside `'…'`.
    SingleQuoted,
    /// In the body of a here-document whose delimiter is unquoted.
    HereDoc,
    /// In a `#` comment (inert; placed as in code, which is harmless there).
    Comment,
}

/// A hole's place, or why it has none.
pub type Placement = Result<Place, Refusal>;

impl Place {
    /// The text that stands for environment variable `name` here: the shell expands it to
    /// the value, as one literal piece of the word (or line) it is in.
    pub fn reference(self, name: &str) -> String {
        match self {
            Place::Code | Place::Comment => format!("\"${{{name}}}\""),
            Place::DoubleQuoted | Place::HereDoc => format!("${{{name}}}"),
            Place::SingleQuoted => format!("'\"${{{name}}}\"'"),
        }
    }

    /// Where the `${N}` of [`Place::reference`] stands once inserted: what a second reading
    /// of the rendered text must find.
    fn inner(self) -> Place {
        match self {
            Place::Code | Place::DoubleQuoted | Place::SingleQuoted => Place::DoubleQuoted,
            Place::HereDoc => Place::HereDoc,
            Place::Comment => Place::Comment,
        }
    }
}

/// The place of each hole in `text`, in the order given. Holes may come in any order and
/// repeat; one outside the text or not on a character boundary is refused.
pub fn place(text: &str, holes: &[usize]) -> Vec<Placement> {
    let mut order: Vec<usize> = (0..holes.len()).collect();
    order.sort_by_key(|&k| holes.get(k).copied().unwrap_or(usize::MAX));
    let valid = |h: usize| h <= text.len() && text.is_char_boundary(h);
    let sorted: Vec<usize> = order
        .iter()
        .filter_map(|&k| holes.get(k).copied())
        .filter(|&h| valid(h))
        .collect();
    let mut placed = lexer::classify(text, &sorted).into_iter();
    let mut out = vec![Err(Refusal::BadRange); holes.len()];
    for &k in &order {
        if holes.get(k).is_some_and(|&h| valid(h)) {
            if let (Some(slot), Some(p)) = (out.get_mut(k), placed.next()) {
                *slot = p;
            }
        }
    }
    out
}

/// A template that could not be placed: its index in the references given to [`render`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Index into `references`.
    pub index: usize,
    /// Why.
    pub refusal: Refusal,
}

/// `text` with a reference to each `(hole, variable name)` inserted, or the first template
/// (in text order) that cannot be placed. Names must be shell names (`[A-Za-z_][A-Za-z0-9_]*`).
///
/// The result is read again with the references as holes, and each must stand where it
/// was meant to (inside the quotes it brought, or in the here-document or comment): a
/// second, independent confirmation that the quotes it inserted did what they should.
pub fn render(text: &str, references: &[(usize, &str)]) -> Result<String, Refused> {
    let holes: Vec<usize> = references.iter().map(|(h, _)| *h).collect();
    let places = place(text, &holes);
    let mut order: Vec<usize> = (0..references.len()).collect();
    order.sort_by_key(|&k| holes.get(k).copied().unwrap_or(usize::MAX));
    for &k in &order {
        match (places.get(k), references.get(k)) {
            (Some(Err(refusal)), _) => {
                return Err(Refused {
                    index: k,
                    refusal: refusal.clone(),
                })
            }
            (_, Some((_, name))) if !is_shell_name(name) => {
                return Err(Refused {
                    index: k,
                    refusal: Refusal::BadRange,
                })
            }
            _ => {}
        }
    }
    let mut out = String::with_capacity(text.len() + references.len() * 16);
    // The rendered text without each `${N}`, and where each `${N}` was: the second reading.
    let mut check_text = String::with_capacity(text.len() + references.len() * 4);
    let mut check_holes = Vec::with_capacity(references.len());
    let mut cursor = 0;
    for &k in &order {
        let (Some(&(hole, name)), Some(Ok(place))) = (references.get(k), places.get(k)) else {
            continue;
        };
        let before = text.get(cursor..hole).unwrap_or_default();
        out.push_str(before);
        check_text.push_str(before);
        let reference = place.reference(name);
        let inner = format!("${{{name}}}");
        let (open, close) = reference.split_once(&inner).unwrap_or_default();
        out.push_str(&reference);
        check_text.push_str(open);
        check_holes.push((k, check_text.len(), place.inner()));
        check_text.push_str(close);
        cursor = hole;
    }
    let rest = text.get(cursor..).unwrap_or_default();
    out.push_str(rest);
    check_text.push_str(rest);
    let offsets: Vec<usize> = check_holes.iter().map(|(_, at, _)| *at).collect();
    let second = place(&check_text, &offsets);
    for ((k, _, expected), got) in check_holes.iter().zip(second) {
        if got != Ok(*expected) {
            return Err(Refused {
                index: *k,
                refusal: Refusal::Unconfirmed,
            });
        }
    }
    Ok(out)
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`.
fn is_shell_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests;
