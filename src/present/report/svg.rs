//! Inline SVG charts that scale with the page (a viewBox and width 100%, never fixed pixels):
//! stacked columns over a date axis, the cumulative cost line, horizontal bars. Each period is
//! a slot of the same width, so quiet periods are gaps. Every text is escaped here (`esc`);
//! callers pass plain text.

use std::fmt::Write as _;

use chrono::{Datelike, Days, Months, NaiveDate};

use super::escape::esc;
use crate::present::chart::next_period;
use crate::query::stats::Dim;

/// The drawing's width in user units; the page scales it to the column's width.
const W: f64 = 960.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 36.0;
const H: f64 = 260.0;

/// The periods along the x axis: their first days, in order, one slot each.
pub struct Axis<'a> {
    pub unit: Dim,
    pub starts: &'a [NaiveDate],
    pub labels: &'a [String],
}

impl Axis<'_> {
    fn slot(&self) -> f64 {
        (W - LEFT - RIGHT) / self.starts.len().max(1) as f64
    }
}

/// A series of a stack, drawn with a CSS class (`m0`..., `tin`...).
pub struct Layer {
    pub name: String,
    pub class: String,
}

/// Values on the y axis: how they read and their smallest meaningful step (a cent, a token).
pub struct Scale<'a> {
    pub fmt: &'a dyn Fn(f64) -> String,
    pub min_step: f64,
}

/// Stacked columns: `values[slot][layer]`; a slot whose values are all zero draws nothing.
pub fn columns(
    id: &str,
    axis: &Axis,
    layers: &[Layer],
    values: &[Vec<f64>],
    scale: &Scale,
) -> String {
    let max = values
        .iter()
        .map(|v| v.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let (top, mut svg) = frame(id, max, scale);
    let bw = axis.slot();
    let y = |v: f64| H - BOTTOM - v / top * (H - TOP - BOTTOM);
    for (i, slot) in values.iter().enumerate() {
        let x = LEFT + i as f64 * bw + bw * 0.075;
        let mut base = 0.0;
        for (layer, &v) in layers.iter().zip(slot).filter(|(_, &v)| v > 0.0) {
            let _ = write!(
                svg,
                r#"<rect class="bar {}" x="{x:.2}" y="{:.2}" width="{:.2}" height="{:.2}"><title>{}: {} {}</title></rect>"#,
                layer.class,
                y(base + v),
                bw * 0.85,
                y(base) - y(base + v),
                esc(&axis.labels[i]),
                esc(&layer.name),
                esc(&(scale.fmt)(v)),
            );
            base += v;
        }
    }
    svg.push_str(&x_axis(axis));
    svg.push_str("</svg>");
    svg
}

/// A running total as a line over an area, ending on its value.
pub fn cumulative(id: &str, axis: &Axis, values: &[f64], scale: &Scale) -> String {
    let max = values.last().copied().unwrap_or(0.0);
    let (top, mut svg) = frame(id, max, scale);
    let bw = axis.slot();
    let y = |v: f64| H - BOTTOM - v / top * (H - TOP - BOTTOM);
    let mut line = format!("M{LEFT:.2},{:.2}", y(0.0));
    for (i, v) in values.iter().enumerate() {
        let _ = write!(line, " L{:.2},{:.2}", LEFT + (i + 1) as f64 * bw, y(*v));
        let _ = write!(
            svg,
            r#"<rect class="hover" x="{:.2}" y="{TOP}" width="{bw:.2}" height="{:.2}"><title>{}: {} so far</title></rect>"#,
            LEFT + i as f64 * bw,
            H - TOP - BOTTOM,
            esc(&axis.labels[i]),
            esc(&(scale.fmt)(*v))
        );
    }
    let end_x = LEFT + values.len() as f64 * bw;
    let _ = write!(
        svg,
        r#"<path class="area" d="{line} L{end_x:.2},{:.2} Z"/><path class="line" d="{line}"/><text class="value" x="{:.2}" y="{:.2}" text-anchor="end">{}</text>"#,
        y(0.0),
        end_x - 4.0,
        (y(max) - 6.0).max(TOP + 10.0),
        esc(&(scale.fmt)(max))
    );
    svg.push_str(&x_axis(axis));
    svg.push_str("</svg>");
    svg
}

/// One horizontal bar: `part` (errors, say) is drawn over the start of `value`'s bar.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub part: f64,
    pub text: String,
}

