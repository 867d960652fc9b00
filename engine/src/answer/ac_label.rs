//! The anatomy of an acceptance-criterion label, read the same way in the task file and in
//! an answer's AC column: bracket tags (`[advisory]`), a declared alias (`AC-3:` or a
//! checklist token `` `cli-json`: ``), the bare title, and linked scenario titles
//! (`Scenario: …`, or a Markdown link into a `.feature` file).

/// The tags that exempt an AC from the executable-evidence rule (aggregation rule 6).
pub(crate) const EXEMPTING_TAGS: [&str; 4] = ["advisory", "non-core", "non-behavior", "docs-only"];

/// A label taken apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AcLabel {
    /// Bracket tags without brackets, lower-cased (`advisory`).
    pub(crate) tags: Vec<String>,
    /// Declared aliases: `AC-3` (upper-cased) and checklist tokens.
    pub(crate) aliases: Vec<String>,
    /// The title with tags and the alias prefix removed, whitespace collapsed.
    pub(crate) title: String,
    /// Scenario titles the label names or links to.
    pub(crate) scenarios: Vec<String>,
}

impl AcLabel {
    pub(crate) fn parse(label: &str) -> Self {
        let mut out = Self::default();
        let mut rest = collapse(label);
        loop {
            let before = rest.len();
            rest = out.take_leading_tag(&rest);
            rest = out.take_trailing_tag(&rest);
            if rest.len() == before {
                break;
            }
        }
        rest = out.take_alias(&rest);
        out.title = rest.trim().to_owned();
        out.scenarios = scenarios_in(&out.title);
        out
    }

    /// Whether the label carries a tag that exempts it from the evidence rule.
    pub(crate) fn is_exempt(&self) -> bool {
        self.tags
            .iter()
            .any(|t| EXEMPTING_TAGS.contains(&t.as_str()))
    }

    fn take_leading_tag(&mut self, text: &str) -> String {
        let Some(inner_and_rest) = text.strip_prefix('[') else {
            return text.to_owned();
        };
        let Some(close) = inner_and_rest.find(']') else {
            return text.to_owned();
        };
        let inner = &inner_and_rest[..close];
        let after = &inner_and_rest[close + 1..];
        if after.starts_with('(') || !is_tag_word(inner) {
            return text.to_owned();
        }
        self.add_tag(inner);
        after.trim_start().to_owned()
    }

    fn take_trailing_tag(&mut self, text: &str) -> String {
        let Some(without_close) = text.strip_suffix(']') else {
            return text.to_owned();
        };
        let Some(open) = without_close.rfind('[') else {
            return text.to_owned();
        };
        let inner = &without_close[open + 1..];
        if !is_tag_word(inner) {
            return text.to_owned();
        }
        self.add_tag(inner);
        without_close[..open].trim_end().to_owned()
    }

    fn add_tag(&mut self, inner: &str) {
        match ac_number(inner) {
            Some(alias) => self.aliases.push(alias),
            None => self.tags.push(inner.to_lowercase()),
        }
    }

    /// `AC-3: title`, `**AC-3** — title`, `` `token`: title ``, or a lone `AC-3`.
    fn take_alias(&mut self, text: &str) -> String {
        let unbold = text.strip_prefix("**");
        let (candidate, after) = match unbold {
            Some(body) => match body.find("**") {
                Some(end) => (&body[..end], &body[end + 2..]),
                None => return text.to_owned(),
            },
            None => {
                if let Some(body) = text.strip_prefix('`') {
                    match body.find('`') {
                        Some(end) if is_token(&body[..end]) => {
                            let after = &body[end + 1..];
                            return match strip_separator(after) {
                                Some(title) => {
                                    self.aliases.push(body[..end].to_owned());
                                    title.to_owned()
                                }
                                None => text.to_owned(),
                            };
                        }
                        _ => return text.to_owned(),
                    }
                }
                let end = text
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .unwrap_or(text.len());
                (&text[..end], &text[end..])
            }
        };
        let Some(alias) = ac_number(candidate.trim()) else {
            return text.to_owned();
        };
        if after.trim().is_empty() {
            self.aliases.push(alias);
            return String::new();
        }
        match strip_separator(after) {
            Some(title) => {
                self.aliases.push(alias);
                title.to_owned()
            }
            None => text.to_owned(),
        }
    }
}

/// `AC-3` / `ac-3` → `AC-3`.
pub(crate) fn ac_number(text: &str) -> Option<String> {
    let digits = text
        .strip_prefix("AC-")
        .or_else(|| text.strip_prefix("ac-"))
        .or_else(|| text.strip_prefix("Ac-"))?;
    (!digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("AC-{digits}"))
}

