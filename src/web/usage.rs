//! The usage page: `pidx stats --by DIM` (the same query, so the same figures) as a chart of one
//! figure and the table of all of them; by a period, every period of the range is a slot (a
//! quiet day is an empty slot, not a missing one). Below: messages by weekday and hour, and the
//! most expensive sessions. Charts are SVG drawn here from numbers and keys; keys (model,
//! project, tool names) come from transcripts and are escaped as any text.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup};
use serde::Deserialize;

use super::page::{self, Nav};
use super::{blocking, App, Ctx, Fail};
use crate::present::chart::{timeline, Bounds};
use crate::query::stats::{
    figures as stats, stats as local_stats, stats_each, Dim, Figures, Row, StatsOptions, Zone,
};
use crate::query::Reader;

const DIMS: [&str; 9] = [
    "day", "week", "month", "model", "project", "tool", "agent", "channel", "source",
];
const FIGURES: [&str; 5] = ["cost", "tokens", "sessions", "tool calls", "errors"];

/// Bars a chart of names draws (the rest are in the table); a chart of periods draws every
/// period of the range.
const BARS: usize = 60;

/// The most expensive sessions listed.
const TOP: usize = 10;

#[derive(Deserialize, Default)]
pub struct UsageQuery {
    by: Option<String>,
    figure: Option<String>,
    /// One machine of the team server.
    source: Option<String>,
}

fn figure(f: &Figures, which: &str) -> f64 {
    match which {
        "tokens" => f.total_tokens as f64,
        "sessions" => f.sessions as f64,
        "tool calls" => f.tool_calls as f64,
        "errors" => f.tool_errors as f64,
        _ => f.cost,
    }
}

