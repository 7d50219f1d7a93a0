//! The page: one self-contained HTML file (inline CSS and SVG, no script, no network) rendered
//! from a `Report`. Every string that came from a transcript or a file name goes through `esc`
//! (HTML-escaped; control characters and bidirectional overrides dropped). Money is always
//! `$1,234.56` and counts always have thousands separators (`numbers`).

use std::fmt::Write as _;

use chrono::NaiveDate;

use super::data::{Named, Report};
pub use super::escape::esc;
use super::svg::{self, Axis, Bar, Layer, Scale};
use crate::present::numbers::{count, money, percent, thousands};
use crate::present::output::{one_line, truncate};
use crate::query::stats::{Dim, Figures};

/// On one line, cut at the end.
fn cut_end(s: &str, n: usize) -> String {
    truncate(&one_line(s), n)
}

/// On one line, cut at the start (paths: the end is the informative part).
fn cut_left(s: &str, n: usize) -> String {
    let s = one_line(s);
    let len = s.chars().count();
    if len <= n {
        return s;
    }
    "…".to_string() + &s.chars().skip(len + 1 - n).collect::<String>()
}

/// Models stacked by name in the cost chart; the rest are one "other models" layer.
const STACKED_MODELS: usize = 7;
const LISTED: usize = 15;

