//! Time on a chart: every calendar period (day, ISO week, month) of a range gets a slot, so quiet
//! periods show as gaps instead of vanishing, and undated activity (entries without a valid
//! timestamp, the `-` period of `stats`) is kept apart instead of posing as a first period.
//! Draws the terminal chart of `stats --by day|week|month`; the HTML report draws its SVG from
//! the same slots. The table and the JSON/CSV rows are left as `stats` computes them.

use std::collections::HashMap;

use chrono::{Datelike, Days, Months, NaiveDate};

use super::numbers::{count, money, thousands};
use super::output::Out;
use crate::query::stats::{Dim, Row, Zone};

/// The dates a range asks for, in the zone: `--since`'s day, and `--until`'s last day (today
/// when only `--since` is given). Unbounded sides follow the activity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    pub first: Option<NaiveDate>,
    pub last: Option<NaiveDate>,
}

impl Bounds {
    pub fn of(zone: &Zone, since_ms: Option<i64>, until_ms: Option<i64>, now_ms: i64) -> Bounds {
        let last = match (since_ms, until_ms) {
            (_, Some(until)) => Some(until - 1),
            (Some(_), None) => Some(now_ms),
            (None, None) => None,
        };
        Bounds {
            first: since_ms.and_then(|ms| zone.date(ms)),
            last: last.and_then(|ms| zone.date(ms)),
        }
    }
}

/// One calendar period and its row, `None` when nothing happened in it.
#[derive(Debug, Clone)]
pub struct Slot<'a> {
    pub start: NaiveDate,
    pub label: String,
    pub row: Option<&'a Row>,
}

/// Every period from the first to the last of a range, and the undated row apart.
#[derive(Debug, Clone)]
pub struct Timeline<'a> {
    pub unit: Dim,
    pub slots: Vec<Slot<'a>>,
    pub undated: Option<&'a Row>,
}

/// The first day of the period holding `d`.
pub fn period_start(unit: Dim, d: NaiveDate) -> NaiveDate {
    match unit {
        Dim::Week => d - Days::new(u64::from(d.weekday().num_days_from_monday())),
        Dim::Month => d.with_day(1).unwrap_or(d),
        _ => d,
    }
}

/// The first day of the period after the one starting at `start`.
pub fn next_period(unit: Dim, start: NaiveDate) -> NaiveDate {
    match unit {
        Dim::Week => start + Days::new(7),
        Dim::Month => start + Months::new(1),
        _ => start + Days::new(1),
    }
}

/// The label `stats` gives a period: `2026-01-31`, `2026-W05` (ISO week), `2026-01`.
pub fn period_label(unit: Dim, start: NaiveDate) -> String {
    match unit {
        Dim::Week => {
            let w = start.iso_week();
            format!("{}-W{:02}", w.year(), w.week())
        }
        Dim::Month => start.format("%Y-%m").to_string(),
        _ => start.format("%Y-%m-%d").to_string(),
    }
}

/// The first day of a period from its label; `None` for `-` (undated) or anything else.
pub fn parse_period(unit: Dim, label: &str) -> Option<NaiveDate> {
    match unit {
        Dim::Week => {
            let (y, w) = label.split_once("-W")?;
            NaiveDate::from_isoywd_opt(y.parse().ok()?, w.parse().ok()?, chrono::Weekday::Mon)
        }
        Dim::Month => NaiveDate::parse_from_str(&format!("{label}-01"), "%Y-%m-%d").ok(),
        _ => NaiveDate::parse_from_str(label, "%Y-%m-%d").ok(),
    }
}

