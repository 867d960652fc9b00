//! How long ago something started, for people (`3 min`, `2 h`, `4 d`).

use jiff::Timestamp;

/// `at` (RFC 3339) as an age at `now`; the text itself when it is no timestamp.
pub(crate) fn age(at: &str, now: Timestamp) -> String {
    let Ok(then) = at.parse::<Timestamp>() else {
        return at.to_owned();
    };
    let seconds = now.as_second().saturating_sub(then.as_second()).max(0);
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn ages_read_in_the_largest_unit_and_non_timestamps_as_given() {
        let now: jiff::Timestamp = "2026-12-02T12:00:00Z".parse().unwrap_or_default();
        assert_eq!(age("2026-12-02T11:59:30Z", now), "30 s");
        assert_eq!(age("2026-12-02T11:00:00Z", now), "1 h");
        assert_eq!(age("2026-11-30T12:00:00Z", now), "2 d");
        assert_eq!(age("<b>", now), "<b>");
    }
}
