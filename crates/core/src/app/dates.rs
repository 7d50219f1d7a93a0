//! Dates and zones as users type them: `--since`/`--until` (ISO dates, date-times, or ages like
//! `7d`) and `--tz`.

use anyhow::{bail, Result};
use chrono::{Local, NaiveDate, TimeZone};

use crate::query::stats::Zone;

/// `--since` and `--until` as epoch-ms bounds (the first inclusive, the second exclusive).
pub fn date_range(
    since: Option<&str>,
    until: Option<&str>,
    now_ms: i64,
) -> Result<(Option<i64>, Option<i64>)> {
    let since_ms = since.map(|d| parse_date(d, now_ms, false)).transpose()?;
    let until_ms = until.map(|d| parse_date(d, now_ms, true)).transpose()?;
    if let (Some(s), Some(u)) = (since_ms, until_ms) {
        if u <= s {
            bail!(
                "--until {} is not after --since {}: nothing can fall between them",
                until.unwrap_or_default(),
                since.unwrap_or_default()
            );
        }
    }
    Ok((since_ms, until_ms))
}

/// An ISO date or date-time, or a relative age (`12h`, `7d`, `2w`). A plain date is local
/// midnight; as an `--until` bound it means the end of that day.
pub fn parse_date(s: &str, now_ms: i64, end_of_day: bool) -> Result<i64> {
    let s = s.trim();
    if let Some((n, unit)) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .filter(|(n, _)| !n.is_empty())
    {
        let hours = match unit {
            "h" => Some(1),
            "d" => Some(24),
            "w" => Some(24 * 7),
            _ => None,
        };
        if let (Some(h), Ok(n)) = (hours, n.parse::<i64>()) {
            return Ok(now_ms - n * h * 3_600_000);
        }
    }
    if let Ok(day) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let day = if end_of_day {
            day.succ_opt().unwrap_or(day)
        } else {
            day
        };
        let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
        if let Some(t) = Local.from_local_datetime(&midnight).earliest() {
            return Ok(t.timestamp_millis());
        }
    }
    if let Some(ms) = crate::pi::js::parse_iso_ms(s) {
        return Ok(ms);
    }
    bail!("{s:?} is not a date: use 2026-11-01, 2026-11-01T12:00:00Z, or an age like 12h, 7d, 2w")
}

/// `--tz`: the local zone when absent.
pub fn zone_arg(tz: Option<&str>) -> Result<Zone> {
    match tz {
        None => Ok(Zone::Local),
        Some(z) => Zone::parse(z).ok_or_else(|| {
            anyhow::anyhow!("--tz {z:?}: use local, UTC, a zone name like Europe/Paris, or an offset like +02:00")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_relative_and_absolute() {
        let now = 1_000_000_000_000;
        assert_eq!(parse_date("7d", now, false).unwrap(), now - 7 * 86_400_000);
        assert_eq!(parse_date("2w", now, false).unwrap(), now - 14 * 86_400_000);
        assert_eq!(
            parse_date("2026-01-01T00:00:00Z", now, false).unwrap(),
            1_767_225_600_000
        );
        let day = parse_date("2026-01-01", now, false).unwrap();
        let end = parse_date("2026-01-01", now, true).unwrap();
        assert_eq!(end - day, 86_400_000);
        assert!(parse_date("yesterday", now, false).is_err());
    }
}