const CSS: &str = r#"*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:24px 16px 48px}
h1{font-size:1.5em;margin:0 0 .2em}h2{font-size:1.15em;margin:2em 0 .4em;padding-bottom:.25em;border-bottom:1px solid #e5e7eb}
p{margin:.4em 0}.muted,.range{color:#57606a}.note{background:#fff8c5;border:1px solid #eed888;border-radius:6px;padding:.5em .8em}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin:1em 0}
.card{border:1px solid #e5e7eb;border-radius:8px;padding:10px 12px}.card b{display:block;font-size:1.3em;font-variant-numeric:tabular-nums}.card span{color:#57606a;font-size:.85em}
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.2em}
svg.chart{display:block;width:100%;height:auto}
.grid{stroke:#eaeef2}.base,.tick{stroke:#8c959f}
.axis,.value{font-size:13px;fill:#57606a}.label{font-size:13px;fill:#1f2328}
.bar{fill:#4e79a7}.bar.part{fill:#e15759}.hover{fill:transparent}
.line{fill:none;stroke:#4e79a7;stroke-width:2.5}.area{fill:#4e79a7;fill-opacity:.12}
.m0{fill:#4e79a7;background:#4e79a7}.m1{fill:#f28e2b;background:#f28e2b}.m2{fill:#59a14f;background:#59a14f}
.m3{fill:#b07aa1;background:#b07aa1}.m4{fill:#edc948;background:#edc948}.m5{fill:#76b7b2;background:#76b7b2}
.m6{fill:#ff9da7;background:#ff9da7}.mo{fill:#bab0ac;background:#bab0ac}
.tin{fill:#4e79a7;background:#4e79a7}.tout{fill:#f28e2b;background:#f28e2b}.tcr{fill:#76b7b2;background:#76b7b2}.tcw{fill:#b07aa1;background:#b07aa1}
.legend{list-style:none;padding:0;margin:.2em 0;display:flex;flex-wrap:wrap;gap:2px 16px;font-size:.9em}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.35em;vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{padding:.3em .5em;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}
th{font-weight:600;color:#57606a}.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.t{overflow-wrap:anywhere}code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace}"#;

/// The whole page.
pub fn page(r: &Report) -> String {
    let mut html = format!(
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>pidx report</title><style>{CSS}</style></head><body><main><h1>pi sessions: cost, tokens and tools</h1>"#
    );
    html.push_str(&summary(r));
    if r.periods.is_empty() {
        html.push_str(r#"<p class="muted">No dated activity in this range.</p>"#);
    } else {
        let unit = Dim::parse(r.unit).unwrap_or(Dim::Day);
        let starts: Vec<NaiveDate> = r
            .periods
            .iter()
            .filter_map(|p| NaiveDate::parse_from_str(&p.start, "%Y-%m-%d").ok())
            .collect();
        let labels: Vec<String> = r.periods.iter().map(|p| p.period.clone()).collect();
        let axis = Axis {
            unit,
            starts: &starts,
            labels: &labels,
        };
        html.push_str(&cost_section(r, &axis));
        html.push_str(&tokens_section(r, &axis));
    }
    html.push_str(&named_section(r));
    html.push_str(&tools_section(r));
    html.push_str(&sessions_table(r));
    html.push_str("</main></body></html>\n");
    html
}

fn card(value: &str, what: &str) -> String {
    format!(
        r#"<div class="card"><b>{}</b><span>{}</span></div>"#,
        esc(value),
        esc(what)
    )
}

/// The range, the headline figures, and undated activity said apart.
fn summary(r: &Report) -> String {
    let t = &r.totals;
    let mut html = String::new();
    if let (Some(first), Some(last)) = (r.periods.first(), r.periods.last()) {
        let active = r
            .periods
            .iter()
            .filter(|p| p.figures != Figures::default())
            .count();
        let _ = write!(
            html,
            r#"<p class="range" id="range">{} to {}: one bar per {unit}, {}, {} with activity.</p>"#,
            esc(&first.period),
            esc(&last.period),
            count(r.periods.len() as i64, r.unit),
            thousands(active as i64),
            unit = r.unit
        );
    }
    let errors: i64 = r.tools.iter().map(|x| x.errors).sum();
    let results: i64 = r.tools.iter().map(|x| x.results).sum();
    html.push_str(r#"<div class="cards" id="summary">"#);
    for (value, what) in [
        (money(t.cost), "cost"),
        (thousands(t.sessions), "sessions"),
        (thousands(t.active_days), "active days"),
        (thousands(t.assistant_messages), "assistant messages"),
        (thousands(t.total_tokens), "tokens"),
        (ratio(r.cache_hit_ratio), "cache hit ratio"),
        (thousands(t.tool_calls), "tool calls"),
        (
            percent(errors as f64, results as f64),
            "tool results failed",
        ),
    ] {
        html.push_str(&card(&value, what));
    }
    html.push_str("</div>");
    if let Some(u) = &r.undated {
        let _ = write!(
            html,
            r#"<p class="note" id="undated">Undated activity, kept apart: {}, {} and {} are in entries without a valid timestamp. They count in the totals above and in no {}.</p>"#,
            count(
                u.user_messages + u.assistant_messages + u.tool_results,
                "message"
            ),
            count(u.total_tokens, "token"),
            money(u.cost),
            r.unit
        );
    }
    html
}

fn ratio(r: Option<f64>) -> String {
    r.map_or("–".into(), |r| percent(r, 1.0))
}

fn legend(layers: &[Layer]) -> String {
    let mut html = String::from(r#"<ul class="legend">"#);
    for l in layers {
        let _ = write!(
            html,
            r#"<li><span class="sw {}"></span>{}</li>"#,
            l.class,
            esc(&cut_end(&l.name, 60))
        );
    }
    html.push_str("</ul>");
    html
}

fn figure(caption: &str, body: &str) -> String {
    format!(
        "<figure><figcaption>{}</figcaption>{body}</figure>",
        esc(caption)
    )
}

/// Cost per period stacked by model (the costliest few by name), then the running total.
fn cost_section(r: &Report, axis: &Axis) -> String {
    let names: Vec<&str> = r
        .models
        .iter()
        .filter(|m| m.figures.cost > 0.0)
        .take(STACKED_MODELS)
        .map(|m| m.name.as_str())
        .collect();
    let mut layers: Vec<Layer> = names
        .iter()
        .enumerate()
        .map(|(i, n)| Layer {
            name: n.to_string(),
            class: format!("m{i}"),
        })
        .collect();
    let values: Vec<Vec<f64>> = r
        .periods
        .iter()
        .map(|p| {
            let mut v: Vec<f64> = names
                .iter()
                .map(|n| p.cost_by_model.get(*n).copied().unwrap_or(0.0))
                .collect();
            let named: f64 = v.iter().sum();
            v.push((p.figures.cost - named).max(0.0));
            v
        })
        .collect();
    if values.iter().any(|v| v.last().is_some_and(|&o| o > 0.0)) {
        layers.push(Layer {
            name: "other models".into(),
            class: "mo".into(),
        });
    }
    let fmt = |v: f64| money(v);
    let scale = Scale {
        fmt: &fmt,
        min_step: 0.01,
    };
    let cumulative: Vec<f64> = r.periods.iter().map(|p| p.cumulative_cost).collect();
    format!(
        "<h2>Cost</h2>{}{}",
        figure(
            &format!("Cost per {}, by model", r.unit),
            &(legend(&layers) + &svg::columns("cost-by-period", axis, &layers, &values, &scale))
        ),
        figure(
            "Cumulative cost",
            &svg::cumulative("cumulative-cost", axis, &cumulative, &scale)
        )
    )
}

/// Tokens per period by kind, and the totals with the cache hit ratio.
fn tokens_section(r: &Report, axis: &Axis) -> String {
    let kinds = [
        ("input", "tin"),
        ("output", "tout"),
        ("cache read", "tcr"),
        ("cache write", "tcw"),
    ];
    let layers: Vec<Layer> = kinds
        .iter()
        .map(|(n, c)| Layer {
            name: n.to_string(),
            class: c.to_string(),
        })
        .collect();
    let values: Vec<Vec<f64>> = r
        .periods
        .iter()
        .map(|p| {
            let f = &p.figures;
            [f.input, f.output, f.cache_read, f.cache_write]
                .map(|v| v as f64)
                .to_vec()
        })
        .collect();
    let fmt = |v: f64| thousands(v.round() as i64);
    let scale = Scale {
        fmt: &fmt,
        min_step: 1.0,
    };
    let t = &r.totals;
    let mut table = String::from(
        r#"<table id="token-totals"><tr><th class="n">input</th><th class="n">output</th><th class="n">cache read</th><th class="n">cache write</th><th class="n">total</th><th class="n">cache hit ratio</th></tr><tr>"#,
    );
    for v in [
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        t.total_tokens,
    ] {
        let _ = write!(table, r#"<td class="n">{}</td>"#, thousands(v));
    }
    let _ = write!(
        table,
        r#"<td class="n">{}</td></tr></table><p class="muted">Cache hit ratio: cache read / (input + cache read + cache write).</p>"#,
        ratio(r.cache_hit_ratio)
    );
    format!(
        "<h2>Tokens</h2>{}{table}",
        figure(
            &format!("Tokens per {}, by kind", r.unit),
            &(legend(&layers) + &svg::columns("tokens-by-period", axis, &layers, &values, &scale))
        )
    )
}

/// Cost by model and by project, the costliest first.
fn named_section(r: &Report) -> String {
    let bars = |rows: &[Named]| -> Vec<Bar> {
        rows.iter()
            .filter(|n| n.figures.cost > 0.0)
            .take(LISTED)
            .map(|n| Bar {
                label: n.name.clone(),
                value: n.figures.cost,
                part: 0.0,
                text: format!(
                    "{} · {} tokens",
                    money(n.figures.cost),
                    thousands(n.figures.total_tokens)
                ),
            })
            .collect()
    };
    let more = |rows: &[Named]| {
        let rest: Vec<&Named> = rows
            .iter()
            .filter(|n| n.figures.cost > 0.0)
            .skip(LISTED)
            .collect();
        if rest.is_empty() {
            String::new()
        } else {
            let cost: f64 = rest.iter().map(|n| n.figures.cost).sum();
            format!(
                r#"<p class="muted">and {} more: {}</p>"#,
                thousands(rest.len() as i64),
                money(cost)
            )
        }
    };
    format!(
        "<h2>Models and projects</h2>{}{}{}{}",
        figure(
            "Cost by model",
            &svg::bars("cost-by-model", &bars(&r.models), cut_end)
        ),
        more(&r.models),
        figure(
            "Cost by project",
            &svg::bars("cost-by-project", &bars(&r.projects), cut_left)
        ),
        more(&r.projects)
    )
}

/// Tool calls, with the failed share of each tool's results drawn in red.
fn tools_section(r: &Report) -> String {
    let items: Vec<Bar> = r
        .tools
        .iter()
        .take(LISTED + 5)
        .map(|t| Bar {
            label: t.tool.clone(),
            value: t.calls.max(t.results) as f64,
            part: t.errors as f64,
            text: format!(
                "{} calls · {} errors ({})",
                thousands(t.calls),
                thousands(t.errors),
                percent(t.errors as f64, t.results as f64)
            ),
        })
        .collect();
    if items.is_empty() {
        return "<h2>Tools</h2><p class=\"muted\">No tool calls in this range.</p>".into();
    }
    format!(
        "<h2>Tools</h2>{}<p class=\"muted\">Error rate: failed results / results of that tool.</p>",
        figure(
            "Tool calls and errors by tool",
            &svg::bars("tools", &items, cut_end)
        )
    )
}

/// The most expensive sessions, each with what `pidx show` takes.
fn sessions_table(r: &Report) -> String {
    let mut html = String::from(
        r#"<h2>Most expensive sessions</h2><table id="top-sessions"><tr><th class="n">#</th><th>date</th><th>id</th><th>session</th><th>project</th><th class="n">cost</th><th class="n">tokens</th><th class="n">messages</th></tr>"#,
    );
    for (i, s) in r.top_sessions.iter().enumerate() {
        let f = &s.figures;
        let _ = write!(
            html,
            r#"<tr><td class="n">{}</td><td class="n">{}</td><td><code>{}</code></td><td class="t" title="{}">{}</td><td class="t" title="{}">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td></tr>"#,
            i + 1,
            esc(s.created.as_deref().unwrap_or("–")),
            esc(&s.id),
            esc(&s.path),
            esc(&cut_end(&s.title, 80)),
            esc(&s.cwd),
            esc(&cut_left(&s.cwd, 40)),
            money(f.cost),
            thousands(f.total_tokens),
            thousands(f.user_messages + f.assistant_messages + f.tool_results)
        );
    }
    html.push_str(r#"</table><p class="muted">The id is what <code>pidx show</code> takes.</p>"#);
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_inert() {
        assert_eq!(
            esc("<script>alert(1)</script> & \"x\" 'y'"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot; &#39;y&#39;"
        );
        assert_eq!(
            esc("a\x1b[2Jb\x1b]0;T\x07c\u{9b}d\u{202e}e\nf"),
            "a[2Jb]0;Tcde f"
        );
    }

    #[test]
    fn paths_are_cut_from_the_left() {
        assert_eq!(cut_left("/home/me/src/app", 8), "…src/app");
        assert_eq!(cut_left("/a", 8), "/a");
        assert_eq!(cut_end("a\nb  c", 4), "a b…");
    }
}