fn shown(v: f64, which: &str) -> String {
    if which == "cost" {
        page::money(v)
    } else {
        page::num(v as i64)
    }
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<UsageQuery>,
) -> Result<Html<String>, Fail> {
    let source = q.source.clone().filter(|s| !s.is_empty());
    let app_ = Arc::clone(&app);
    blocking(&app, source, move |ctx, reader| {
        // Machines are the team server's (`pidx --pg URL stats --by source`).
        let dims = &DIMS[..if ctx.server { DIMS.len() } else { DIMS.len() - 1 }];
        let by = q.by.as_deref().filter(|b| dims.contains(b)).unwrap_or("month");
        let which = q.figure.as_deref().filter(|f| FIGURES.contains(f)).unwrap_or("cost");
        let dim = Dim::parse_server(by).unwrap_or(Dim::Month);
        // The server cannot know this machine's zone: its periods are UTC's, as the CLI's.
        let zone = if ctx.server {
            Zone::Named(chrono_tz::UTC)
        } else {
            Zone::Local
        };
        let opts = StatsOptions {
            dims: vec![dim],
            since_ms: None,
            until_ms: None,
            cwd: None,
            zone: zone.clone(),
        };
        // The total is `pidx stats` without --by (sessions counted once, not once a group);
        // locally both come from one read of the usage rollup, but by tool the rows are the
        // tool rollup's: then the two reads go side by side (120 -> 70 ms at 10,000 sessions).
        let (mut rows, total, extra) = match reader {
            Reader::Local { conn, scope, .. } if dim == Dim::Tool => {
                let overall = StatsOptions {
                    dims: Vec::new(),
                    ..opts.clone()
                };
                let rest = |conn: &rusqlite::Connection, scope: &crate::store::Scope| {
                    let total = local_stats(conn, scope, &overall)?;
                    Ok::<_, Fail>((total, local_extras(conn, scope, &zone)?))
                };
                let (rows, beside) = super::index::side_by_side(
                    &app_,
                    &ctx.stop,
                    || local_stats(conn, scope, &opts),
                    |store, scope| rest(&store.conn, scope),
                );
                let (total, extra) = match beside {
                    Some(done) => done?,
                    None => rest(conn, scope)?,
                };
                (rows?, total.into_iter().next(), Some(extra))
            }
            Reader::Local { conn, scope, .. } => {
                let mut each = stats_each(conn, scope, &opts, &[vec![dim], Vec::new()])?;
                let total = each.pop().and_then(|mut t| t.pop());
                let mut rows = each.pop().unwrap_or_default();
                if dim == Dim::Model {
                    model_errors(conn, &mut rows)?;
                }
                (rows, total, Some(local_extras(conn, scope, &zone)?))
            }
            _ => {
                let rows = stats(reader, &opts)?;
                let overall = StatsOptions {
                    dims: Vec::new(),
                    ..opts
                };
                (rows, stats(reader, &overall)?.pop(), None)
            }
        };
        let src = page::source_param('&', q.source.as_deref());
        if !dim.is_time() {
            rows.sort_by(|a, b| figure(&b.figures, which).total_cmp(&figure(&a.figures, which)));
        }
        // By a period: a slot for every period from the first activity to the last.
        let line = dim.is_time().then(|| timeline(dim, &rows, Bounds::default()));
        let slots: Vec<(String, Option<&Row>)> = match &line {
            Some(t) => t
                .slots
                .iter()
                .map(|s| (s.label.clone(), s.row))
                .chain(t.undated.map(|r| ("-".to_string(), Some(r))))
                .collect(),
            None => rows.iter().map(|r| (key(ctx, r, by), Some(r))).collect(),
        };
        Ok(page::layout(
            "usage",
            Nav::Top("usage"),
            html! {
                h1 { "Usage" }
                @if let Some(s) = &q.source { p.meta { "source " (ctx.clean(s)) " · " a href=(format!("/usage?by={by}&figure={}", page::enc(which))) { "every source" } } }
                p.choices { "by: " @for d in dims {
                    a href=(format!("/usage?by={d}&figure={}{src}", page::enc(which))) class=[(*d == by).then_some("here")] { (d) } " " } }
                p.choices { "figure: " @for f in FIGURES {
                    a href=(format!("/usage?by={by}&figure={}{src}", page::enc(f))) class=[(f == which).then_some("here")] { (f) } " " } }
                @if let Some(t) = &total {
                    p.meta #total { "total: " (page::money(t.figures.cost)) " · " (page::num(t.figures.total_tokens)) " tokens · "
                        (page::num(t.figures.sessions)) " sessions · " (page::num(t.figures.tool_calls)) " tool calls · "
                        (crate::present::numbers::count(t.figures.tool_errors, "error")) " (the figures of pidx stats)" }
                }
                @if let Some(t) = &line {
                    @if let (Some(first), Some(last)) = (t.slots.first(), t.slots.last()) {
                        p.meta #range { "range: " span.first { (first.label) } " to " span.last { (last.label) } " · "
                            (page::num(t.slots.len() as i64)) " " (by) "s, " (page::num(t.slots.iter().filter(|s| s.row.is_some()).count() as i64)) " with activity" }
                    }
                }
                @if dim.is_time() { (columns(&slots, by, which)) } @else { (chart(ctx, &rows, by, which)) }
                (table(&slots, by))
                @if let Some((grid, top)) = &extra {
                    h2 { "When: messages by weekday and hour" }
                    (heatmap(grid))
                    h2 { "The most expensive sessions" }
                    (top_table(ctx, top))
                }
            },
        ))
    })
    .await
}

/// What the local index adds: messages by weekday and hour, and the most expensive sessions
/// (and by model, errors charged to the model that made the failed call: [`model_errors`]).
type Extras = (
    [[i64; 24]; 7],
    Vec<crate::present::report::data::TopSession>,
);

/// By model, each row's errors are those of the calls its model made.
fn model_errors(conn: &rusqlite::Connection, rows: &mut [Row]) -> Result<(), Fail> {
    let errors = crate::query::activity::errors_by_model(conn)?;
    for r in rows.iter_mut() {
        let k = r.key.get("model").map_or("", String::as_str);
        r.figures.tool_errors = errors.iter().find(|(m, _)| m == k).map_or(0, |(_, n)| *n);
    }
    Ok(())
}