/// Lays `rows` (keyed by one time dimension, `unit`) on a slot per period from the earlier of
/// `bounds.first` and the first activity to the later of `bounds.last` and the last activity.
pub fn timeline(unit: Dim, rows: &[Row], bounds: Bounds) -> Timeline<'_> {
    let mut undated = None;
    let mut by_start: HashMap<NaiveDate, &Row> = HashMap::new();
    for r in rows {
        let key = r.key_order.first().map_or("-", String::as_str);
        match parse_period(unit, key) {
            Some(start) => {
                by_start.insert(start, r);
            }
            None => undated = Some(r),
        }
    }
    let active = || by_start.keys().copied();
    let first = active().chain(bounds.first).min();
    let last = active().chain(bounds.last).max();
    let mut slots = Vec::new();
    if let (Some(first), Some(last)) = (first, last) {
        let mut start = period_start(unit, first);
        while start <= last {
            slots.push(Slot {
                start,
                label: period_label(unit, start),
                row: by_start.get(&start).copied(),
            });
            start = next_period(unit, start);
        }
    }
    Timeline {
        unit,
        slots,
        undated,
    }
}

/// More periods than this is not a chart anyone reads on a terminal.
const MAX_TERMINAL_SLOTS: usize = 1000;

/// Cost (tokens when nothing cost anything) per period as horizontal bars, a line per period
/// of the range: a quiet period is its label alone. Undated activity follows on its own line.
pub fn lines(t: &Timeline, paint: &dyn Fn(&str) -> String) -> Vec<String> {
    let by_cost = t
        .slots
        .iter()
        .filter_map(|s| s.row)
        .chain(t.undated)
        .any(|r| r.figures.cost > 0.0);
    let m = Measure { by_cost };
    let unit = t.unit.name();
    let active = t.slots.iter().filter(|s| s.row.is_some()).count();
    let mut out = Vec::new();
    if let (Some(first), Some(last)) = (t.slots.first(), t.slots.last()) {
        let what = if by_cost { "cost" } else { "tokens" };
        out.push(format!(
            "{what} per {unit}, {} to {}: {}, {} with activity",
            first.label,
            last.label,
            count(t.slots.len() as i64, unit),
            thousands(active as i64)
        ));
    }
    if t.slots.len() > MAX_TERMINAL_SLOTS {
        out.push(format!(
            "(chart left out: too many {unit}s to draw; narrow the range with --since/--until or use a longer period)"
        ));
    } else {
        out.extend(bars(t, &m, paint));
    }
    if let Some(r) = t.undated {
        let f = &r.figures;
        out.push(format!(
            "undated (entries without a valid timestamp, not drawn as a {unit}): {}, {}",
            m.shown(r),
            count(
                f.user_messages + f.assistant_messages + f.tool_results,
                "message"
            )
        ));
    }
    out
}

/// What a bar measures: cost, or tokens when nothing cost anything.
struct Measure {
    by_cost: bool,
}

impl Measure {
    fn value(&self, r: &Row) -> f64 {
        if self.by_cost {
            r.figures.cost
        } else {
            r.figures.total_tokens as f64
        }
    }

    fn shown(&self, r: &Row) -> String {
        if self.by_cost {
            money(r.figures.cost)
        } else {
            format!("{} tokens", thousands(r.figures.total_tokens))
        }
    }
}

/// A line per slot: the label, then a bar up to 50 cells and the value when it was active.
fn bars(t: &Timeline, m: &Measure, paint: &dyn Fn(&str) -> String) -> Vec<String> {
    let max = t
        .slots
        .iter()
        .filter_map(|s| s.row)
        .map(|r| m.value(r))
        .fold(0.0, f64::max);
    let width = t.slots.iter().map(|s| s.label.len()).max().unwrap_or(0);
    t.slots
        .iter()
        .map(|s| match s.row {
            None => format!("{:>width$}", s.label),
            Some(r) => {
                let n = if max > 0.0 {
                    (m.value(r) / max * 50.0).round() as usize
                } else {
                    0
                };
                let bar = if n > 0 {
                    format!("{} ", paint(&"█".repeat(n)))
                } else {
                    String::new()
                };
                format!("{:>width$} {bar}{}", s.label, m.shown(r))
            }
        })
        .collect()
}

