//! `stats`: sessions, messages, tokens, cost, tool calls and errors, compactions and active days,
//! grouped by any nesting of day / week / month / project / model / provider / session / tool.
//! Everything comes from columns filled at ingest. When the rollups answer exactly (almost
//! always: see [`rollups_answer`]) they are summed in Rust (`rolled`); otherwise the entries
//! are, with time buckets computed by a registered SQL function in the requested time zone.
//!
//! Copies that forks make of another session's entries count once (the canonical copy, see
//! `store::copies`), except when grouping by session: each session's figures are then pi's own
//! `/session` numbers, which count every entry in the file.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, TimeZone};
use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::query::Reader;
use crate::store::filter::{int, Where};
use crate::store::schema::USAGE_SUMS;
use crate::store::Scope;

mod rolled;

/// What rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Day,
    Week,
    Month,
    Project,
    Model,
    Provider,
    Session,
    Tool,
    /// Gateway agent (`-` for pi sessions).
    Agent,
    /// Gateway channel from the session key (`-` when none).
    Channel,
    /// The machine a session came from: the team server only (`parse_server`).
    Source,
}

impl Dim {
    pub const NAMES: &'static str =
        "day, week, month, project, model, provider, session, tool, agent, channel";

    pub fn parse(s: &str) -> Option<Dim> {
        Some(match s {
            "day" => Dim::Day,
            "week" => Dim::Week,
            "month" => Dim::Month,
            "project" => Dim::Project,
            "model" => Dim::Model,
            "provider" => Dim::Provider,
            "session" => Dim::Session,
            "tool" => Dim::Tool,
            "agent" => Dim::Agent,
            "channel" => Dim::Channel,
            _ => return None,
        })
    }

    /// A dimension the team server groups by: every local one, and `source`.
    pub fn parse_server(s: &str) -> Option<Dim> {
        match s {
            "source" => Some(Dim::Source),
            _ => Dim::parse(s),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dim::Day => "day",
            Dim::Week => "week",
            Dim::Month => "month",
            Dim::Project => "project",
            Dim::Model => "model",
            Dim::Provider => "provider",
            Dim::Session => "session",
            Dim::Tool => "tool",
            Dim::Agent => "agent",
            Dim::Channel => "channel",
            Dim::Source => "source",
        }
    }

    pub fn is_time(self) -> bool {
        matches!(self, Dim::Day | Dim::Week | Dim::Month)
    }

    /// The SQL expression of this key over `entries e`, `sessions s`, `files f` (and `tool`,
    /// the tool's name, in tool queries).
    fn sql(self) -> &'static str {
        match self {
            Dim::Day => "pidx_bucket(e.ts_ms, 'day')",
            Dim::Week => "pidx_bucket(e.ts_ms, 'week')",
            Dim::Month => "pidx_bucket(e.ts_ms, 'month')",
            Dim::Project => "s.cwd",
            Dim::Model => {
                // NO_MODEL, spelled out: SQL constants cannot be formatted in.
                "CASE WHEN e.type = 'message' AND e.role = 'assistant'
                               THEN coalesce(e.response_model, e.model, '?')
                             WHEN e.type = 'usage' AND e.input IS NOT NULL
                               THEN coalesce(e.model, '?')
                             ELSE '(no model: user messages / tool results / compactions)' END"
            }
            Dim::Provider => "CASE WHEN e.provider IS NULL THEN '-' ELSE e.provider END",
            Dim::Session => "f.path",
            Dim::Tool => "tool",
            Dim::Agent => {
                "coalesce((SELECT g.agent_id FROM gw_files g WHERE g.file_id = f.id), '-')"
            }
            Dim::Channel => {
                "coalesce((SELECT g.channel FROM gw_files g WHERE g.file_id = f.id), '-')"
            }
            // Not parsed for the local index (`Dim::parse`): it is one machine.
            Dim::Source => "'-'",
        }
    }
}

