//! `pidx report --html FILE`: one self-contained page (inline SVG, no script, no network) with
//! cost and tokens over time, cost by model and by project, and the most expensive sessions.
//! Every piece of transcript text (names, first messages, paths, model ids) is HTML-escaped.

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::{ProjectArgs, RangeArgs, ZoneArgs};
use super::env::Env;
use super::output::Out;
use super::Found;
use crate::query::stats::{self, Dim, Row, StatsOptions};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Where to write the page.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub range: RangeArgs,
    #[command(flatten)]
    pub zone: ZoneArgs,
}

pub fn run(env: &Env, args: &ReportArgs, out: &mut Out) -> Result<Found> {
    let zone = args.zone.zone()?;
    let (since_ms, until_ms) = args.range.bounds(chrono::Utc::now().timestamp_millis())?;
    let (store, scope) = env.open_fresh()?;
    let run = |dims: Vec<Dim>| {
        stats::stats(
            &store.conn,
            &scope,
            &StatsOptions {
                dims,
                since_ms,
                until_ms,
                cwd: args.project.cwd(),
                zone: zone.clone(),
            },
        )
    };
    let days = run(vec![Dim::Day])?;
    let models = run(vec![Dim::Model])?;
    let projects = run(vec![Dim::Project])?;
    let sessions = run(vec![Dim::Session])?;
    let total = run(Vec::new())?;
    let mut titles = store.conn.prepare(
        "SELECT coalesce(s.name, s.first_message, ''), s.cwd FROM sessions s JOIN files f ON f.id = s.file_id
         WHERE f.path = ?1",
    )?;
    let mut top: Vec<(&Row, String, String)> = sessions
        .iter()
        .map(|r| {
            let path = r.key_order[0].clone();
            let (title, cwd) = titles
                .query_row([&path], |x| Ok((x.get(0)?, x.get(1)?)))
                .unwrap_or_default();
            (r, title, cwd)
        })
        .collect();
    top.sort_by(|a, b| b.0.figures.cost.total_cmp(&a.0.figures.cost));
    top.truncate(20);
    let page = render(&days, &models, &projects, &top, total.first());
    std::fs::write(&args.html, page).with_context(|| format!("writing {}", args.html.display()))?;
    out.line(&format!("report written to {}", args.html.display()))?;
    Ok(!days.is_empty())
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        one.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// Vertical bars over time.
fn columns_svg(id: &str, title: &str, items: &[(String, f64)], unit: &str) -> String {
    let (w, h, pad) = (900.0, 240.0, 40.0);
    let max = items
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let bw = (w - 2.0 * pad) / items.len().max(1) as f64;
    let mut svg = format!(
        r#"<figure><figcaption>{}</figcaption><svg id="{id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img">"#,
        esc(title)
    );
    for (i, (label, v)) in items.iter().enumerate() {
        let bh = (v / max) * (h - 2.0 * pad);
        let x = pad + i as f64 * bw;
        let _ = write!(
            svg,
            r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}"><title>{}: {}{unit}</title></rect>"#,
            h - pad - bh,
            (bw - 1.0).max(1.0),
            esc(label),
            fmt_num(*v)
        );
    }
    if let (Some(first), Some(last)) = (items.first(), items.last()) {
        let _ = write!(
            svg,
            r#"<text x="{pad}" y="{}" class="axis">{}</text><text x="{}" y="{}" text-anchor="end" class="axis">{}</text><text x="{pad}" y="{}" class="axis">max {}{unit}</text>"#,
            h - pad / 2.0,
            esc(&first.0),
            w - pad,
            h - pad / 2.0,
            esc(&last.0),
            pad / 2.0,
            fmt_num(max)
        );
    }
    svg.push_str("</svg></figure>");
    svg
}

/// Horizontal bars with labels.
fn bars_svg(id: &str, title: &str, items: &[(String, f64)], unit: &str) -> String {
    let row = 22.0;
    let (w, label_w) = (900.0, 320.0);
    let h = row * items.len().max(1) as f64 + 10.0;
    let max = items
        .iter()
        .map(|(_, v)| *v)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut svg = format!(
        r#"<figure><figcaption>{}</figcaption><svg id="{id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img">"#,
        esc(title)
    );
    for (i, (label, v)) in items.iter().enumerate() {
        let y = 5.0 + i as f64 * row;
        let bw = (v / max) * (w - label_w - 120.0);
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" class="label">{}</text><rect class="bar" x="{label_w}" y="{y:.1}" width="{bw:.1}" height="{:.1}"><title>{}</title></rect><text x="{:.1}" y="{:.1}" class="value">{}{unit}</text>"#,
            label_w - 8.0,
            y + row * 0.7,
            esc(&truncate(label, 48)),
            row - 6.0,
            esc(label),
            label_w + bw + 6.0,
            y + row * 0.7,
            fmt_num(*v)
        );
    }
    svg.push_str("</svg></figure>");
    svg
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn top_by(rows: &[Row], value: impl Fn(&Row) -> f64, n: usize) -> Vec<(String, f64)> {
    let mut items: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (r.key_order.first().cloned().unwrap_or_default(), value(r)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1));
    items.truncate(n);
    items
}

fn render(
    days: &[Row],
    models: &[Row],
    projects: &[Row],
    top: &[(&Row, String, String)],
    total: Option<&Row>,
) -> String {
    let series = |f: &dyn Fn(&Row) -> f64| -> Vec<(String, f64)> {
        days.iter()
            .map(|r| (r.key_order[0].clone(), f(r)))
            .collect()
    };
    let mut html = String::from(
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>pidx report</title><style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.4em}
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}
.bar{fill:#3b82f6}.axis,.label,.value{font-size:11px;fill:#444}
table{border-collapse:collapse}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}
</style></head><body><h1>pi sessions: cost and tokens</h1>"#,
    );
    if let Some(t) = total {
        let f = &t.figures;
        let _ = write!(
            html,
            "<p id=\"summary\">{} sessions, {} assistant messages, {} tokens, cost ${:.2}, {} tool calls, {} active days.</p>",
            f.sessions, f.assistant_messages, f.total_tokens, f.cost, f.tool_calls, f.active_days
        );
    }
    html.push_str(&columns_svg(
        "cost-by-day",
        "Cost per day",
        &series(&|r| r.figures.cost),
        " $",
    ));
    html.push_str(&columns_svg(
        "tokens-by-day",
        "Tokens per day",
        &series(&|r| r.figures.total_tokens as f64),
        "",
    ));
    html.push_str(&bars_svg(
        "cost-by-model",
        "Cost by model",
        &top_by(models, |r| r.figures.cost, 15),
        " $",
    ));
    html.push_str(&bars_svg(
        "cost-by-project",
        "Cost by project",
        &top_by(projects, |r| r.figures.cost, 15),
        " $",
    ));
    html.push_str("<h2>Most expensive sessions</h2><table id=\"top-sessions\"><tr><th>session</th><th>project</th><th>cost</th><th>tokens</th><th>messages</th></tr>");
    for (r, title, cwd) in top {
        let f = &r.figures;
        let _ = write!(
            html,
            "<tr><td title=\"{}\">{}</td><td>{}</td><td class=\"n\">${:.2}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.key_order[0]),
            esc(&truncate(title, 80)),
            esc(cwd),
            f.cost,
            f.total_tokens,
            f.user_messages + f.assistant_messages + f.tool_results
        );
    }
    html.push_str("</table></body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>alert(1)</script> & \"x\" 'y'"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot; &#39;y&#39;"
        );
    }
}