/// Prints the chart of `rows` (keyed by the time dimension `unit`) below the `stats` table.
///
/// # Errors
/// As [`Out::line`].
pub fn write(out: &mut Out, unit: Dim, rows: &[Row], bounds: Bounds) -> std::io::Result<()> {
    let t = timeline(unit, rows, bounds);
    let paint = |s: &str| out.paint("36", s);
    let lines = lines(&t, &paint);
    for l in lines {
        out.line(&l)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::stats::Figures;

    fn row(key: &str, cost: f64) -> Row {
        Row {
            key: [("day", key.to_string())].into_iter().collect(),
            key_order: vec![key.to_string()],
            figures: Figures {
                cost,
                assistant_messages: 1,
                ..Figures::default()
            },
        }
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn quiet_days_are_slots_and_undated_is_apart() {
        let rows = [
            row("-", 9.0),
            row("2026-01-30", 1.0),
            row("2026-02-02", 2.5),
        ];
        let t = timeline(Dim::Day, &rows, Bounds::default());
        let labels: Vec<&str> = t.slots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]
        );
        assert_eq!(t.slots.iter().filter(|s| s.row.is_some()).count(), 2);
        assert_eq!(t.undated.map(|r| r.figures.cost), Some(9.0));
        let lines = lines(&t, &|s: &str| s.to_string());
        assert_eq!(
            lines,
            [
                "cost per day, 2026-01-30 to 2026-02-02: 4 days, 2 with activity",
                &format!("2026-01-30 {} $1.00", "█".repeat(20)),
                "2026-01-31",
                "2026-02-01",
                &format!("2026-02-02 {} $2.50", "█".repeat(50)),
                "undated (entries without a valid timestamp, not drawn as a day): $9.00, 1 message",
            ]
        );
    }

    #[test]
    fn the_range_asked_for_is_covered_even_when_quiet() {
        let rows = [row("2026-01-05", 1.0)];
        let bounds = Bounds {
            first: Some(date("2026-01-03")),
            last: Some(date("2026-01-07")),
        };
        let t = timeline(Dim::Day, &rows, bounds);
        assert_eq!(t.slots.len(), 5);
        assert_eq!(t.slots[2].label, "2026-01-05");
        assert!(t.slots[2].row.is_some() && t.slots[0].row.is_none());
    }

    #[test]
    fn weeks_and_months_step_by_calendar_periods() {
        let rows = [row("2025-W52", 1.0), row("2026-W03", 1.0)];
        let t = timeline(Dim::Week, &rows, Bounds::default());
        let labels: Vec<&str> = t.slots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["2025-W52", "2026-W01", "2026-W02", "2026-W03"]);
        let rows = [row("2025-11", 1.0), row("2026-02", 1.0)];
        let t = timeline(Dim::Month, &rows, Bounds::default());
        let labels: Vec<&str> = t.slots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["2025-11", "2025-12", "2026-01", "2026-02"]);
        assert_eq!(
            period_start(Dim::Week, date("2026-01-01")),
            date("2025-12-29")
        );
        assert_eq!(
            parse_period(Dim::Week, "2026-W01"),
            Some(date("2025-12-29"))
        );
        assert_eq!(parse_period(Dim::Day, "-"), None);
    }

    #[test]
    fn bounds_follow_since_and_until_in_the_zone() {
        let utc = Zone::parse("UTC").unwrap();
        let day = 86_400_000;
        let jan1 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
        let b = Bounds::of(&utc, Some(jan1), Some(jan1 + 3 * day), 0);
        assert_eq!(
            (b.first, b.last),
            (Some(date("2026-01-01")), Some(date("2026-01-03")))
        );
        let b = Bounds::of(&utc, Some(jan1), None, jan1 + 10 * day);
        assert_eq!(b.last, Some(date("2026-01-11")));
        assert!(Bounds::of(&utc, None, None, jan1).first.is_none());
    }
}