/// The `--by model` key of everything no model is named for: user messages, tool results
/// (and the usage some record), compactions and branch summaries (and the usage of the model
/// that wrote them, which pi does not name), and entries that count toward sessions and active
/// days only. One row: pi's `/session` splits summary usage into "Tools/summaries", but two
/// rows of no model read as two somethings and each counted some of the compactions. It was
/// `-`, which read as a model. No comma, so a naive CSV split still works.
pub const NO_MODEL: &str = "(no model: user messages / tool results / compactions)";

/// The `--by model` key of a rollup row: the rollups (migration 0009) store usage on tool
/// results and summaries under `tools/summaries`, which is [`NO_MODEL`]'s row now.
pub fn model_key(stored: &str) -> &str {
    if stored == TOOLS_SUMMARIES {
        NO_MODEL
    } else {
        stored
    }
}

/// The key migration 0009 (and the team server's 0003) give usage no model is named for.
pub const TOOLS_SUMMARIES: &str = "tools/summaries";

/// A time zone for day, week and month boundaries.
#[derive(Debug, Clone)]
pub enum Zone {
    Local,
    Named(chrono_tz::Tz),
    Fixed(chrono::FixedOffset),
}

impl Zone {
    /// `local`, `UTC`, an IANA name (`Europe/Paris`) or an offset (`+02:00`).
    pub fn parse(s: &str) -> Option<Zone> {
        if s.eq_ignore_ascii_case("local") {
            return Some(Zone::Local);
        }
        if let Ok(tz) = s.parse::<chrono_tz::Tz>() {
            return Some(Zone::Named(tz));
        }
        let sign = match s.as_bytes().first()? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let (h, m) = s[1..].split_once(':').unwrap_or((&s[1..], "0"));
        let secs = sign * (h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60);
        chrono::FixedOffset::east_opt(secs).map(Zone::Fixed)
    }

    /// The wall-clock time of an instant in this zone.
    pub fn local(&self, ms: i64) -> Option<chrono::NaiveDateTime> {
        let utc = chrono::Utc.timestamp_millis_opt(ms).single()?;
        Some(match self {
            Zone::Local => utc.with_timezone(&chrono::Local).naive_local(),
            Zone::Named(tz) => utc.with_timezone(tz).naive_local(),
            Zone::Fixed(off) => utc.with_timezone(off).naive_local(),
        })
    }

    /// The calendar date of an instant in this zone.
    pub fn date(&self, ms: i64) -> Option<chrono::NaiveDate> {
        let utc = chrono::Utc.timestamp_millis_opt(ms).single()?;
        Some(match self {
            Zone::Local => utc.with_timezone(&chrono::Local).date_naive(),
            Zone::Named(tz) => utc.with_timezone(tz).date_naive(),
            Zone::Fixed(off) => utc.with_timezone(off).date_naive(),
        })
    }
}

/// What to count.
#[derive(Debug, Clone)]
pub struct StatsOptions {
    pub dims: Vec<Dim>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// Only this project (`list(cwd)`'s rule); `None` is every project.
    pub cwd: Option<String>,
    pub zone: Zone,
}

/// One group's figures.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub sessions: i64,
    pub user_messages: i64,
    pub assistant_messages: i64,
    pub tool_results: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub total_tokens: i64,
    #[serde(serialize_with = "to_the_nano_dollar")]
    pub cost: f64,
    pub compactions: i64,
    pub active_days: i64,
}

/// A sum of costs to the billionth of a dollar (far below any price per token). A float sum's
/// last digits depend on the order it added in: the local index's `24.239587999999998` was
/// the team server's `24.239588` for the same entries.
fn to_the_nano_dollar<S: serde::Serializer>(cost: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((cost * 1e9).round() / 1e9)
}

/// A group key (one value per dimension, in order) and its figures.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: BTreeMap<&'static str, String>,
    #[serde(skip)]
    pub key_order: Vec<String>,
    #[serde(flatten)]
    pub figures: Figures,
}