fn local_extras(
    conn: &rusqlite::Connection,
    scope: &crate::store::Scope,
    zone: &Zone,
) -> Result<Extras, Fail> {
    let grid = crate::query::activity::week_hours(conn, zone)?;
    // `stats --by session`'s first rows by cost, from the figures kept a session: the table
    // shows cost, tokens and tool calls, which is what these rows carry (the other figures
    // stay zero).
    let by_session = crate::query::per_session::most_expensive(conn, scope, TOP)?
        .into_iter()
        .map(|(path, f)| Row {
            key: [("session", path.clone())].into(),
            key_order: vec![path],
            figures: Figures {
                sessions: 1,
                assistant_messages: f.assistant,
                tool_calls: f.tool_calls,
                tool_errors: f.tool_errors,
                total_tokens: f.tokens,
                cost: f.cost,
                ..Figures::default()
            },
        })
        .collect();
    let top = crate::present::report::data::top_sessions(conn, zone, by_session)?;
    Ok((grid, top))
}

fn key(ctx: &Ctx, r: &Row, by: &str) -> String {
    ctx.clean(r.key.get(by).map_or("-", String::as_str))
        .into_owned()
}

/// A horizontal bar chart of names: one labelled bar a row, the label column as wide as the
/// longest name (to 100 characters) so a long model name is whole.
fn chart(ctx: &Ctx, rows: &[Row], by: &str, which: &str) -> Markup {
    let rows: Vec<&Row> = rows.iter().take(BARS).collect();
    let max = rows
        .iter()
        .map(|r| figure(&r.figures, which))
        .fold(0.0, f64::max);
    let longest = rows
        .iter()
        .map(|r| key(ctx, r, by).chars().count().min(100))
        .max()
        .unwrap_or(0);
    let label_w = (longest as f64 * 7.2 + 12.0).clamp(120.0, 740.0);
    let (bar_h, width) = (18.0, label_w + 700.0);
    let height = bar_h * rows.len() as f64 + 4.0;
    html! {
        svg.chart viewBox=(format!("0 0 {width} {height}")) role="img" aria-label=(format!("{which} by {by}")) {
            @for (i, r) in rows.iter().enumerate() {
                @let v = figure(&r.figures, which);
                @let y = i as f64 * bar_h + 2.0;
                @let w = if max > 0.0 { 580.0 * v / max } else { 0.0 };
                text.key x=(label_w - 6.0) y=(y + 13.0) text-anchor="end" {
                    (crate::term::one_line_upto(&key(ctx, r, by), 100)) }
                rect.bar x=(label_w) y=(y + 2.0) width=(format!("{w:.1}")) height=(bar_h - 4.0) {}
                text.value x=(label_w + w + 4.0) y=(y + 13.0) { (shown(v, which)) }
            }
        }
    }
}

