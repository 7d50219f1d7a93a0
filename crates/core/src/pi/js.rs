//! JavaScript semantics that pi's answers depend on: truthiness, `new Date(x).getTime()`,
//! `Date#toISOString`, string coercion in `Array#join`, and `JSON.parse`'s tolerance of lone
//! UTF-16 surrogate escapes. Kept in one place so every module agrees on them.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde_json::Value;

/// JavaScript truthiness of a parsed JSON value.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Largest |ms| a JavaScript Date can hold.
const MAX_DATE_MS: f64 = 8.64e15;

/// `new Date(v).getTime()` for a JSON value; `None` is NaN (an Invalid Date).
/// Strings accept the ISO-8601 forms pi and JavaScript write; V8's looser legacy formats are
/// not emulated, and a date-time without an offset is read as UTC (JavaScript would use the
/// local zone).
pub fn date_ms(v: &Value) -> Option<i64> {
    let ms = match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => return parse_iso_ms(s),
        _ => return None,
    };
    time_clip(ms)
}

fn time_clip(ms: f64) -> Option<i64> {
    (ms.is_finite() && ms.abs() <= MAX_DATE_MS).then(|| ms.trunc() as i64)
}

/// Parses the ISO-8601 date-time string forms `Date.parse` accepts.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp_millis());
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(Utc.from_utc_datetime(&dt).timestamp_millis());
        }
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M%#z"] {
        if let Ok(dt) = DateTime::parse_from_str(s, fmt) {
            return Some(dt.timestamp_millis());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(
            Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?)
                .timestamp_millis(),
        );
    }
    None
}

/// `new Date(ms).toISOString()` for years 0 to 9999 (listing every session formats two of
/// these per row, so this avoids chrono's general formatter).
pub fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return match Utc.timestamp_millis_opt(ms).single() {
            Some(dt) => dt.format("%+").to_string(),
            None => String::new(),
        };
    }
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    // Digits written in place: `format!` was a twentieth of `list --all --json`.
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut v: i64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, h);
    put(14, 2, min);
    put(17, 2, s);
    put(20, 3, milli);
    out.iter().map(|&b| char::from(b)).collect()
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `String(v)` as `Array#join` applies it to one element (`null` and `undefined` become "").
pub fn join_string(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_string(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(join_string).collect::<Vec<_>>().join(","),
        Value::Object(_) => "[object Object]".to_string(),
    }
}

fn number_string(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{f:.0}");
    }
    f.to_string()
}

/// Rewrites `\uD800`-`\uDFFF` escapes that are not part of a valid pair into `\uFFFD`, so a
/// line `JSON.parse` accepts (pi writes lone surrogates from cut emoji) also parses here.
/// Returns `None` when the text has no lone surrogate.
pub fn replace_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(b, i + 2) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let next = (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
                    .then(|| hex4(b, i + 8))
                    .flatten();
                if matches!(next, Some(0xDC00..=0xDFFF)) {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..i]);
            o.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// The four hex digits of a `\uXXXX` escape at `b[at..]`, as a number.
pub(crate) fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    if !s.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(s).ok()?, 16).ok()
}

/// JavaScript's `String#trim` (Unicode white space plus the BOM).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lone_surrogates_become_replacement_escapes() {
        assert_eq!(
            replace_lone_surrogates(r#""a\ud83d""#).as_deref(),
            Some(r#""a\ufffd""#)
        );
        assert_eq!(
            replace_lone_surrogates(r#""\ude00x""#).as_deref(),
            Some(r#""\ufffdx""#)
        );
        assert_eq!(replace_lone_surrogates(r#""\ud83d\ude00""#), None);
        assert_eq!(replace_lone_surrogates(r#""\\ud83d""#), None);
    }

    #[test]
    fn dates_follow_javascript() {
        assert_eq!(
            date_ms(&json!("2026-01-02T03:04:05.678Z")),
            Some(1767323045678)
        );
        assert_eq!(date_ms(&json!(null)), Some(0));
        assert_eq!(date_ms(&json!(12.9)), Some(12));
        assert_eq!(date_ms(&json!("yesterday")), None);
        assert_eq!(date_ms(&json!({})), None);
        assert_eq!(iso(1767323045678), "2026-01-02T03:04:05.678Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        // Year 0 to 9999 in uneven steps (every field's digits vary), and the ends.
        let steps = (0..5000i64).map(|k| -62_167_219_200_000 + k * 63_113_904_123);
        for ms in [
            -86_400_000_123i64,
            1_234_567_890_123,
            4_102_444_800_000,
            253_402_300_799_999,
            -62_167_219_200_000,
        ]
        .into_iter()
        .chain(steps.filter(|&ms| ms <= 253_402_300_799_999))
        {
            let chrono = Utc
                .timestamp_millis_opt(ms)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(iso(ms), chrono);
        }
    }

    #[test]
    fn join_string_matches_array_join() {
        assert_eq!(join_string(&json!(null)), "");
        assert_eq!(join_string(&json!(3.0)), "3");
        assert_eq!(join_string(&json!([1, "a", null])), "1,a,");
        assert_eq!(join_string(&json!({"a": 1})), "[object Object]");
    }
}