/// The period codes of an instant (`pidx_bucket`'s values): days since 1970-01-01,
/// `year * 100 + ISO week` and `year * 100 + month`, in the zone.
fn period_codes(zone: &Zone, ms: i64) -> Option<(i64, i64, i64)> {
    let d = zone.date(ms)?;
    let w = d.iso_week();
    Some((
        i64::from(d.num_days_from_ce()) - EPOCH_CE_DAYS,
        i64::from(w.year()) * 100 + i64::from(w.week()),
        i64::from(d.year()) * 100 + i64::from(d.month()),
    ))
}

/// `pidx_bucket(ts_ms, unit)`: the period of an instant as an integer (cheap to group by;
/// `bucket_label` turns it into text), see [`period_codes`]. Zone offsets are looked up once
/// per quarter hour of time seen (zones' days begin on whole quarter hours, see
/// [`rollups_answer`]; a whole hour was wrong in +05:45 and +05:30).
fn register(conn: &Connection, zone: &Zone) -> rusqlite::Result<()> {
    let zone = zone.clone();
    let by_quarter: std::sync::Mutex<std::collections::HashMap<i64, (i64, i64, i64)>> =
        Default::default();
    conn.create_scalar_function(
        "pidx_bucket",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let Some(ms) = ctx.get::<Option<i64>>(0)? else {
                // No time: NULL, so it is not an active day; rows show it as "-".
                return Ok(None);
            };
            let unit = ctx.get_raw(1).as_str().unwrap_or("day");
            let quarter = ms.div_euclid(GRAIN_MS);
            let mut by_quarter = by_quarter
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let codes = match by_quarter.get(&quarter) {
                Some(c) => *c,
                None => {
                    let Some(c) = period_codes(&zone, ms) else {
                        return Ok(None);
                    };
                    by_quarter.insert(quarter, c);
                    c
                }
            };
            Ok(Some(match unit {
                "week" => codes.1,
                "month" => codes.2,
                _ => codes.0,
            }))
        },
    )
}

/// `NaiveDate::num_days_from_ce` of 1970-01-01.
const EPOCH_CE_DAYS: i64 = 719_163;

/// The text of a `pidx_bucket` value: `2026-01-31`, `2026-W05`, `2026-01`.
fn bucket_label(dim: Dim, code: i64) -> String {
    match dim {
        Dim::Week => format!("{}-W{:02}", code / 100, code % 100),
        Dim::Month => format!("{}-{:02}", code / 100, code % 100),
        _ => chrono::NaiveDate::from_num_days_from_ce_opt((code + EPOCH_CE_DAYS) as i32)
            .map_or("-".into(), |d| d.format("%Y-%m-%d").to_string()),
    }
}

/// Computes the figures, one row per group (ordered by key), plus the total as the last row
/// when there are dimensions.
///
/// # Errors
/// Index errors.
pub fn stats(conn: &Connection, scope: &Scope, opts: &StatsOptions) -> Result<Vec<Row>> {
    if !rollups_answer(opts) {
        return stats_from_entries(conn, scope, opts);
    }
    Ok(finish(rolled::stats(conn, scope, opts)?, opts))
}