/// Horizontal bars, labels on the left (cut to fit; the full label is the tooltip).
pub fn bars(id: &str, items: &[Bar], cut: fn(&str, usize) -> String) -> String {
    const ROW: f64 = 26.0;
    const LABEL_W: f64 = 340.0;
    const TEXT_W: f64 = 230.0;
    let h = ROW * items.len().max(1) as f64 + 8.0;
    let max = items.iter().map(|b| b.value).fold(0.0, f64::max);
    let mut svg = open(id, h);
    for (i, b) in items.iter().enumerate() {
        let y = 4.0 + i as f64 * ROW;
        let scale = |v: f64| {
            if max > 0.0 {
                v / max * (W - LABEL_W - TEXT_W)
            } else {
                0.0
            }
        };
        let (bw, pw) = (scale(b.value), scale(b.part));
        let _ = write!(
            svg,
            r#"<g><title>{}: {}</title><text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect class="bar" x="{LABEL_W}" y="{:.1}" width="{bw:.2}" height="{:.1}"/>"#,
            esc(&b.label),
            esc(&b.text),
            LABEL_W - 8.0,
            y + ROW * 0.66,
            esc(&cut(&b.label, 40)),
            y + 3.0,
            ROW - 8.0
        );
        if pw > 0.0 {
            let _ = write!(
                svg,
                r#"<rect class="bar part" x="{LABEL_W}" y="{:.1}" width="{pw:.2}" height="{:.1}"/>"#,
                y + 3.0,
                ROW - 8.0
            );
        }
        let _ = write!(
            svg,
            r#"<text class="value" x="{:.1}" y="{:.1}">{}</text></g>"#,
            LABEL_W + bw + 6.0,
            y + ROW * 0.66,
            esc(&b.text)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn open(id: &str, h: f64) -> String {
    format!(
        r#"<svg id="{id}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="100%" preserveAspectRatio="xMinYMin meet" role="img">"#
    )
}

/// Opens a time chart: horizontal grid lines with y labels. Returns the axis' top value.
fn frame(id: &str, max: f64, scale: &Scale) -> (f64, String) {
    let step = nice_step(max, scale.min_step);
    let steps = (max / step).ceil().max(1.0);
    let top = step * steps;
    let mut svg = open(id, H);
    for k in 0..=steps as usize {
        let v = step * k as f64;
        let y = H - BOTTOM - v / top * (H - TOP - BOTTOM);
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.2}" y2="{y:.2}"/><text class="axis" x="{:.1}" y="{:.2}" text-anchor="end">{}</text>"#,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            esc(&(scale.fmt)(v))
        );
    }
    (top, svg)
}

/// A round step (1, 2, 2.5 or 5 times a power of ten, a multiple of `min_step`) that cuts
/// `max` into about four.
fn nice_step(max: f64, min_step: f64) -> f64 {
    let raw = (max / 4.0).max(min_step);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        let step = m * mag;
        let ratio = step / min_step;
        if step >= raw * 0.999_999 && (ratio - ratio.round()).abs() < 1e-6 {
            return step;
        }
    }
    10.0 * mag
}

/// How far apart labelled ticks are.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Slot,
    Week,
    Month,
    Quarter,
    Year,
}

/// The tick's day on or after `d`.
fn boundary(level: Level, d: NaiveDate) -> NaiveDate {
    let first_of = |y: i32, m: u32| NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(d);
    match level {
        Level::Slot => d,
        Level::Week => d + Days::new(u64::from((7 - d.weekday().num_days_from_monday()) % 7)),
        Level::Month | Level::Quarter | Level::Year => {
            let every = match level {
                Level::Month => 1,
                Level::Quarter => 3,
                _ => 12,
            };
            let mut b = first_of(d.year(), d.month());
            if b < d {
                b = b + Months::new(1);
            }
            while !(b.month() - 1).is_multiple_of(every) {
                b = b + Months::new(1);
            }
            b
        }
    }
}