/// Columns over time: a slot for every period, a label under every few so none overlap.
fn columns(slots: &[(String, Option<&Row>)], by: &str, which: &str) -> Markup {
    let dated: Vec<&(String, Option<&Row>)> = slots.iter().filter(|(k, _)| k != "-").collect();
    let n = dated.len().max(1);
    let (width, height, left, bottom) = (1000.0, 220.0, 70.0, 24.0);
    let slot = (width - left - 10.0) / n as f64;
    let value = |r: &Option<&Row>| r.map_or(0.0, |r| figure(&r.figures, which));
    let max = dated.iter().map(|(_, r)| value(r)).fold(0.0, f64::max);
    // A label is ~7 units a character; one every `every` slots leaves a gap between them.
    let label_w = dated.first().map_or(10, |(k, _)| k.len()) as f64 * 7.0 + 14.0;
    let every = (label_w / slot).ceil().max(1.0) as usize;
    let base = height - bottom;
    html! {
        svg.chart.columns viewBox=(format!("0 0 {width} {height}")) role="img" aria-label=(format!("{which} by {by}")) {
            text.value x=(left - 6.0) y="12" text-anchor="end" { (shown(max, which)) }
            text.value x=(left - 6.0) y=(base) text-anchor="end" { (shown(0.0, which)) }
            line.base x1=(left) x2=(width - 10.0) y1=(base) y2=(base) {}
            @for (i, (k, r)) in dated.iter().enumerate() {
                @let v = value(r);
                @let h = if max > 0.0 { (base - 14.0) * v / max } else { 0.0 };
                @let x = left + i as f64 * slot;
                rect.bar.slot x=(format!("{x:.2}")) y=(format!("{:.2}", base - h)) width=(format!("{:.2}", (slot * 0.85).max(0.5))) height=(format!("{h:.2}")) {
                    title { (k) ": " (shown(v, which)) }
                }
                @if i % every == 0 {
                    text.tick-label x=(format!("{x:.2}")) y=(height - 6.0) { (k) }
                }
            }
        }
    }
}

fn table(slots: &[(String, Option<&Row>)], by: &str) -> Markup {
    let none = Figures::default();
    html! {
        table.rows.usage {
            thead { tr { th { (by) } th.n { "cost" } th.n { "tokens" } th.n { "sessions" } th.n { "tool calls" } th.n { "errors" } } }
            tbody {
                @for (k, r) in slots {
                    @let f = r.map_or(&none, |r| &r.figures);
                    tr class=[r.is_none().then_some("quiet")] {
                        td.key { (k) }
                        td.n { (page::money(f.cost)) }
                        td.n { (page::num(f.total_tokens)) }
                        td.n { (page::num(f.sessions)) }
                        td.n { (page::num(f.tool_calls)) }
                        td.n { (page::num(f.tool_errors)) }
                    }
                }
            }
        }
    }
}

/// Messages by weekday (rows, Monday first) and hour (columns), darker where there are more.
fn heatmap(grid: &[[i64; 24]; 7]) -> Markup {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let max = grid.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let (cell, left, top) = (30.0, 40.0, 16.0);
    html! {
        svg.chart.heat viewBox=(format!("0 0 {} {}", left + 24.0 * cell, top + 7.0 * cell)) role="img" aria-label="messages by weekday and hour" {
            @for h in (0..24).step_by(3) { text.value x=(left + h as f64 * cell + 2.0) y="12" { (format!("{h:02}h")) } }
            @for (d, row) in grid.iter().enumerate() {
                text.key x="0" y=(top + d as f64 * cell + 19.0) { (DAYS[d]) }
                @for (h, n) in row.iter().enumerate() {
                    // Opacity as an attribute (the CSP forbids inline styles).
                    rect.cell x=(left + h as f64 * cell) y=(top + d as f64 * cell) width=(cell - 2.0) height=(cell - 2.0)
                        fill-opacity=(format!("{:.2}", if *n == 0 { 0.04 } else { 0.15 + 0.85 * *n as f64 / max })) {
                        title { (DAYS[d]) " " (format!("{h:02}:00")) ": " (page::num(*n)) " messages" }
                    }
                }
            }
        }
    }
}

fn top_table(ctx: &Ctx, top: &[crate::present::report::data::TopSession]) -> Markup {
    html! {
        table.rows #top-sessions {
            thead { tr { th { "session" } th { "project" } th.n { "cost" } th.n { "tokens" } th.n { "tool calls" } } }
            tbody {
                @for s in top {
                    tr {
                        td.title { a href=(page::session_url(&s.path, None)) { (ctx.line(if s.title.is_empty() { &s.id } else { &s.title }, 100)) } }
                        td.cwd { (ctx.clean(&s.cwd)) }
                        td.n { (page::money(s.figures.cost)) }
                        td.n { (page::num(s.figures.total_tokens)) }
                        td.n { (page::num(s.figures.tool_calls)) }
                    }
                }
            }
        }
    }
}
