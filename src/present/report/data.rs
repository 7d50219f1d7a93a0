//! What the report shows, gathered from `stats` queries into one serialisable value: the
//! periods of the range (every calendar period, quiet ones included, undated activity apart),
//! cost by model per period, models, projects, tools and the most expensive sessions. The page
//! (`html`) and `report --json` both render this value; neither runs a query of its own.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Connection;
use serde::Serialize;

use crate::present::chart::{self, Bounds, Timeline};
use crate::query::handle;
use crate::query::stats::{self, Dim, Figures, Row, StatsOptions, Zone};
use crate::store::Scope;

/// What to report on.
pub struct ReportOptions {
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub cwd: Option<String>,
    pub zone: Zone,
    pub now_ms: i64,
}

/// Everything on the page.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `day`, `week` or `month`: days up to 120 days, weeks up to three years, then months.
    pub unit: &'static str,
    pub totals: Figures,
    /// cache read / (input + cache read + cache write); `None` with no input tokens at all.
    pub cache_hit_ratio: Option<f64>,
    /// Entries without a valid timestamp: in the totals, in no period.
    pub undated: Option<Figures>,
    pub periods: Vec<Period>,
    pub models: Vec<Named>,
    pub projects: Vec<Named>,
    pub tools: Vec<Tool>,
    pub top_sessions: Vec<TopSession>,
}

/// One calendar period of the range.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Period {
    pub period: String,
    /// Its first day, `YYYY-MM-DD`.
    pub start: String,
    #[serde(flatten)]
    pub figures: Figures,
    /// Cost from the start of the range to the end of this period.
    pub cumulative_cost: f64,
    /// Cost of each model that cost anything in this period.
    pub cost_by_model: BTreeMap<String, f64>,
}

/// A model's or a project's figures.
#[derive(Debug, Serialize)]
pub struct Named {
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A tool's calls, results and failed results.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub tool: String,
    pub calls: i64,
    pub results: i64,
    pub errors: i64,
    /// errors / results; `None` when no result was recorded.
    pub error_rate: Option<f64>,
}

/// One of the most expensive sessions.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopSession {
    /// What `pidx list` shows and `pidx show` takes.
    pub id: String,
    pub session_id: Option<String>,
    pub path: String,
    pub title: String,
    pub cwd: String,
    /// The session's creation day in the report's zone.
    pub created: Option<String>,
    #[serde(flatten)]
    pub figures: Figures,
}

impl Report {
    /// Every text taken from transcripts with its secrets redacted: session titles, and the
    /// names of projects, models and tools (paths and ids are left as they are).
    pub fn redact(&mut self) {
        let clean = |s: &mut String| *s = crate::redact::redact(s).into_owned();
        self.top_sessions
            .iter_mut()
            .for_each(|t| clean(&mut t.title));
        self.models
            .iter_mut()
            .chain(&mut self.projects)
            .for_each(|n| clean(&mut n.name));
        self.tools.iter_mut().for_each(|t| clean(&mut t.tool));
    }
}

/// How many sessions the table lists.
const TOP_SESSIONS: usize = 20;

/// Runs the queries and assembles the report.
///
/// # Errors
/// Index errors.
pub fn gather(
    conn: &Connection,
    scope: &Scope,
    opts: &ReportOptions,
) -> crate::error::Result<Report> {
    let q = |dims: Vec<Dim>| {
        stats::stats(
            conn,
            scope,
            &StatsOptions {
                dims,
                since_ms: opts.since_ms,
                until_ms: opts.until_ms,
                cwd: opts.cwd.clone(),
                zone: opts.zone.clone(),
            },
        )
    };
    let bounds = Bounds::of(&opts.zone, opts.since_ms, opts.until_ms, opts.now_ms);
    let days = q(vec![Dim::Day])?;
    let unit = unit_for(chart::timeline(Dim::Day, &days, bounds).slots.len());
    let period_rows = if unit == Dim::Day {
        days
    } else {
        q(vec![unit])?
    };
    let timeline = chart::timeline(unit, &period_rows, bounds);
    let by_model = q(vec![unit, Dim::Model])?;
    let totals = q(Vec::new())?.pop().map(|r| r.figures).unwrap_or_default();
    let prompt = totals.input + totals.cache_read + totals.cache_write;
    Ok(Report {
        unit: unit.name(),
        cache_hit_ratio: (prompt > 0).then(|| totals.cache_read as f64 / prompt as f64),
        totals,
        undated: timeline.undated.map(|r| r.figures.clone()),
        periods: periods(&timeline, &by_model),
        models: named(q(vec![Dim::Model])?),
        projects: named(q(vec![Dim::Project])?),
        tools: tools(q(vec![Dim::Tool])?),
        top_sessions: top_sessions(conn, &opts.zone, q(vec![Dim::Session])?)?,
    })
}

