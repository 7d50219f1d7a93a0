//! What the report shows, gathered from `stats` queries into one serialisable value: the
//! periods of the range (every calendar period, quiet ones included, undated activity apart),
//! cost by model per period, models, projects, tools and the most expensive sessions. The page
//! (`html`) and `report --json` both render this value; neither runs a query of its own.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::cli::chart::{self, Bounds, Timeline};
use crate::query::stats::{self, Dim, Figures, Row, StatsOptions, Zone};
use crate::query::Scope;

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

/// The session of an indexed file: id, title (name, else first message), cwd, creation time.
const SESSION_OF_PATH: &str = "
    SELECT s.session_id, coalesce(s.name, s.first_message, ''), s.cwd, s.created_ms
    FROM sessions s JOIN files f ON f.id = s.file_id WHERE f.path = ?1";

fn top_sessions(
    conn: &Connection,
    zone: &Zone,
    mut rows: Vec<Row>,
) -> crate::error::Result<Vec<TopSession>> {
    rows.sort_by(|a, b| b.figures.cost.total_cmp(&a.figures.cost));
    rows.truncate(TOP_SESSIONS);
    let handles = Handles::load(conn)?;
    let mut stmt = conn.prepare(SESSION_OF_PATH)?;
    let mut out = Vec::new();
    for r in rows {
        let path = r.key_order.into_iter().next().unwrap_or_default();
        let (session_id, title, cwd, created_ms) = stmt.query_row([&path], |x| {
            Ok((
                x.get::<_, Option<String>>(0)?,
                x.get::<_, String>(1)?,
                x.get::<_, String>(2)?,
                x.get::<_, Option<i64>>(3)?,
            ))
        })?;
        out.push(TopSession {
            id: handles.handle(session_id.as_deref(), &path),
            created: created_ms
                .and_then(|ms| zone.date(ms))
                .map(|d| d.format("%Y-%m-%d").to_string()),
            session_id,
            path,
            title,
            cwd,
            figures: r.figures,
        });
    }
    Ok(out)
}

/// Every session id of the index, lowercased and sorted, to find the shortest prefix (8
/// characters at least) that names one session.
///
/// The one place the report turns an id into what `pidx list` shows: swap `handle` for the
/// shared helper when list has one.
struct Handles(Vec<String>);

/// Like git's abbreviated hashes: never shorter than this.
const MIN_HANDLE: usize = 8;

impl Handles {
    fn load(conn: &Connection) -> rusqlite::Result<Handles> {
        let mut stmt =
            conn.prepare("SELECT session_id FROM sessions WHERE session_id IS NOT NULL")?;
        let ids = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut ids: Vec<String> = ids
            .map(|r| r.map(|s| s.to_lowercase()))
            .collect::<rusqlite::Result<_>>()?;
        ids.sort();
        Ok(Handles(ids))
    }

    /// The shortest prefix of `id` no other session id starts with (the resolver matches
    /// prefixes without regard to ASCII case), or the whole id; `path` when the id is missing,
    /// shared by several files, or would be read as a path.
    fn handle(&self, id: Option<&str>, path: &str) -> String {
        let Some(id) =
            id.filter(|i| !i.is_empty() && !i.contains(['/', '\\']) && !i.ends_with(".jsonl"))
        else {
            return path.to_string();
        };
        let lower = id.to_lowercase();
        let at = self.0.partition_point(|x| x.as_str() < lower.as_str());
        if self.0.get(at + 1) == Some(&lower) || self.0.get(at) != Some(&lower) {
            return path.to_string();
        }
        let common = |other: Option<&String>| {
            other.map_or(0, |o| {
                o.chars()
                    .zip(lower.chars())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
        };
        let before = at.checked_sub(1).and_then(|i| self.0.get(i));
        let need = common(before).max(common(self.0.get(at + 1))) + 1;
        id.chars().take(need.max(MIN_HANDLE)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_the_shortest_unique_prefix_of_eight_or_more() {
        let h = Handles(
            [
                "019c0000-aaaa-1111",
                "019c0000-aaab-2222",
                "019d1234-0000",
                "dup",
                "dup",
                "short",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(h.handle(Some("019c0000-aaaa-1111"), "p"), "019c0000-aaaa");
        assert_eq!(h.handle(Some("019C0000-AAAB-2222"), "p"), "019C0000-AAAB");
        assert_eq!(h.handle(Some("019d1234-0000"), "p"), "019d1234");
        assert_eq!(h.handle(Some("short"), "p"), "short");
        assert_eq!(h.handle(Some("dup"), "/x/dup.jsonl"), "/x/dup.jsonl");
        assert_eq!(h.handle(None, "/x/y.jsonl"), "/x/y.jsonl");
        assert_eq!(h.handle(Some("missing"), "/x/m.jsonl"), "/x/m.jsonl");
    }

    #[test]
    fn long_ranges_are_drawn_by_week_then_month() {
        assert_eq!(unit_for(1), Dim::Day);
        assert_eq!(unit_for(120), Dim::Day);
        assert_eq!(unit_for(300), Dim::Week);
        assert_eq!(unit_for(2000), Dim::Month);
    }
}