/// Markdown links replaced by their text: `[Scenario: X](a.feature)` → `Scenario: X`.
pub(crate) fn strip_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after_open = &rest[open + 1..];
        let link = after_open.find("](").and_then(|close| {
            let target = &after_open[close + 2..];
            target.find(')').map(|end| (close, close + 2 + end + 1))
        });
        match link {
            Some((close, consumed)) if !after_open[..close].contains('[') => {
                out.push_str(&rest[..open]);
                out.push_str(&after_open[..close]);
                rest = &after_open[consumed..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after_open;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whitespace runs collapsed to one space, ends trimmed.
pub(crate) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_tag_word(inner: &str) -> bool {
    !inner.is_empty()
        && inner.len() <= 40
        && inner
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        && !inner.trim().is_empty()
        && inner != "x"
        && inner != "X"
}

fn is_token(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `: title`, ` — title`, ` - title`, `. title`, `) title` → `title`.
fn strip_separator(after: &str) -> Option<&str> {
    let trimmed = after.trim_start();
    for sep in [":", "—", "–", "-", ".", ")"] {
        if let Some(rest) = trimmed.strip_prefix(sep) {
            let rest = rest.trim_start();
            if !rest.is_empty() && (sep != "-" || after.starts_with(' ')) {
                return Some(rest);
            }
        }
    }
    None
}

/// Scenario titles in a title: `Scenario: X`, or `[Scenario: X](…)` / `[X](….feature…)` links.
fn scenarios_in(title: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(rest) = strip_scenario_prefix(title) {
        if !rest.starts_with('[') {
            found.push(rest.to_owned());
        }
    }
    let mut search = title;
    while let Some(open) = search.find('[') {
        let after_open = &search[open + 1..];
        let Some(close) = after_open.find("](") else {
            break;
        };
        let text = &after_open[..close];
        let target_and_rest = &after_open[close + 2..];
        let Some(target_end) = target_and_rest.find(')') else {
            break;
        };
        let target = &target_and_rest[..target_end];
        if let Some(name) = strip_scenario_prefix(text) {
            found.push(collapse(name));
        } else if target.contains(".feature") {
            found.push(collapse(text));
        }
        search = &target_and_rest[target_end..];
    }
    found.retain(|s| !s.is_empty());
    found.dedup();
    found
}

/// `Scenario: X` (any case of the keyword) → `X`.
pub(crate) fn strip_scenario_prefix(text: &str) -> Option<&str> {
    let head = text.get(..9)?;
    head.eq_ignore_ascii_case("scenario:")
        .then(|| text.get(9..).unwrap_or("").trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_title() {
        let l = AcLabel::parse("CLI emits   JSON ");
        assert_eq!(l.title, "CLI emits JSON");
        assert!(l.tags.is_empty() && l.aliases.is_empty() && l.scenarios.is_empty());
    }

    #[test]
    fn tags_before_and_after() {
        let l = AcLabel::parse("[advisory] [P2] Docs mention the flag [docs-only]");
        assert_eq!(l.tags, ["advisory", "docs-only", "p2"]);
        assert_eq!(l.title, "Docs mention the flag");
        assert!(l.is_exempt());
    }

    #[test]
    fn ac_number_aliases_in_every_spelling() {
        for label in [
            "AC-3: Title here",
            "**AC-3** — Title here",
            "AC-3 - Title here",
            "[AC-3] Title here",
            "ac-3. Title here",
        ] {
            let l = AcLabel::parse(label);
            assert_eq!(l.aliases, ["AC-3"], "{label}");
            assert_eq!(l.title, "Title here", "{label}");
        }
        let lone = AcLabel::parse("AC-12");
        assert_eq!(lone.aliases, ["AC-12"]);
        assert_eq!(lone.title, "");
    }

    #[test]
    fn checklist_token_alias_needs_a_separator() {
        let l = AcLabel::parse("`cli-json`: CLI emits JSON");
        assert_eq!(l.aliases, ["cli-json"]);
        assert_eq!(l.title, "CLI emits JSON");
        let l = AcLabel::parse("`foo.rs` is formatted");
        assert!(l.aliases.is_empty());
        assert_eq!(l.title, "`foo.rs` is formatted");
    }

    #[test]
    fn words_that_start_like_ac_are_titles() {
        let l = AcLabel::parse("AC-power cord is documented");
        assert!(l.aliases.is_empty());
        assert_eq!(l.title, "AC-power cord is documented");
    }

    #[test]
    fn scenario_titles_from_prefix_and_links() {
        assert_eq!(
            AcLabel::parse("Scenario: CLI emits JSON").scenarios,
            ["CLI emits JSON"]
        );
        assert_eq!(
            AcLabel::parse("[Scenario: CLI emits JSON](features/cli.feature)").scenarios,
            ["CLI emits JSON"]
        );
        assert_eq!(
            AcLabel::parse("Covered by [Quiet mode](features/cli.feature#L3)").scenarios,
            ["Quiet mode"]
        );
        assert!(AcLabel::parse("See [docs](book/x.md)").scenarios.is_empty());
    }

    #[test]
    fn links_are_reduced_to_their_text() {
        assert_eq!(
            strip_links("[advisory] [Scenario: Quiet](f.feature) and [x](y)"),
            "[advisory] Scenario: Quiet and x"
        );
        assert_eq!(strip_links("[a] [b"), "[a] [b");
        assert_eq!(strip_links("[é](ü) ["), "é [");
    }

    #[test]
    fn a_link_is_not_a_tag() {
        let l = AcLabel::parse("[Scenario: X](a.feature)");
        assert!(l.tags.is_empty());
        assert_eq!(l.title, "[Scenario: X](a.feature)");
    }

    #[test]
    fn hostile_labels_do_not_panic_and_stay_titles() {
        // Unclosed brackets, bold and code, an empty tag, a bare keyword and an AC number
        // too long to be one: none is a tag, an alias or a scenario, so the label is its
        // own title. A lone bracket tag is only a tag.
        for label in [
            "[",
            "]",
            "[]",
            "**",
            "**AC-",
            "`",
            "``",
            "Scenario:",
            "AC-99999999999",
        ] {
            let expected = AcLabel {
                title: label.to_owned(),
                ..AcLabel::default()
            };
            assert_eq!(AcLabel::parse(label), expected, "{label}");
        }
        let expected = AcLabel {
            tags: vec!["é".to_owned()],
            ..AcLabel::default()
        };
        assert_eq!(AcLabel::parse("[é]"), expected);
        assert!(!AcLabel::parse("[é]").is_exempt());
    }
}