/// Labelled ticks as (position in slots, label): the finest level giving at most 14 ticks.
fn ticks(axis: &Axis) -> Vec<(f64, String)> {
    const MOST: usize = 14;
    let levels: &[Level] = if axis.starts.len() <= MOST {
        &[Level::Slot]
    } else if axis.unit == Dim::Day {
        &[Level::Week, Level::Month, Level::Quarter, Level::Year]
    } else {
        &[Level::Month, Level::Quarter, Level::Year]
    };
    let mut found = Vec::new();
    for &level in levels {
        found = ticks_at(axis, level);
        if found.len() <= MOST {
            return found;
        }
    }
    let every = found.len().div_ceil(MOST);
    found.into_iter().step_by(every).collect()
}

fn ticks_at(axis: &Axis, level: Level) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    let mut last_year = None;
    for (i, &start) in axis.starts.iter().enumerate() {
        let next = next_period(axis.unit, start);
        let b = if level == Level::Slot {
            start
        } else {
            boundary(level, start)
        };
        if b >= next {
            continue;
        }
        let within = (b - start).num_days() as f64 / (next - start).num_days().max(1) as f64;
        let new_year = last_year != Some(b.year());
        last_year = Some(b.year());
        let label = match (level, axis.unit) {
            (Level::Year, _) => b.format("%Y").to_string(),
            (Level::Slot | Level::Week, Dim::Day | Dim::Week) if !new_year => {
                b.format("%b %-d").to_string()
            }
            (Level::Slot | Level::Week, Dim::Day | Dim::Week) => b.format("%b %-d %Y").to_string(),
            _ if new_year || b.month() == 1 => b.format("%b %Y").to_string(),
            _ => b.format("%b").to_string(),
        };
        out.push((i as f64 + within, label));
    }
    out
}

