//! The usage page: `pidx stats --by DIM` (the same query, so the same figures) as a bar chart
//! of one figure and the table of all of them. Charts are SVG drawn here from numbers and keys;
//! keys (model, project, tool names) come from transcripts and are escaped as any text.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup};
use serde::Deserialize;

use super::page::{self, Nav};
use super::{blocking, App, Ctx, Fail};
use crate::query::stats::{figures as stats, Dim, Figures, Row, StatsOptions, Zone};

const DIMS: [&str; 9] = [
    "day", "week", "month", "model", "project", "tool", "agent", "channel", "source",
];
const FIGURES: [&str; 4] = ["cost", "tokens", "sessions", "tool calls"];

/// Bars a chart draws (the rest are in the table).
const BARS: usize = 60;

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
        _ => f.cost,
    }
}

fn shown(v: f64, which: &str) -> String {
    if which == "cost" {
        format!("${v:.2}")
    } else {
        page::num(v as i64)
    }
}

pub async fn page(
    State(app): State<Arc<App>>,
    Query(q): Query<UsageQuery>,
) -> Result<Html<String>, Fail> {
    let source = q.source.clone().filter(|s| !s.is_empty());
    blocking(&app, source, move |ctx, reader| {
        // Machines are the team server's (`pidx --pg URL stats --by source`).
        let dims = &DIMS[..if ctx.server { DIMS.len() } else { DIMS.len() - 1 }];
        let by = q.by.as_deref().filter(|b| dims.contains(b)).unwrap_or("month");
        let which = q.figure.as_deref().filter(|f| FIGURES.contains(f)).unwrap_or("cost");
        let dim = Dim::parse_server(by).unwrap_or(Dim::Month);
        let opts = StatsOptions {
            dims: vec![dim],
            since_ms: None,
            until_ms: None,
            cwd: None,
            // The server cannot know this machine's zone: its periods are UTC's, as the CLI's.
            zone: if ctx.server {
                Zone::Named(chrono_tz::UTC)
            } else {
                Zone::Local
            },
        };
        let mut rows = stats(reader, &opts)?;
        // The total is `pidx stats` without --by (sessions counted once, not once a group).
        let overall = StatsOptions {
            dims: Vec::new(),
            ..opts
        };
        let total = stats(reader, &overall)?.pop();
        let src = page::source_param('&', q.source.as_deref());
        if !dim.is_time() {
            rows.sort_by(|a, b| figure(&b.figures, which).total_cmp(&figure(&a.figures, which)));
        }
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
                    p.meta { "total: " (shown(figure(&t.figures, "cost"), "cost")) " · " (page::num(t.figures.total_tokens)) " tokens · "
                        (page::num(t.figures.sessions)) " sessions · " (page::num(t.figures.tool_calls)) " tool calls (the figures of pidx stats --by " (by) ")" }
                }
                (chart(ctx, &rows, by, which))
                (table(ctx, &rows, by))
            },
        ))
    })
    .await
}

fn key(ctx: &Ctx, r: &Row, by: &str) -> String {
    ctx.clean(r.key.get(by).map_or("-", String::as_str))
        .into_owned()
}

/// A horizontal bar chart: one labelled bar a row.
fn chart(ctx: &Ctx, rows: &[Row], by: &str, which: &str) -> Markup {
    let rows: Vec<&Row> = if by == "day" || by == "week" || by == "month" {
        rows.iter()
            .rev()
            .take(BARS)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect()
    } else {
        rows.iter().take(BARS).collect()
    };
    let max = rows
        .iter()
        .map(|r| figure(&r.figures, which))
        .fold(0.0, f64::max);
    let (bar_h, label_w, width) = (18.0, 300.0, 1000.0);
    let height = bar_h * rows.len() as f64 + 4.0;
    html! {
        svg.chart viewBox=(format!("0 0 {width} {height}")) role="img" aria-label=(format!("{which} by {by}")) {
            @for (i, r) in rows.iter().enumerate() {
                @let v = figure(&r.figures, which);
                @let y = i as f64 * bar_h + 2.0;
                @let w = if max > 0.0 { (width - label_w - 110.0) * v / max } else { 0.0 };
                text.key x=(label_w - 6.0) y=(y + 13.0) text-anchor="end" {
                    (crate::term::one_line_upto(&key(ctx, r, by), 44)) }
                rect.bar x=(label_w) y=(y + 2.0) width=(format!("{w:.1}")) height=(bar_h - 4.0) {}
                text.value x=(label_w + w + 4.0) y=(y + 13.0) { (shown(v, which)) }
            }
        }
    }
}

fn table(ctx: &Ctx, rows: &[Row], by: &str) -> Markup {
    html! {
        table.rows {
            thead { tr { th { (by) } th.n { "cost" } th.n { "tokens" } th.n { "sessions" } th.n { "tool calls" } th.n { "errors" } } }
            tbody {
                @for r in rows {
                    tr {
                        td.cwd { (key(ctx, r, by)) }
                        td.n { (format!("${:.2}", r.figures.cost)) }
                        td.n { (page::num(r.figures.total_tokens)) }
                        td.n { (page::num(r.figures.sessions)) }
                        td.n { (page::num(r.figures.tool_calls)) }
                        td.n { (page::num(r.figures.tool_errors)) }
                    }
                }
            }
        }
    }
}
