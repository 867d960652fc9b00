//! UTC timestamps without a date-time dependency: records only ever need "now" written
//! down (RFC 3339, or the compact form that prefixes run ids), never parsed or zoned.

use std::time::{SystemTime, UNIX_EPOCH};

/// `2026-11-29T18:33:49.123Z`. Times before 1970 clamp to the epoch.
pub fn rfc3339_utc(time: SystemTime) -> String {
    Timestamp::at(time).rfc3339()
}

/// The current time, RFC 3339 UTC.
pub fn now() -> String {
    Timestamp::now().rfc3339()
}

/// A point in time as seconds + milliseconds since the Unix epoch, rendered in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    millis: u128,
}

impl Timestamp {
    pub fn now() -> Self {
        Self::at(SystemTime::now())
    }

    /// Times before 1970 clamp to the epoch.
    pub fn at(time: SystemTime) -> Self {
        let millis = time
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        Self { millis }
    }

    /// `2026-11-29T18:34:14.123Z`.
    pub fn rfc3339(self) -> String {
        let (y, mo, d, h, mi, s) = self.civil();
        let ms = self.millis % 1000;
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
    }

    /// `20261129T183414Z`: the time-ordered prefix of a run id.
    pub fn compact(self) -> String {
        let (y, mo, d, h, mi, s) = self.civil();
        format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
    }

    pub fn millis(self) -> u128 {
        self.millis
    }

    fn civil(self) -> (i64, u32, u32, u32, u32, u32) {
        let secs = (self.millis / 1000) as i64;
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + i64::from(m <= 2);
        (
            y,
            m,
            d,
            (rem / 3600) as u32,
            ((rem % 3600) / 60) as u32,
            (rem % 60) as u32,
        )
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
        let t = Timestamp { millis: 0 };
        assert_eq!(t.rfc3339(), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T12:34:56.789Z
        let t = Timestamp {
            millis: 1_709_210_096_789,
        };
        assert_eq!(t.rfc3339(), "2024-02-29T12:34:56.789Z");
        assert_eq!(t.compact(), "20240229T123456Z");
    }
}