/// The x axis: a baseline, a tick per labelled boundary.
fn x_axis(axis: &Axis) -> String {
    let bw = axis.slot();
    let base = H - BOTTOM;
    let mut svg = format!(
        r#"<line class="base" x1="{LEFT}" x2="{:.1}" y1="{base}" y2="{base}"/>"#,
        W - RIGHT
    );
    // A label is about 7.5 units a character at the axis' 13px: one that would run into the
    // label before it is left out (its tick stays), so no two labels overlap.
    let mut free_from = f64::MIN;
    for (at, label) in ticks(axis) {
        let x = LEFT + at * bw;
        let anchor = if x > W - 70.0 { "end" } else { "start" };
        let width = label.chars().count() as f64 * 7.5 + 6.0;
        let (from, to) = if anchor == "end" {
            (x - width, x)
        } else {
            (x, x + width)
        };
        let _ = write!(
            svg,
            r#"<line class="tick" x1="{x:.2}" x2="{x:.2}" y1="{base}" y2="{:.1}"/>"#,
            base + 6.0
        );
        if from < free_from {
            continue;
        }
        free_from = to;
        let _ = write!(
            svg,
            r#"<text class="axis tick-label" x="{:.2}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
            if anchor == "end" { x - 2.0 } else { x + 2.0 },
            base + 20.0,
            esc(&label)
        );
    }
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::chart::{next_period, period_label};

    fn axis_of(unit: Dim, from: &str, n: usize) -> (Vec<NaiveDate>, Vec<String>) {
        let mut d = NaiveDate::parse_from_str(from, "%Y-%m-%d").unwrap();
        let mut starts = Vec::new();
        for _ in 0..n {
            starts.push(d);
            d = next_period(unit, d);
        }
        let labels = starts.iter().map(|s| period_label(unit, *s)).collect();
        (starts, labels)
    }

    fn tick_labels(unit: Dim, from: &str, n: usize) -> Vec<String> {
        let (starts, labels) = axis_of(unit, from, n);
        let axis = Axis {
            unit,
            starts: &starts,
            labels: &labels,
        };
        ticks(&axis).into_iter().map(|(_, l)| l).collect()
    }

    /// The extents of the axis' labels in drawing units, at the width `x_axis` reserves.
    fn label_extents(svg: &str) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        for part in svg.split("<text ").skip(1) {
            let num = |k: &str| -> f64 {
                let at = part.find(k).unwrap() + k.len();
                part[at..].split('"').next().unwrap().parse().unwrap()
            };
            let text = part.split('>').nth(1).unwrap().split('<').next().unwrap();
            let w = text.chars().count() as f64 * 7.5;
            let x = num("x=\"");
            out.push(if part.contains("text-anchor=\"end\"") {
                (x - w, x)
            } else {
                (x, x + w)
            });
        }
        out
    }

    #[test]
    fn no_two_date_labels_overlap() {
        for (unit, from, n) in [
            (Dim::Day, "2026-03-01", 13),
            (Dim::Day, "2025-12-20", 14),
            (Dim::Week, "2025-10-06", 14),
            (Dim::Day, "2026-01-01", 97),
        ] {
            let (starts, labels) = axis_of(unit, from, n);
            let axis = Axis {
                unit,
                starts: &starts,
                labels: &labels,
            };
            let mut boxes = label_extents(&x_axis(&axis));
            assert!(boxes.len() >= 3, "{unit:?} {from} {n}: {boxes:?}");
            boxes.sort_by(|a, b| a.0.total_cmp(&b.0));
            for pair in boxes.windows(2) {
                assert!(pair[0].1 <= pair[1].0, "{unit:?} {from} {n}: {boxes:?}");
            }
        }
    }

    #[test]
    fn ticks_name_weeks_months_or_years_as_the_range_grows() {
        assert_eq!(
            tick_labels(Dim::Day, "2026-01-05", 3),
            ["Jan 5 2026", "Jan 6", "Jan 7"]
        );
        assert_eq!(
            tick_labels(Dim::Day, "2026-01-01", 40),
            ["Jan 5 2026", "Jan 12", "Jan 19", "Jan 26", "Feb 2", "Feb 9"]
        );
        assert_eq!(
            tick_labels(Dim::Day, "2025-11-15", 120),
            ["Dec 2025", "Jan 2026", "Feb", "Mar"]
        );
        assert_eq!(
            tick_labels(Dim::Week, "2025-12-29", 60),
            [
                "Jan 2026", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                "Dec", "Jan 2027", "Feb"
            ]
        );
        assert_eq!(tick_labels(Dim::Month, "2020-01-01", 72).len(), 6);
    }

    #[test]
    fn quiet_slots_draw_nothing_and_keep_their_place() {
        let (starts, labels) = axis_of(Dim::Day, "2026-03-01", 4);
        let axis = Axis {
            unit: Dim::Day,
            starts: &starts,
            labels: &labels,
        };
        let layers = [Layer {
            name: "m".into(),
            class: "m0".into(),
        }];
        let values = [vec![1.0], vec![0.0], vec![0.0], vec![2.0]];
        let money = |v: f64| crate::present::numbers::money(v);
        let svg = columns(
            "c",
            &axis,
            &layers,
            &values,
            &Scale {
                fmt: &money,
                min_step: 0.01,
            },
        );
        let bars: Vec<&str> = svg
            .match_indices("<rect class=\"bar")
            .map(|(i, _)| &svg[i..])
            .collect();
        assert_eq!(bars.len(), 2);
        assert!(bars[0].contains("2026-03-01: m $1.00") && bars[1].contains("2026-03-04: m $2.00"));
        // The second bar sits in the fourth slot: three slot widths to the right of the first.
        let x = |s: &str| -> f64 {
            s.split("x=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let slot = (W - LEFT - RIGHT) / 4.0;
        assert!((x(bars[1]) - x(bars[0]) - 3.0 * slot).abs() < 0.01);
        assert!(svg.contains("width=\"100%\"") && svg.contains("viewBox=\"0 0 960 260\""));
    }

    #[test]
    fn steps_are_round_and_never_below_the_unit() {
        assert_eq!(nice_step(100.0, 0.01), 25.0);
        assert!((nice_step(0.02, 0.01) - 0.01).abs() < 1e-12);
        assert_eq!(nice_step(9.0, 1.0), 5.0);
        assert_eq!(nice_step(1_234_567.0, 1.0), 500_000.0);
    }
}
