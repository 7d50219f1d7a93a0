//! Numbers for people, the one owner of how they read wherever pidx prints for a person (the
//! terminal tables and lines of `stats`, `show`, `push`, the picker, the chart, the HTML report
//! and the web pages): counts with thousands separators (`1,234,567`, `thousands`/`count`) and
//! one money policy (`money`). Machine output (JSON, CSV) never goes through here.
//!
//! **Money** reads in dollars to the cent with separators, `$1,795.40`, everywhere a person
//! reads it: pi records costs to many decimals, but a cost a person compares is cents, and one
//! format means the same session reads the same in `stats`, `show` and the picker. A non-zero
//! amount under half a cent reads `<$0.01`, so a cheap model is not mistaken for a free one.
//! JSON keeps pi's recorded figure unrounded and CSV four decimals, for sums done elsewhere.

use crate::term::plural;

/// An integer with thousands separators: `1,234,567`. Any integer type (`usize` counts too;
/// the digits themselves are `term::thousands`', which the core's own reports use).
pub fn thousands(n: impl TryInto<i128>) -> String {
    crate::term::thousands(n.try_into().unwrap_or(i128::MAX))
}

/// Dollars to the cent with separators: `$1,234.56`, `-$0.50`. Amounts that round to zero
/// cents but are not zero show as `<$0.01`, so a cheap model is not mistaken for a free one.
pub fn money(v: f64) -> String {
    if !v.is_finite() {
        return "$?".into();
    }
    if v != 0.0 && v.abs() < 0.005 {
        return if v > 0.0 { "<$0.01" } else { "-<$0.01" }.into();
    }
    let cents = (v.abs() * 100.0).round() as i64;
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}${}.{:02}", thousands(cents / 100), cents % 100)
}

/// `n` tokens for people: `3,153,254 tokens`, `1 token`.
pub fn tokens(n: i64) -> String {
    count(n, "token")
}

/// `n` things, with separators and the plural when it is not one: `1 message`, `1,024 messages`.
pub fn count(n: i64, thing: &str) -> String {
    format!("{} {thing}{}", thousands(n), plural(n))
}

/// A share as a percentage with one decimal: `12.5%`.
pub fn percent(part: f64, whole: f64) -> String {
    if whole <= 0.0 {
        return "–".into();
    }
    format!("{:.1}%", part / whole * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_has_one_format() {
        for (v, s) in [
            (0.0, "$0.00"),
            (53.456, "$53.46"),
            (1234.5, "$1,234.50"),
            (0.004, "<$0.01"),
            (-0.5, "-$0.50"),
            (1_000_000.0, "$1,000,000.00"),
        ] {
            assert_eq!(money(v), s, "{v}");
        }
        assert_eq!(percent(1.0, 8.0), "12.5%");
        assert_eq!(count(1, "day"), "1 day");
        assert_eq!(count(1_024, "day"), "1,024 days");
        assert_eq!(percent(1.0, 0.0), "–");
        assert_eq!(tokens(3_153_254), "3,153,254 tokens");
        assert_eq!(money(1795.4048), "$1,795.40");
    }
}