/// [`stats`] of `opts` grouped by each of `groupings` (its own `dims` are not used), as many
/// calls of it would answer, reading the rollup rows once when the groupings read the same
/// rows (the usage page: a grouping and the total).
///
/// # Errors
/// Index errors.
pub fn stats_each(
    conn: &Connection,
    scope: &Scope,
    opts: &StatsOptions,
    groupings: &[Vec<Dim>],
) -> Result<Vec<Vec<Row>>> {
    let with = |g: &Vec<Dim>| StatsOptions {
        dims: g.clone(),
        ..opts.clone()
    };
    // The rollup a grouping reads (tool or usage) and the copies it counts (per session, all).
    let rows_of = |g: &Vec<Dim>| (g.contains(&Dim::Tool), g.contains(&Dim::Session));
    let one_read = rollups_answer(opts)
        && groupings
            .iter()
            .all(|g| rows_of(g) == groupings.first().map(rows_of).unwrap_or_default());
    if !one_read {
        return groupings
            .iter()
            .map(|g| stats(conn, scope, &with(g)))
            .collect();
    }
    let dims: Vec<&[Dim]> = groupings.iter().map(Vec::as_slice).collect();
    Ok(rolled::stats_each(conn, scope, opts, &dims)?
        .into_iter()
        .zip(groupings)
        .map(|(rows, g)| finish(rows, &with(g)))
        .collect())
}

/// [`stats`] summed from the entries themselves, never the rollups: what `stats` does when the
/// rollups cannot answer exactly, and the reference the tests hold the rollups to.
///
/// # Errors
/// Index errors.
#[doc(hidden)]
pub fn stats_from_entries(
    conn: &Connection,
    scope: &Scope,
    opts: &StatsOptions,
) -> Result<Vec<Row>> {
    register(conn, &opts.zone)?;
    let mut w = file_filter(scope, opts);
    row_conditions(&mut w, &opts.dims, (opts.since_ms, opts.until_ms));
    let where_ = w.sql();
    let sql = if opts.dims.contains(&Dim::Tool) {
        // The tool query writes the conditions twice, once per side of its UNION.
        w = w.repeated(2);
        tool_sql(&opts.dims, &where_)
    } else {
        figures_sql(&opts.dims, &where_)
    };
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| read_row(r, &opts.dims))?;
    let out: Vec<Row> = rows.collect::<rusqlite::Result<_>>()?;
    Ok(finish(out, opts))
}

/// Drops empty groups (the total of nothing stays) and orders the rows ([`order`]).
fn finish(mut out: Vec<Row>, opts: &StatsOptions) -> Vec<Row> {
    if opts.dims.is_empty() && out.len() == 1 && out[0].figures == Figures::default() {
        return out;
    }
    out.retain(|r| r.figures != Figures::default());
    let by_figure: Vec<bool> = opts.dims.iter().map(|d| !d.is_time()).collect();
    order(&mut out, &by_figure);
    out
}

