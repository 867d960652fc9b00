//! UTC timestamps: records only ever need "now" written down (RFC 3339 with milliseconds,
//! or the compact form that prefixes run ids), never parsed or zoned. `jiff` does the
//! calendar; this type fixes the precision and the two renderings spur's files use.

use std::time::{SystemTime, UNIX_EPOCH};

/// `2026-11-29T18:33:49.123Z`. Times before 1970 clamp to the epoch.
pub(crate) fn rfc3339_utc(time: SystemTime) -> String {
    Timestamp::at(time).rfc3339()
}

/// The current time, RFC 3339 UTC.
pub fn now() -> String {
    Timestamp::now().rfc3339()
}

/// A point in time at millisecond precision, not before the Unix epoch, rendered in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    pub(crate) fn now() -> Self {
        Self::at(SystemTime::now())
    }

    /// Times before 1970 clamp to the epoch; times past jiff's range (year 9999) to its end.
    pub(crate) fn at(time: SystemTime) -> Self {
        let millis = time
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Self(jiff::Timestamp::from_millisecond(millis).unwrap_or(jiff::Timestamp::MAX))
    }

    /// `2026-11-29T18:34:14.123Z`: always three fractional digits and a `Z`.
    pub(crate) fn rfc3339(self) -> String {
        format!("{:.3}", self.0)
    }

    /// The time `text` (RFC 3339, as [`Timestamp::rfc3339`] writes it) names.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        text.parse::<jiff::Timestamp>().ok().map(Self)
    }

    /// `20261129T183414Z`: the time-ordered prefix of a run id.
    pub(crate) fn compact(self) -> String {
        self.0.strftime("%Y%m%dT%H%M%SZ").to_string()
    }

    /// Milliseconds since the Unix epoch.
    pub(crate) fn millis(self) -> u128 {
        u128::try_from(self.0.as_millisecond()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        let at = |secs: u64, millis: u64| {
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_796_006_029, 123), "2026-11-30T02:33:49.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
    }

    #[test]
    fn renders_known_instants_compactly() {
        let t = Timestamp::at(UNIX_EPOCH);
        assert_eq!(t.rfc3339(), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T12:34:56.789Z
        let t = Timestamp::at(UNIX_EPOCH + Duration::from_millis(1_709_210_096_789));
        assert_eq!(t.rfc3339(), "2024-02-29T12:34:56.789Z");
        assert_eq!(t.compact(), "20240229T123456Z");
        assert_eq!(t.millis(), 1_709_210_096_789);
    }

    #[test]
    fn sub_millisecond_time_is_truncated_and_the_past_clamps_to_the_epoch() {
        let t = UNIX_EPOCH + Duration::from_nanos(1_999_999_999);
        assert_eq!(rfc3339_utc(t), "1970-01-01T00:00:01.999Z");
        let before = UNIX_EPOCH - Duration::from_secs(86_400);
        assert_eq!(rfc3339_utc(before), "1970-01-01T00:00:00.000Z");
    }
}