/// Bars stay a few pixels wide: a day each up to 120 days, a week up to three years.
fn unit_for(days: usize) -> Dim {
    match days {
        0..=120 => Dim::Day,
        121..=1100 => Dim::Week,
        _ => Dim::Month,
    }
}

fn periods(t: &Timeline, by_model: &[Row]) -> Vec<Period> {
    let mut models: BTreeMap<&str, BTreeMap<String, f64>> = BTreeMap::new();
    for r in by_model.iter().filter(|r| r.figures.cost != 0.0) {
        if let [period, model] = r.key_order.as_slice() {
            models
                .entry(period)
                .or_default()
                .insert(model.clone(), r.figures.cost);
        }
    }
    let mut cumulative = 0.0;
    t.slots
        .iter()
        .map(|s| {
            let figures = s.row.map(|r| r.figures.clone()).unwrap_or_default();
            cumulative += figures.cost;
            Period {
                period: s.label.clone(),
                start: s.start.format("%Y-%m-%d").to_string(),
                figures,
                cumulative_cost: cumulative,
                cost_by_model: models.remove(s.label.as_str()).unwrap_or_default(),
            }
        })
        .collect()
}

/// Rows of one dimension, most expensive first (then most tokens, then by name).
fn named(rows: Vec<Row>) -> Vec<Named> {
    let mut out: Vec<Named> = rows
        .into_iter()
        .map(|r| Named {
            name: r.key_order.into_iter().next().unwrap_or_default(),
            figures: r.figures,
        })
        .collect();
    out.sort_by(|a, b| {
        b.figures
            .cost
            .total_cmp(&a.figures.cost)
            .then(b.figures.total_tokens.cmp(&a.figures.total_tokens))
    });
    out
}

/// Tools, most called first.
fn tools(rows: Vec<Row>) -> Vec<Tool> {
    let mut out: Vec<Tool> = rows
        .into_iter()
        .map(|r| {
            let f = r.figures;
            Tool {
                tool: r.key_order.into_iter().next().unwrap_or_default(),
                calls: f.tool_calls,
                results: f.tool_results,
                errors: f.tool_errors,
                error_rate: (f.tool_results > 0)
                    .then(|| f.tool_errors as f64 / f.tool_results as f64),
            }
        })
        .collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then(b.results.cmp(&a.results)));
    out
}

pub(crate) fn top_sessions(
    conn: &Connection,
    zone: &Zone,
    mut rows: Vec<Row>,
) -> crate::error::Result<Vec<TopSession>> {
    rows.sort_by(|a, b| b.figures.cost.total_cmp(&a.figures.cost));
    rows.truncate(TOP_SESSIONS);
    let paths: Vec<String> = rows
        .iter()
        .map(|r| r.key_order.first().cloned().unwrap_or_default())
        .collect();
    let mut sessions: HashMap<String, handle::SessionAtPath> =
        handle::sessions_at(conn, paths.iter().map(String::as_str))?
            .into_iter()
            .map(|s| (s.path.clone(), s))
            .collect();
    Ok(rows
        .into_iter()
        .zip(paths)
        .filter_map(|(r, path)| {
            let s = sessions.remove(&path)?;
            Some(TopSession {
                id: s.handle,
                created: s
                    .created_ms
                    .and_then(|ms| zone.date(ms))
                    .map(|d| d.format("%Y-%m-%d").to_string()),
                session_id: s.session_id,
                path,
                title: s.title.unwrap_or_default(),
                cwd: s.cwd,
                figures: r.figures,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_ranges_are_drawn_by_week_then_month() {
        assert_eq!(unit_for(1), Dim::Day);
        assert_eq!(unit_for(120), Dim::Day);
        assert_eq!(unit_for(300), Dim::Week);
        assert_eq!(unit_for(2000), Dim::Month);
    }
}