/// Orders rows level by level: periods in time order, every other key (projects, models,
/// sessions, tools ...) by its figure, highest first — what a person reading "where did it go"
/// looks for at the top. A key's figure at a level is its whole group's (every row under the
/// same keys so far): cost, then tokens, then tool calls, then sessions; ties by key.
/// `by_figure[i]` says how level `i` is ordered. The team server orders its rows the same way.
pub fn order(rows: &mut Vec<Row>, by_figure: &[bool]) {
    let weights = level_weights(rows, by_figure);
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&rows[a].key_order, &rows[b].key_order);
        (0..ka.len().max(kb.len()))
            .map(|i| {
                let by_weight = match (weights[a].get(i), weights[b].get(i)) {
                    // Highest first.
                    (Some(Some(x)), Some(Some(y))) => y.partial_cmp(x).unwrap_or(Ordering::Equal),
                    _ => Ordering::Equal,
                };
                by_weight.then_with(|| ka.get(i).cmp(&kb.get(i)))
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    let mut slots: Vec<Option<Row>> = std::mem::take(rows).into_iter().map(Some).collect();
    *rows = order.into_iter().filter_map(|i| slots[i].take()).collect();
}

/// What orders a key at a level: its group's cost, tokens, tool calls and sessions.
type Weight = (f64, i64, i64, i64);

/// Each row's weight at each level ordered by figure (`None` at levels ordered by key).
fn level_weights(rows: &[Row], by_figure: &[bool]) -> Vec<Vec<Option<Weight>>> {
    let mut sums: HashMap<&[String], Weight> = HashMap::new();
    for r in rows {
        for i in (0..r.key_order.len()).filter(|&i| by_figure.get(i) == Some(&true)) {
            let s = sums.entry(&r.key_order[..=i]).or_default();
            s.0 += r.figures.cost;
            s.1 += r.figures.total_tokens;
            s.2 += r.figures.tool_calls;
            s.3 += r.figures.sessions;
        }
    }
    rows.iter()
        .map(|r| {
            (0..r.key_order.len())
                .map(|i| sums.get(&r.key_order[..=i]).copied())
                .collect()
        })
        .collect()
}

/// The files counted: in scope and (with `--cwd`) in the project.
fn file_filter(scope: &Scope, opts: &StatsOptions) -> Where {
    crate::query::list::project_files(scope, opts.cwd.as_deref())
}

/// The entries (or rollup rows, alias `e` either way) counted: in `[since, until)` and
/// (except per session) not fork copies.
fn row_conditions(w: &mut Where, dims: &[Dim], (since, until): (Option<i64>, Option<i64>)) {
    if !dims.contains(&Dim::Session) {
        w.and("e.dup = 0", []);
    }
    if let Some(t) = since {
        w.and("e.ts_ms >= ?", [int(t)]);
    }
    if let Some(t) = until {
        w.and("e.ts_ms < ?", [int(t)]);
    }
}

/// [`row_conditions`] alone.
fn row_filter(dims: &[Dim], range: (Option<i64>, Option<i64>)) -> Where {
    let mut w = Where::default();
    row_conditions(&mut w, dims, range);
    w
}

/// `k0, k1, ...` for the group keys.
fn key_names(n: usize) -> String {
    (0..n)
        .map(|i| format!("k{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every figure but tool names, grouped by `dims`. Columns: the keys, sessions, the usage sums
/// (`USAGE_SUMS`), tool errors, compactions, active days.
fn figures_sql(dims: &[Dim], where_: &str) -> String {
    let (key_cols, group) = keys_and_group(dims, Dim::sql);
    format!(
        "SELECT {key_cols}, count(DISTINCT e.file_id), {USAGE_SUMS},
                coalesce(sum(e.type = 'message' AND e.role = 'toolResult' AND e.is_error), 0),
                coalesce(sum(e.type = 'compaction'), 0),
                count(DISTINCT pidx_bucket(e.ts_ms, 'day'))
         FROM entries e JOIN sessions s ON s.file_id = e.file_id JOIN files f ON f.id = e.file_id
         WHERE {where_} {group}"
    )
}

/// The rollups' time grain (`migrations/0009_usage_rollup.sql`): a quarter hour.
const GRAIN_MS: i64 = 900_000;

/// Whether the rollups give the exact answer: the zone's days begin on a quarter hour (a fixed
/// offset may not; named zones' offsets are whole quarter hours). Range ends inside a quarter
/// hour are answered from the entries of that quarter hour (`rolled`).
fn rollups_answer(opts: &StatsOptions) -> bool {
    match &opts.zone {
        Zone::Fixed(off) => i64::from(off.local_minus_utc()) % (GRAIN_MS / 1000) == 0,
        Zone::Local | Zone::Named(_) => true,
    }
}

/// The key columns (`... AS k0, ...`, or `''` without dimensions) and the GROUP BY clause.
fn keys_and_group(dims: &[Dim], sql: fn(Dim) -> &'static str) -> (String, String) {
    if dims.is_empty() {
        return ("''".into(), String::new());
    }
    let keys = dims
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{} AS k{i}", sql(*d)))
        .collect::<Vec<_>>()
        .join(", ");
    (keys, format!("GROUP BY {}", key_names(dims.len())))
}

/// One result row: its keys (time buckets labelled), then the figures.
fn read_row(r: &rusqlite::Row, dims: &[Dim]) -> rusqlite::Result<Row> {
    let key_order: Vec<String> = dims
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Ok(match r.get_ref(i)? {
                rusqlite::types::ValueRef::Null => "-".into(),
                rusqlite::types::ValueRef::Integer(code) if d.is_time() => bucket_label(*d, code),
                _ => r.get::<_, String>(i)?,
            })
        })
        .collect::<rusqlite::Result<_>>()?;
    let n = dims.len().max(1);
    let g = |i: usize| r.get::<_, i64>(n + i);
    let mut f = Figures {
        sessions: g(0)?,
        user_messages: g(1)?,
        assistant_messages: g(2)?,
        tool_results: g(3)?,
        tool_calls: g(4)?,
        input: g(5)?,
        output: g(6)?,
        cache_read: g(7)?,
        cache_write: g(8)?,
        total_tokens: 0,
        cost: r.get(n + 9)?,
        tool_errors: g(10)?,
        compactions: g(11)?,
        active_days: g(12)?,
    };
    f.total_tokens = f.input + f.output + f.cache_read + f.cache_write;
    let key = dims
        .iter()
        .map(|d| d.name())
        .zip(key_order.iter().cloned())
        .collect();
    Ok(Row {
        key,
        key_order,
        figures: f,
    })
}

fn tool_sql(dims: &[Dim], where_: &str) -> String {
    let keys = |tool: &str| {
        dims.iter()
            .enumerate()
            .map(|(i, d)| {
                let k = if *d == Dim::Tool { tool } else { d.sql() };
                format!("{k} AS k{i}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let group = key_names(dims.len());
    format!(
        "SELECT {group}, count(DISTINCT file_id), 0, 0, sum(results), sum(calls),
                0, 0, 0, 0, 0.0, sum(errors), 0, count(DISTINCT day)
         FROM (
             SELECT {}, e.file_id AS file_id, pidx_bucket(e.ts_ms, 'day') AS day,
                    1 AS calls, 0 AS results, 0 AS errors
             FROM tool_uses t JOIN entries e ON e.rid = t.rid
             JOIN sessions s ON s.file_id = e.file_id JOIN files f ON f.id = e.file_id
             WHERE {where_}
             UNION ALL
             SELECT {}, e.file_id, pidx_bucket(e.ts_ms, 'day'), 0, 1, coalesce(e.is_error, 0)
             FROM entries e JOIN sessions s ON s.file_id = e.file_id JOIN files f ON f.id = e.file_id
             WHERE e.type = 'message' AND e.role = 'toolResult' AND {where_}
         )
         GROUP BY {group}",
        keys("t.name"),
        keys("coalesce(e.tool_name, '?')"),
    )
}

/// Figures from the local index or the team server (`--by source` there too).
///
/// # Errors
/// Index or server errors.
pub fn figures(reader: &mut Reader, opts: &StatsOptions) -> Result<Vec<Row>> {
    match reader {
        Reader::Local { conn, scope, .. } => stats(conn, scope, opts),
        Reader::Server(server) => server.stats(opts),
    }
}

/// The dimensions the team server groups by (`Dim::parse_server`).
pub const SERVER_DIMS: &str =
    "source, project, model, provider, session, tool, agent, channel, day, week, month";

/// Parses a `--by` value; the team server (`server`) also groups by `source`. The error is the
/// same sentence for both, with a hint for the two names people reach for.
///
/// # Errors
/// `Invalid` naming the dimensions there are.
pub fn parse_dim(s: &str, server: bool) -> Result<Dim> {
    let dim = if server {
        Dim::parse_server(s)
    } else {
        Dim::parse(s)
    };
    dim.ok_or_else(|| {
        let names = if server { SERVER_DIMS } else { Dim::NAMES };
        let hint = match s {
            "source" => " (the team server's: add --pg URL)",
            "cwd" | "dir" | "folder" | "repo" => " (a session's cwd is its project: --by project)",
            _ => "",
        };
        Error::Invalid(format!("--by {s}: group by one of {names}{hint}"))
    })
}
